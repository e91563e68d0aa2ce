//! Abstract values: what the compiler knows about a value before the program runs.
//!
//! The lattice, from most to least precise: `Bottom` (no value: not computed yet, or the
//! computation always raises), constants (`Int(Some(3))`), types (`Int(None)`, a tensor's dtype
//! and shape with unknown dimensions), and `Any` (nothing known: handled dynamically at run
//! time). Functions are sets of known callables.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use anfora_tensor::{DType, Tensor, TensorError};

use crate::value::{Method, Range, Slice, Value};
use crate::{GraphId, Monad, ParamRef, Prim};

/// An evaluation context: a graph instance with the abstracts of its parameters (and, through
/// its parent, of its free variables).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CtxId(pub u32);

/// A tensor's dtype and shape (`None` for a dimension known only at run time), and its value
/// when it is a small constant.
#[derive(Clone, Debug)]
pub struct TensorAbs {
    pub dtype: DType,
    pub shape: Vec<Option<usize>>,
    pub value: Option<Tensor>,
}

impl TensorAbs {
    pub fn new(dtype: DType, shape: Vec<Option<usize>>) -> TensorAbs {
        TensorAbs {
            dtype,
            shape,
            value: None,
        }
    }

    /// The shape if every dimension is known.
    pub fn known_shape(&self) -> Option<Vec<usize>> {
        self.shape.iter().copied().collect()
    }

    pub fn numel(&self) -> Option<usize> {
        self.known_shape().map(|s| s.iter().product())
    }
}

impl PartialEq for TensorAbs {
    fn eq(&self, other: &Self) -> bool {
        self.dtype == other.dtype
            && self.shape == other.shape
            && match (&self.value, &other.value) {
                (None, None) => true,
                (Some(a), Some(b)) => a.same_as(b),
                _ => false,
            }
    }
}

impl Eq for TensorAbs {}

impl Hash for TensorAbs {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.dtype.hash(state);
        self.shape.hash(state);
        self.value.is_some().hash(state);
    }
}

/// A function known at compile time.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Func {
    Prim(Prim),
    /// A closure: a graph of the module being compiled and the context its free variables are
    /// read from (`None` for graphs without free variables).
    Closure {
        graph: GraphId,
        ctx: Option<CtxId>,
    },
    /// `Partial(f, a...)`.
    Partial(Arc<Func>, Arc<[Abs]>),
    /// A tensor method bound to a tensor (`x.sum`).
    Method(Method, Arc<TensorAbs>),
}

/// An abstract value.
#[derive(Clone, Debug)]
pub enum Abs {
    /// No value yet (recursion in progress) or never a value (the operation always raises).
    Bottom,
    /// Unknown at compile time.
    Any,
    None,
    Bool(Option<bool>),
    Int(Option<i64>),
    Float(Option<f64>),
    Str(Option<Arc<str>>),
    Tuple(Arc<[Abs]>),
    List(Arc<[Abs]>),
    Tensor(Arc<TensorAbs>),
    DType(DType),
    /// One of these functions (a non-empty set).
    Func(Arc<[Func]>),
    Range(Option<Range>),
    Slice(Option<Slice>),
    Ellipsis,
    /// A local variable that is not assigned.
    Unbound,
    /// A Parameter: the tensor it holds, and which Parameter when known (its ref key).
    Ref(Arc<RefAbs>),
    /// An effect state.
    Monad(Monad),
    /// A variable shared with closures (`MakeCell`'s result): which one, by where it was
    /// made. What it holds is the interpreter's, joined over every `CellSet` of it.
    Cell(CellSite),
    /// A dict: its keys, known at compile time, and what each holds.
    Dict(Arc<[(Arc<str>, Abs)]>),
}

/// Where a cell was made: the `MakeCell` node, in the context that ran it (each call of the
/// function that owns the variable makes a new cell).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellSite {
    pub ctx: CtxId,
    pub node: crate::NodeId,
}

/// The abstract of a Parameter reference (MindSpore's `Ref[Tensor]` with its `ref_key`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RefAbs {
    /// `None` where different Parameters meet (a function called with either).
    pub param: Option<ParamRef>,
    pub dtype: DType,
    pub shape: Vec<usize>,
}

impl RefAbs {
    pub fn of(p: &ParamRef) -> RefAbs {
        RefAbs {
            param: Some(p.clone()),
            dtype: p.dtype(),
            shape: p.shape().to_vec(),
        }
    }

    /// The abstract of the value read from it.
    pub fn value(&self) -> Abs {
        Abs::tensor(TensorAbs::new(
            self.dtype,
            self.shape.iter().map(|&d| Some(d)).collect(),
        ))
    }
}

impl PartialEq for Abs {
    fn eq(&self, other: &Self) -> bool {
        use Abs::*;
        match (self, other) {
            (Bottom, Bottom)
            | (Any, Any)
            | (None, None)
            | (Ellipsis, Ellipsis)
            | (Unbound, Unbound) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => a.map(f64::to_bits) == b.map(f64::to_bits),
            (Str(a), Str(b)) => a == b,
            (Tuple(a), Tuple(b)) | (List(a), List(b)) => a == b,
            (Tensor(a), Tensor(b)) => a == b,
            (DType(a), DType(b)) => a == b,
            (Func(a), Func(b)) => a.len() == b.len() && a.iter().all(|f| b.contains(f)),
            (Range(a), Range(b)) => a == b,
            (Slice(a), Slice(b)) => a == b,
            (Ref(a), Ref(b)) => a == b,
            (Monad(a), Monad(b)) => a == b,
            (Cell(a), Cell(b)) => a == b,
            (Dict(a), Dict(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Abs {}

impl Hash for Abs {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Abs::Bool(v) => v.hash(state),
            Abs::Int(v) => v.hash(state),
            Abs::Float(v) => v.map(f64::to_bits).hash(state),
            Abs::Str(v) => v.hash(state),
            Abs::Tuple(v) | Abs::List(v) => v.hash(state),
            Abs::Tensor(t) => t.hash(state),
            Abs::DType(d) => d.hash(state),
            // Sets compare order-insensitively: hash only their size.
            Abs::Func(f) => f.len().hash(state),
            Abs::Range(r) => r.map(|r| (r.start, r.stop, r.step)).hash(state),
            Abs::Slice(s) => s.map(|s| (s.start, s.stop, s.step)).hash(state),
            Abs::Ref(r) => r.hash(state),
            Abs::Monad(m) => m.hash(state),
            Abs::Cell(c) => c.hash(state),
            Abs::Dict(items) => items.hash(state),
            _ => {}
        }
    }
}

/// Why two abstracts cannot be joined: the values of two paths are tensors of different
/// dtypes or shapes.
#[derive(Clone, Debug, PartialEq)]
pub struct JoinError {
    pub left: String,
    pub right: String,
}

impl Abs {
    pub fn func(f: Func) -> Abs {
        Abs::Func(Arc::from(vec![f]))
    }

    pub fn tensor(t: TensorAbs) -> Abs {
        Abs::Tensor(Arc::new(t))
    }

    pub fn tuple(items: Vec<Abs>) -> Abs {
        Abs::Tuple(Arc::from(items))
    }

    pub fn is_bottom(&self) -> bool {
        matches!(self, Abs::Bottom)
    }

    /// The same abstract without constant values (types only): what a loop-carried or
    /// recursive value is generalized to.
    pub fn broaden(&self) -> Abs {
        match self {
            Abs::Bool(_) => Abs::Bool(None),
            Abs::Int(_) => Abs::Int(None),
            Abs::Float(_) => Abs::Float(None),
            Abs::Str(_) => Abs::Str(None),
            Abs::Tuple(items) => Abs::Tuple(items.iter().map(Abs::broaden).collect()),
            Abs::Dict(items) => Abs::Dict(
                items
                    .iter()
                    .map(|(k, a)| (k.clone(), a.broaden()))
                    .collect(),
            ),
            Abs::List(items) => Abs::List(items.iter().map(Abs::broaden).collect()),
            Abs::Tensor(t) if t.value.is_some() => {
                Abs::tensor(TensorAbs::new(t.dtype, t.shape.clone()))
            }
            Abs::Range(_) => Abs::Range(None),
            Abs::Slice(_) => Abs::Slice(None),
            other => other.clone(),
        }
    }

    /// The least abstract covering both: `Err` when two tensors disagree on their dtype, rank
    /// or a size both know (a size known only at run time agrees with any size).
    pub fn join(&self, other: &Abs) -> Result<Abs, JoinError> {
        self.join_with(other, false)
    }

    /// Like [`Abs::join`], but tensors of the same dtype and rank join to unknown sizes where
    /// they differ (`Err` when their dtypes or ranks differ): the values a loop carries from
    /// one iteration to the next may change their sizes.
    pub fn join_sizes(&self, other: &Abs) -> Result<Abs, JoinError> {
        self.join_with(other, true)
    }

    fn join_with(&self, other: &Abs, sizes: bool) -> Result<Abs, JoinError> {
        use Abs::*;
        if self == other {
            return Ok(self.clone());
        }
        Ok(match (self, other) {
            (Bottom, x) | (x, Bottom) => x.clone(),
            (Any, _) | (_, Any) => Any,
            (Unbound, x) | (x, Unbound) => x.broaden(),
            (Bool(_), Bool(_)) => Bool(Option::None),
            (Int(_), Int(_)) => Int(Option::None),
            (Float(_), Float(_)) => Float(Option::None),
            (Str(_), Str(_)) => Str(Option::None),
            (Range(_), Range(_)) => Range(Option::None),
            (Slice(_), Slice(_)) => Slice(Option::None),
            (Tuple(a), Tuple(b)) if a.len() == b.len() => Tuple(join_all(a, b, sizes)?),
            (Dict(a), Dict(b)) if a.iter().map(|x| &x.0).eq(b.iter().map(|x| &x.0)) => {
                let keys = a.iter().map(|x| x.0.clone());
                let values: Vec<Abs> = a.iter().map(|x| x.1.clone()).collect();
                let others: Vec<Abs> = b.iter().map(|x| x.1.clone()).collect();
                Dict(
                    keys.zip(join_all(&values, &others, sizes)?.iter().cloned())
                        .collect(),
                )
            }
            (List(a), List(b)) if a.len() == b.len() => List(join_all(a, b, sizes)?),
            (Tensor(a), Tensor(b)) => {
                let same_rank = a.shape.len() == b.shape.len();
                let sizes_conflict = a
                    .shape
                    .iter()
                    .zip(b.shape.iter())
                    .any(|(x, y)| matches!((x, y), (Some(x), Some(y)) if x != y));
                if a.dtype != b.dtype || !same_rank || (!sizes && sizes_conflict) {
                    return Err(JoinError {
                        left: self.to_string(),
                        right: other.to_string(),
                    });
                }
                let shape = common_dims(&a.shape, &b.shape);
                Abs::tensor(TensorAbs::new(a.dtype, shape))
            }
            (Ref(a), Ref(b)) if a.dtype == b.dtype && a.shape == b.shape => {
                Abs::Ref(Arc::new(RefAbs {
                    param: if a.param == b.param {
                        a.param.clone()
                    } else {
                        Option::None
                    },
                    dtype: a.dtype,
                    shape: a.shape.clone(),
                }))
            }
            (Func(a), Func(b)) => {
                let mut set: Vec<self::Func> = a.to_vec();
                for f in b.iter() {
                    if !set.contains(f) {
                        set.push(f.clone());
                    }
                }
                Func(Arc::from(set))
            }
            _ => Any,
        })
    }

    /// Like [`Abs::join`], but tensors that disagree widen to unknown dimensions (same rank and
    /// dtype) or `Any`: for values that legitimately differ, such as a function's arguments.
    pub fn widen_join(&self, other: &Abs) -> Abs {
        use Abs::*;
        match (self, other) {
            (Tensor(a), Tensor(b)) if a.dtype == b.dtype && a.shape.len() == b.shape.len() => {
                let shape = common_dims(&a.shape, &b.shape);
                let value = match (&a.value, &b.value) {
                    (Some(x), Some(y)) if x.same_as(y) => Some(x.clone()),
                    _ => Option::None,
                };
                Abs::tensor(TensorAbs {
                    dtype: a.dtype,
                    shape,
                    value,
                })
            }
            (Tensor(_), Tensor(_)) => Any,
            (Tuple(a), Tuple(b)) if a.len() == b.len() => Tuple(
                a.iter()
                    .zip(b.iter())
                    .map(|(x, y)| x.widen_join(y))
                    .collect(),
            ),
            (List(a), List(b)) if a.len() == b.len() => List(
                a.iter()
                    .zip(b.iter())
                    .map(|(x, y)| x.widen_join(y))
                    .collect(),
            ),
            _ => self.join(other).unwrap_or(Any),
        }
    }

    /// A Python scalar's value, if known.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Abs::Int(Some(i)) => Some(*i),
            Abs::Bool(Some(b)) => Some(*b as i64),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Abs::Bool(b) => *b,
            _ => None,
        }
    }

    pub fn as_tensor(&self) -> Option<&TensorAbs> {
        match self {
            Abs::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// Whether this is a Python number (bool, int, float), known or not.
    pub fn is_number(&self) -> bool {
        matches!(self, Abs::Bool(_) | Abs::Int(_) | Abs::Float(_))
    }
}

fn join_all(a: &[Abs], b: &[Abs], sizes: bool) -> Result<Arc<[Abs]>, JoinError> {
    a.iter()
        .zip(b.iter())
        .map(|(x, y)| x.join_with(y, sizes))
        .collect()
}

/// The sizes two shapes of one rank agree on; unknown where they differ.
fn common_dims(a: &[Option<usize>], b: &[Option<usize>]) -> Vec<Option<usize>> {
    a.iter()
        .zip(b)
        .map(|(x, y)| if x == y { *x } else { None })
        .collect()
}

fn dims(shape: &[Option<usize>]) -> String {
    shape_text(shape, "-1", ", ")
}

/// A shape as a Python tuple, with `unknown` for unknown sizes and `sep` between sizes.
pub fn shape_text(shape: &[Option<usize>], unknown: &str, sep: &str) -> String {
    let parts: Vec<String> = shape
        .iter()
        .map(|d| d.map_or_else(|| unknown.to_string(), |d| d.to_string()))
        .collect();
    if parts.len() == 1 {
        format!("({},)", parts[0])
    } else {
        format!("({})", parts.join(sep))
    }
}

fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "Bool",
        DType::I32 => "Int32",
        DType::I64 => "Int64",
        DType::F32 => "Float32",
        DType::F64 => "Float64",
        DType::F16 => "Float16",
        DType::BF16 => "BFloat16",
        DType::I8 => "Int8",
        DType::U8 => "UInt8",
    }
}

/// MindSpore-style: `<Int64, 3>`, `<Tensor[Float32], (2, 3)>`, `<Tuple[Int64, Float64]>`.
impl fmt::Display for Abs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::deep(|| match self {
            Abs::Bottom => f.write_str("<Bottom>"),
            Abs::Any => f.write_str("<Any>"),
            Abs::None => f.write_str("<None>"),
            Abs::Bool(Some(b)) => write!(f, "<Bool, {}>", if *b { "True" } else { "False" }),
            Abs::Bool(None) => f.write_str("<Bool>"),
            Abs::Int(Some(i)) => write!(f, "<Int64, {i}>"),
            Abs::Int(None) => f.write_str("<Int64>"),
            Abs::Float(Some(x)) => write!(f, "<Float64, {}>", crate::pynum::float_repr(*x)),
            Abs::Float(None) => f.write_str("<Float64>"),
            Abs::Str(Some(s)) => write!(f, "<String, {}>", crate::pynum::str_repr(s)),
            Abs::Str(None) => f.write_str("<String>"),
            Abs::Tuple(items) | Abs::List(items) => {
                let kind = if matches!(self, Abs::Tuple(_)) {
                    "Tuple"
                } else {
                    "List"
                };
                let parts: Vec<String> = items.iter().map(|a| a.to_string()).collect();
                write!(f, "<{kind}[{}]>", parts.join(", "))
            }
            Abs::Tensor(t) => {
                write!(f, "<Tensor[{}], {}", dtype_name(t.dtype), dims(&t.shape))?;
                if let Some(v) = &t.value {
                    write!(f, ", value={}", v.to_str().replace('\n', ""))?;
                }
                f.write_str(">")
            }
            Abs::DType(d) => write!(f, "<DType, {}>", d.name()),
            Abs::Func(fs) => {
                let parts: Vec<String> = fs.iter().map(func_name).collect();
                if parts.len() == 1 {
                    write!(f, "<Func, {}>", parts[0])
                } else {
                    write!(f, "<Func, {{{}}}>", parts.join(", "))
                }
            }
            Abs::Range(_) => f.write_str("<Range>"),
            Abs::Slice(_) => f.write_str("<Slice>"),
            Abs::Ellipsis => f.write_str("<Ellipsis>"),
            Abs::Unbound => f.write_str("<Unbound>"),
            Abs::Ref(r) => {
                let shape: Vec<Option<usize>> = r.shape.iter().map(|&d| Some(d)).collect();
                write!(f, "<Ref[Tensor[{}]], {}", dtype_name(r.dtype), dims(&shape))?;
                if let Some(p) = &r.param {
                    write!(f, ", ref_key={}", p.name())?;
                }
                f.write_str(">")
            }
            Abs::Monad(m) => f.write_str(m.abstract_name()),
            Abs::Cell(_) => f.write_str("<Cell>"),
            Abs::Dict(items) => {
                let parts: Vec<String> = items.iter().map(|(k, a)| format!("{k}: {a}")).collect();
                write!(f, "<Dict{{{}}}>", parts.join(", "))
            }
        })
    }
}

fn func_name(f: &Func) -> String {
    match f {
        Func::Prim(p) => p.name().to_string(),
        Func::Closure { graph, .. } => format!("{graph}"),
        Func::Partial(inner, args) => format!("Partial({}, {} args)", func_name(inner), args.len()),
        Func::Method(m, _) => format!("Tensor.{}", m.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dtype: DType, shape: &[usize]) -> Abs {
        Abs::tensor(TensorAbs::new(
            dtype,
            shape.iter().map(|&d| Some(d)).collect(),
        ))
    }

    #[test]
    fn joins_broaden_constants_and_keep_types() {
        assert_eq!(
            Abs::Int(Some(1)).join(&Abs::Int(Some(2))).unwrap(),
            Abs::Int(None)
        );
        assert_eq!(
            Abs::Int(Some(1)).join(&Abs::Int(Some(1))).unwrap(),
            Abs::Int(Some(1))
        );
        assert_eq!(
            Abs::Int(Some(1)).join(&Abs::Float(Some(1.0))).unwrap(),
            Abs::Any
        );
        assert_eq!(Abs::Bottom.join(&Abs::Str(None)).unwrap(), Abs::Str(None));
        assert_eq!(
            Abs::Unbound.join(&Abs::Int(Some(4))).unwrap(),
            Abs::Int(None)
        );
        let a = Abs::tuple(vec![Abs::Int(Some(1)), Abs::Str(None)]);
        let b = Abs::tuple(vec![Abs::Int(Some(2)), Abs::Str(None)]);
        assert_eq!(
            a.join(&b).unwrap(),
            Abs::tuple(vec![Abs::Int(None), Abs::Str(None)])
        );
        assert_eq!(a.join(&Abs::tuple(vec![])).unwrap(), Abs::Any);
    }

    #[test]
    fn tensors_of_different_shapes_do_not_join() {
        let e = t(DType::F32, &[2, 3])
            .join(&t(DType::F32, &[3, 2]))
            .unwrap_err();
        assert_eq!(e.left, "<Tensor[Float32], (2, 3)>");
        assert_eq!(e.right, "<Tensor[Float32], (3, 2)>");
        assert!(t(DType::F32, &[2]).join(&t(DType::F64, &[2])).is_err());
        assert_eq!(
            t(DType::I64, &[4]).join(&t(DType::I64, &[4])).unwrap(),
            t(DType::I64, &[4])
        );
    }

    #[test]
    fn displays_like_mindspore() {
        assert_eq!(Abs::Int(Some(3)).to_string(), "<Int64, 3>");
        assert_eq!(Abs::Float(Some(0.5)).to_string(), "<Float64, 0.5>");
        assert_eq!(
            Abs::tuple(vec![Abs::Bool(None), t(DType::F32, &[1])]).to_string(),
            "<Tuple[<Bool>, <Tensor[Float32], (1,)>]>"
        );
        assert_eq!(Abs::func(Func::Prim(Prim::Add)).to_string(), "<Func, Add>");
    }
}

/// Largest tensor kept as a compile-time constant.
pub const MAX_CONST_ELEMENTS: usize = 64;

/// A compile-time error of a primitive: a message in numpy's words.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleError(pub String);

pub type Rule = Result<Abs, RuleError>;

pub(crate) fn err(msg: impl Into<String>) -> RuleError {
    RuleError(msg.into())
}

pub(crate) fn from_tensor_error(e: TensorError) -> RuleError {
    RuleError(e.message)
}

/// The value of a fully constant abstract.
pub fn to_value(a: &Abs) -> Option<Value> {
    Some(match a {
        Abs::None => Value::None,
        Abs::Bool(Some(b)) => Value::Bool(*b),
        Abs::Int(Some(i)) => Value::Int(*i),
        Abs::Float(Some(f)) => Value::Float(*f),
        Abs::Str(Some(s)) => Value::Str(s.clone()),
        Abs::Tuple(items) => Value::tuple(items.iter().map(to_value).collect::<Option<_>>()?),
        Abs::List(items) => Value::List(items.iter().map(to_value).collect::<Option<_>>()?),
        Abs::Tensor(t) => Value::Tensor(t.value.clone()?),
        Abs::DType(d) => Value::DType(*d),
        Abs::Func(fs) if fs.len() == 1 => match &fs[0] {
            Func::Prim(p) => Value::Prim(*p),
            _ => return None,
        },
        Abs::Range(Some(r)) => Value::Range(*r),
        Abs::Slice(Some(s)) => Value::Slice(std::rc::Rc::new(*s)),
        Abs::Ellipsis => Value::Ellipsis,
        _ => return None,
    })
}

/// The abstract of a runtime value (tensors keep their value only when small).
pub fn from_value(v: &Value) -> Abs {
    match v {
        Value::None => Abs::None,
        Value::Bool(b) => Abs::Bool(Some(*b)),
        Value::Int(i) => Abs::Int(Some(*i)),
        // A NaN is a new object at each evaluation (see pynum::fresh_nan): never a constant.
        Value::Float(f) if f.is_nan() => Abs::Float(None),
        Value::Float(f) => Abs::Float(Some(*f)),
        Value::Str(s) => Abs::Str(Some(s.clone())),
        Value::Tuple(items) => Abs::Tuple(items.iter().map(from_value).collect()),
        Value::List(items) => Abs::List(items.iter().map(from_value).collect()),
        Value::Tensor(t) => Abs::tensor(TensorAbs {
            dtype: t.dtype(),
            shape: t.shape().iter().map(|&d| Some(d)).collect(),
            value: (t.numel() <= MAX_CONST_ELEMENTS).then(|| t.clone()),
        }),
        Value::DType(d) => Abs::DType(*d),
        Value::Prim(p) => Abs::func(Func::Prim(*p)),
        Value::Range(r) => Abs::Range(Some(*r)),
        Value::Slice(s) => Abs::Slice(Some(**s)),
        Value::Ellipsis => Abs::Ellipsis,
        Value::Unbound => Abs::Unbound,
        Value::Ref(r) => Abs::Ref(Arc::new(crate::abs::RefAbs::of(r))),
        Value::Monad(m) => Abs::Monad(*m),
        Value::Dict(d) => Abs::Dict(
            d.items
                .iter()
                .map(|(k, v)| (k.clone(), from_value(v)))
                .collect(),
        ),
        Value::Closure(_) | Value::Partial(_) | Value::Method(_) | Value::Cell(_) => Abs::Any,
    }
}
