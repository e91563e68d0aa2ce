//! Runtime values of the reference VM and their Python-level behaviour: type names, truth,
//! `str()`/`repr()`, equality.

use std::rc::Rc;
use std::sync::Arc;

use crate::{Const, GraphId, Monad, ParamRef, Prim};
use anfora_tensor::{DType, Scalar, Tensor};

use crate::pynum::{PyErr, float_repr, str_repr};

/// A tensor method bound to its tensor (`x.sum`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    Reshape,
    Transpose,
    /// PyTorch's `x.permute(*axes)`: `transpose` with the axes required.
    Permute,
    Astype,
    Item,
}

impl Method {
    /// The reduction primitive a reduction method calls.
    pub fn reduction(self) -> Option<Prim> {
        Some(match self {
            Method::Sum => Prim::ReduceSum,
            Method::Mean => Prim::ReduceMean,
            Method::Max => Prim::ReduceMax,
            Method::Min => Prim::ReduceMin,
            Method::Prod => Prim::ReduceProd,
            _ => return None,
        })
    }

    /// Whether the method returns a view of the tensor (numpy's `reshape`, `transpose`).
    pub fn is_view(self) -> bool {
        matches!(self, Method::Reshape | Method::Transpose | Method::Permute)
    }

    pub fn from_name(name: &str) -> Option<Method> {
        Some(match name {
            "sum" => Method::Sum,
            "mean" => Method::Mean,
            "max" => Method::Max,
            "min" => Method::Min,
            "prod" => Method::Prod,
            "reshape" => Method::Reshape,
            "transpose" => Method::Transpose,
            "permute" => Method::Permute,
            "astype" => Method::Astype,
            "item" => Method::Item,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::Sum => "sum",
            Method::Mean => "mean",
            Method::Max => "max",
            Method::Min => "min",
            Method::Prod => "prod",
            Method::Reshape => "reshape",
            Method::Transpose => "transpose",
            Method::Permute => "permute",
            Method::Astype => "astype",
            Method::Item => "item",
        }
    }
}

/// A function value: a graph and the values of its free variables, copied when the closure is
/// created (values are immutable, so copying them is the same as sharing the variables).
#[derive(Debug)]
pub struct Closure {
    pub graph: GraphId,
    pub captures: Rc<[Value]>,
}

#[derive(Debug)]
pub struct PartialApp {
    pub func: Value,
    pub args: Vec<Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub start: i64,
    pub stop: i64,
    pub step: i64,
}

impl Range {
    /// Number of items (i128: `range(-2**63, 2**63 - 1)` has more than i64::MAX).
    pub fn len(&self) -> i128 {
        let (lo, hi, step) = (self.start as i128, self.stop as i128, self.step as i128);
        if step > 0 && lo < hi {
            (hi - lo - 1) / step + 1
        } else if step < 0 && lo > hi {
            (lo - hi - 1) / (-step) + 1
        } else {
            0
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: i64) -> i64 {
        self.start + i * self.step
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    pub start: Option<i64>,
    pub stop: Option<i64>,
    pub step: Option<i64>,
}

#[derive(Clone, Debug)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Arc<str>),
    Tuple(Rc<[Value]>),
    List(Rc<[Value]>),
    Tensor(Tensor),
    DType(DType),
    Prim(Prim),
    Closure(Rc<Closure>),
    Partial(Rc<PartialApp>),
    Method(Rc<(Method, Tensor)>),
    Range(Range),
    /// Boxed: slices are rare, and keeping them out of line keeps every value 32 bytes.
    Slice(Rc<Slice>),
    Ellipsis,
    /// A local variable that has not been assigned; only `CheckBound` sees it.
    Unbound,
    /// A Parameter (by reference). Primitives read it where they need a value.
    Ref(ParamRef),
    /// An effect state (`U` or `IO`); carries no data.
    Monad(Monad),
    /// A variable shared between a function and the closures it creates (CPython's cell):
    /// `CellGet` reads what the last `CellSet` stored, `Unbound` before the first.
    Cell(Rc<std::cell::RefCell<Value>>),
    /// A dict with string keys, in insertion order (a function's `**kwargs`, a display
    /// `{'lr': 0.1}`). Immutable: anfora has no statement that changes a dict in place.
    Dict(Rc<Dict>),
}

/// The items of a dict: string keys, each once, in insertion order.
#[derive(Clone, Debug, Default)]
pub struct Dict {
    pub items: Vec<(Arc<str>, Value)>,
}

impl Dict {
    /// A dict of `items`, where a later duplicate key replaces the earlier value in its place
    /// (Python's display and `dict.update`).
    pub fn from_items(items: impl IntoIterator<Item = (Arc<str>, Value)>) -> Dict {
        let mut d = Dict::default();
        for (k, v) in items {
            d.insert(k, v);
        }
        d
    }

    pub fn insert(&mut self, k: Arc<str>, v: Value) {
        match self.items.iter_mut().find(|(key, _)| *key == k) {
            Some(slot) => slot.1 = v,
            None => self.items.push((k, v)),
        }
    }

    pub fn get(&self, k: &str) -> Option<&Value> {
        self.items
            .iter()
            .find(|(key, _)| &**key == k)
            .map(|(_, v)| v)
    }
}

impl Drop for Value {
    /// Values nest without bound (a tuple grown in a loop, a chain of closures built by
    /// `compose`); dropping them recursively could overflow the stack. Children of uniquely
    /// owned containers are moved to a worklist instead, so every drop is shallow.
    #[inline]
    fn drop(&mut self) {
        if self.is_container() {
            drop_nested(self);
        }
    }
}

#[inline(never)]
fn drop_nested(v: &mut Value) {
    let mut stack = Vec::new();
    take_children(v, &mut stack);
    while let Some(mut v) = stack.pop() {
        take_children(&mut v, &mut stack);
    }
}

impl Value {
    #[inline]
    fn is_container(&self) -> bool {
        matches!(
            self,
            Value::Tuple(_)
                | Value::List(_)
                | Value::Closure(_)
                | Value::Partial(_)
                | Value::Dict(_)
        )
    }
}

/// Moves the container children of `v` (if `v` is their only owner) into `out`.
fn take_children(v: &mut Value, out: &mut Vec<Value>) {
    let take = |items: &mut [Value], out: &mut Vec<Value>| {
        for x in items {
            if x.is_container() {
                out.push(std::mem::replace(x, Value::None));
            }
        }
    };
    match v {
        Value::Tuple(rc) | Value::List(rc) => {
            if let Some(items) = Rc::get_mut(rc) {
                take(items, out);
            }
        }
        Value::Closure(c) => {
            if let Some(items) = Rc::get_mut(c).and_then(|c| Rc::get_mut(&mut c.captures)) {
                take(items, out);
            }
        }
        Value::Partial(p) => {
            if let Some(p) = Rc::get_mut(p) {
                take(std::slice::from_mut(&mut p.func), out);
                take(&mut p.args, out);
            }
        }
        Value::Dict(d) => {
            if let Some(d) = Rc::get_mut(d) {
                for (_, v) in &mut d.items {
                    take(std::slice::from_mut(v), out);
                }
            }
        }
        _ => {}
    }
}

/// The most items a tuple or list folded into a constant may hold (see
/// [`Value::too_large_to_fold`]).
pub const MAX_FOLDED_ITEMS: usize = 1 << 16;

impl Value {
    /// A float made by an operation: a NaN gets an identity of its own ([`pynum::fresh_nan`]).
    #[inline]
    pub fn new_float(f: f64) -> Value {
        Value::Float(crate::pynum::fresh_nan(f))
    }

    /// Whether `self` is or holds a NaN float, which must not become a compile-time constant.
    pub fn holds_nan(&self) -> bool {
        !self.all_nested(|v| !matches!(v, Value::Float(f) if f.is_nan()))
    }

    /// Whether `self` holds more than [`MAX_FOLDED_ITEMS`] tuple or list items (nested ones
    /// included): such a value stays a run-time value rather than a constant, whose type
    /// would list every item.
    pub fn too_large_to_fold(&self) -> bool {
        let mut budget = MAX_FOLDED_ITEMS;
        !self.all_nested(|v| match v {
            Value::Tuple(items) | Value::List(items) => budget
                .checked_sub(items.len())
                .map(|left| budget = left)
                .is_some(),
            _ => true,
        })
    }

    /// Whether `keep` holds for `self` and every tuple or list item in it, however deeply
    /// nested (a work list, not a recursion); stops at the first that fails.
    fn all_nested(&self, mut keep: impl FnMut(&Value) -> bool) -> bool {
        let mut stack = vec![self];
        while let Some(v) = stack.pop() {
            if !keep(v) {
                return false;
            }
            if let Value::Tuple(items) | Value::List(items) = v {
                stack.extend(items.iter());
            }
        }
        true
    }

    pub fn tuple(items: Vec<Value>) -> Value {
        Value::Tuple(Rc::from(items))
    }

    pub fn str(s: &str) -> Value {
        Value::Str(Arc::from(s))
    }

    /// Python's `type(x).__name__`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Tuple(_) => "tuple",
            Value::List(_) => "list",
            Value::Tensor(_) => "Tensor",
            Value::DType(_) => "dtype",
            Value::Prim(p) if p.is_type() => "type",
            Value::Prim(_) => "builtin_function_or_method",
            Value::Closure(_) | Value::Partial(_) => "function",
            Value::Method(_) => "method",
            Value::Range(_) => "range",
            Value::Slice(_) => "slice",
            Value::Ellipsis => "ellipsis",
            Value::Unbound => "unbound",
            Value::Ref(_) => "Parameter",
            Value::Monad(_) => "monad",
            Value::Cell(_) => "cell",
            Value::Dict(_) => "dict",
        }
    }

    /// Whether the value holds no heap data (dropping it does nothing).
    #[inline]
    pub fn owns_nothing(&self) -> bool {
        matches!(
            self,
            Value::None
                | Value::Bool(_)
                | Value::Int(_)
                | Value::Float(_)
                | Value::DType(_)
                | Value::Prim(_)
                | Value::Range(_)
                | Value::Ellipsis
                | Value::Unbound
                | Value::Monad(_)
        )
    }

    /// Moves the tensor out of a tensor value (values implement `Drop`, so a pattern cannot).
    pub fn into_tensor(self) -> Result<Tensor, Value> {
        if !matches!(self, Value::Tensor(_)) {
            return Err(self);
        }
        let this = std::mem::ManuallyDrop::new(self);
        match &*this {
            // SAFETY: `this` is never used or dropped again, so the tensor is moved out exactly
            // once; a tensor value owns nothing besides the tensor.
            Value::Tensor(t) => Ok(unsafe { std::ptr::read(t) }),
            _ => unreachable!("checked above"),
        }
    }

    pub fn as_scalar(&self) -> Option<Scalar> {
        match self {
            Value::Bool(b) => Some(Scalar::Bool(*b)),
            Value::Int(i) => Some(Scalar::Int(*i)),
            Value::Float(f) => Some(Scalar::Float(*f)),
            _ => None,
        }
    }

    pub fn from_scalar(s: Scalar) -> Value {
        match s {
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::Int(i) => Value::Int(i),
            Scalar::Float(f) => Value::Float(f),
        }
    }

    /// An int for indexing (bools count, as in Python).
    pub fn as_index(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }

    pub fn is_callable(&self) -> bool {
        matches!(
            self,
            Value::Prim(_) | Value::Closure(_) | Value::Partial(_) | Value::Method(_)
        )
    }
}

fn seq_repr(out: &mut String, items: &[Value], open: char, close: char, single_comma: bool) {
    crate::deep(|| seq_repr_inner(out, items, open, close, single_comma))
}

fn seq_repr_inner(out: &mut String, items: &[Value], open: char, close: char, single_comma: bool) {
    out.push(open);
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&repr(v));
    }
    if single_comma && items.len() == 1 {
        out.push(',');
    }
    out.push(close);
}

fn prim_repr(p: Prim) -> String {
    if p.is_type() {
        return match p {
            Prim::TensorType => "<class 'anfora.Tensor'>".into(),
            _ => format!("<class '{}'>", p.name()),
        };
    }
    let name = p.python_name();
    if name.starts_with("ops.") {
        format!("<function anfora.{name}>")
    } else {
        format!("<built-in function {name}>")
    }
}

/// Python's `repr()`.
pub fn repr(v: &Value) -> String {
    match v {
        Value::Str(s) => str_repr(s),
        Value::Tensor(t) => t.tensor_repr(),
        Value::Ref(p) => p.get().tensor_repr(),
        Value::DType(d) => match d {
            DType::Bool => "anfora.bool_".into(),
            d => format!("anfora.{}", d.name()),
        },
        other => to_str(other),
    }
}

/// Python's `str()`.
pub fn to_str(v: &Value) -> String {
    match v {
        Value::None => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => float_repr(*f),
        Value::Str(s) => s.to_string(),
        Value::Tuple(items) => {
            let mut s = String::new();
            seq_repr(&mut s, items, '(', ')', true);
            s
        }
        Value::List(items) => {
            let mut s = String::new();
            seq_repr(&mut s, items, '[', ']', false);
            s
        }
        Value::Tensor(t) => t.to_str(),
        Value::DType(d) => d.name().into(),
        Value::Prim(p) => prim_repr(*p),
        Value::Closure(_) | Value::Partial(_) => "<function>".into(),
        Value::Method(m) => format!("<bound method Tensor.{}>", m.0.name()),
        Value::Range(r) => {
            if r.step == 1 {
                format!("range({}, {})", r.start, r.stop)
            } else {
                format!("range({}, {}, {})", r.start, r.stop, r.step)
            }
        }
        Value::Slice(s) => {
            let part = |x: Option<i64>| x.map(|v| v.to_string()).unwrap_or_else(|| "None".into());
            format!(
                "slice({}, {}, {})",
                part(s.start),
                part(s.stop),
                part(s.step)
            )
        }
        Value::Ellipsis => "Ellipsis".into(),
        Value::Unbound => "<unbound>".into(),
        // A Parameter prints as its current value (it stands for a tensor, as numpy arrays do
        // in the CPython oracle).
        Value::Ref(p) => p.get().to_str(),
        Value::Monad(m) => m.dump_name().into(),
        Value::Cell(_) => "<cell>".into(),
        Value::Dict(d) => crate::deep(|| {
            let items: Vec<String> = d
                .items
                .iter()
                .map(|(k, v)| format!("{}: {}", str_repr(k), repr(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }),
    }
}

/// Converts an IR constant to a value; `closure` makes the function value of a graph.
pub fn from_const(c: &Const, closure: &mut dyn FnMut(GraphId) -> Value) -> Value {
    crate::deep(|| from_const_inner(c, closure))
}

fn from_const_inner(c: &Const, closure: &mut dyn FnMut(GraphId) -> Value) -> Value {
    match c {
        Const::None => Value::None,
        Const::Bool(b) => Value::Bool(*b),
        Const::Int(i) => Value::Int(*i),
        Const::Float(f) => Value::Float(*f),
        Const::Str(s) => Value::Str(s.clone()),
        Const::Tuple(items) => Value::tuple(items.iter().map(|c| from_const(c, closure)).collect()),
        Const::List(items) => Value::List(items.iter().map(|c| from_const(c, closure)).collect()),
        Const::Tensor(t) => Value::Tensor(t.clone()),
        Const::DType(d) => Value::DType(*d),
        Const::Prim(p) => Value::Prim(*p),
        Const::Graph(g) => closure(*g),
        Const::Ellipsis => Value::Ellipsis,
        Const::Ref(p) => Value::Ref(p.clone()),
        Const::Monad(m) => Value::Monad(*m),
        // The resolve stage leaves none of these; treat a stray one as unassigned.
        Const::Unbound | Const::Symbol { .. } | Const::Namespace(_) | Const::HostObject(_) => {
            Value::Unbound
        }
    }
}

/// Converts a value back to a constant, when it is one (module-level globals become constants
/// of the functions that read them).
pub fn to_const(v: &Value) -> Option<Const> {
    crate::deep(|| to_const_inner(v))
}

fn to_const_inner(v: &Value) -> Option<Const> {
    Some(match v {
        Value::None => Const::None,
        Value::Bool(b) => Const::Bool(*b),
        Value::Int(i) => Const::Int(*i),
        Value::Float(f) => Const::Float(*f),
        Value::Str(s) => Const::Str(s.clone()),
        Value::Tuple(items) => Const::Tuple(items.iter().map(to_const).collect::<Option<_>>()?),
        Value::List(items) => Const::List(items.iter().map(to_const).collect::<Option<_>>()?),
        Value::Tensor(t) => Const::Tensor(t.clone()),
        Value::DType(d) => Const::DType(*d),
        Value::Prim(p) => Const::Prim(*p),
        Value::Closure(c) if c.captures.is_empty() => Const::Graph(c.graph),
        Value::Ellipsis => Const::Ellipsis,
        Value::Ref(p) => Const::Ref(p.clone()),
        Value::Monad(m) => Const::Monad(*m),
        _ => return None,
    })
}

pub type OpResult = Result<Value, PyErr>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_stay_small() {
        // Registers of the compiled executor are values: every byte counts in hot loops.
        assert_eq!(std::mem::size_of::<Value>(), 32);
    }

    #[test]
    fn string_repr_picks_quotes_and_escapes() {
        assert_eq!(str_repr("abc"), "'abc'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("say \"hi\""), "'say \"hi\"'");
        assert_eq!(str_repr("both ' and \""), "'both \\' and \"'");
        assert_eq!(str_repr("a\nb\\"), "'a\\nb\\\\'");
        assert_eq!(str_repr("\x01é\u{a0}"), "'\\x01é\\xa0'");
    }

    #[test]
    fn containers_print_like_python() {
        let t = Value::tuple(vec![Value::Int(1), Value::str("a"), Value::Float(2.0)]);
        assert_eq!(to_str(&t), "(1, 'a', 2.0)");
        assert_eq!(to_str(&Value::tuple(vec![Value::None])), "(None,)");
        assert_eq!(to_str(&Value::tuple(vec![])), "()");
        assert_eq!(
            to_str(&Value::List(Rc::from(vec![Value::Bool(true)]))),
            "[True]"
        );
        assert_eq!(repr(&Value::str("x")), "'x'");
        assert_eq!(to_str(&Value::str("x")), "x");
        assert_eq!(to_str(&Value::Prim(Prim::IntType)), "<class 'int'>");
        assert_eq!(to_str(&Value::Prim(Prim::Len)), "<built-in function len>");
        assert_eq!(repr(&Value::DType(DType::F32)), "anfora.float32");
        assert_eq!(to_str(&Value::DType(DType::Bool)), "bool");
        let r = Range {
            start: 0,
            stop: 10,
            step: 3,
        };
        assert_eq!(to_str(&Value::Range(r)), "range(0, 10, 3)");
    }

    #[test]
    fn range_lengths() {
        let r = |start, stop, step| Range { start, stop, step }.len();
        assert_eq!(r(0, 10, 3), 4);
        assert_eq!(r(10, 0, -3), 4);
        assert_eq!(r(0, 0, 1), 0);
        assert_eq!(r(5, 0, 1), 0);
        assert_eq!(r(i64::MIN, i64::MAX, 1), (1i128 << 64) - 1);
        assert_eq!(r(-5, 5, 1), 10);
    }
}
