//! The structure of programs: branches, closures, tuples and lists, indexing, unpacking and
//! iteration, identity and membership, attribute access, and the checks and exceptions of
//! Python's statements.

use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;

use crate::abs::{Abs, Func, Rule};
use crate::args::int_arg;
use crate::def::{Backward, EvalFn, InferFn, Kernels, PrimDef, Py, never, primitives};
use crate::emit::{Call, Emit, Grads, int};
use crate::indexing::{inplace_cast, inplace_cast_abs, setitem, setitem_abs};
use crate::prim::{Effects, Prim, Refs};
use crate::pynum::{PyErr, overflow, type_error};
use crate::python::{
    contains, element_abs, getattr, getattr_abs, getitem, getitem_abs, items, items_abs, iter_len,
    iter_len_abs, not_iterable, truth, truth_abs, unpack, unpack_at_least,
};
use crate::value::{OpResult, PartialApp, Slice, Value, to_str};

primitives! {
    family structure = 0;

    /// `Switch(cond, f, g)` returns `f` if `cond` else `g`; the caller applies the result.
    Switch = PrimDef::new("Switch", "(cond, true_branch, false_branch)", switch_abs, switch,
        Backward::Zero)
        .raising(never).with_refs(Refs::AllButFirst).unfoldable().lazy().viewing();
    /// `Partial(f, a...)` binds leading arguments; its sensitivity is that of its bound
    /// arguments.
    Partial = PrimDef::new("Partial", "(*args)", partial_abs, partial,
        Backward::Rule(|e, c| { Some(items_back(e, c, 1)) }))
        .raising(never).with_effects(Effects::PROPAGATE).with_refs(Refs::All).unfoldable().opaque();
    MakeTuple = sequence("MakeTuple", |_, a| Ok(Abs::tuple(a.to_vec())),
        |_, a, _| Ok(Value::tuple(a.to_vec())));
    MakeList = sequence("MakeList", |_, a| Ok(Abs::List(Arc::from(a.to_vec()))),
        |_, a, _| Ok(Value::List(Rc::from(a.to_vec()))));
    /// `TupleGetItem(t, i)` with a constant index, made by unpacking.
    TupleGetItem = PrimDef::new("TupleGetItem", "(obj, index)", item_abs, item,
        Backward::Rule(item_back))
        .raising(never).passing_values().labelled("index").viewing();
    /// `obj[index]`.
    GetItem = PrimDef::new("GetItem", "(obj, index)", item_abs, item, Backward::Rule(item_back))
        .tensor_kernel().passing_values().labelled("index").viewing();
    /// `SetItem(obj, index, value)`: the value `obj[index] = value` leaves in `obj`, as a new
    /// value (the IR is pure). Tensors: numpy's assignment (basic, integer-array and mask
    /// indices; `value` broadcast and cast unsafely to obj's dtype; the last write wins);
    /// lists: Python's (slices may change the length); other values raise TypeError.
    SetItem = PrimDef::new("SetItem", "(obj, index, value)",
        |_, a| setitem_abs(&a[0], &a[1], &a[2]), |_, a, _| setitem(&a[0], &a[1], &a[2]),
        Backward::Rule(setitem_back))
        .with_kernels(Kernels::Owned(setitem_owned)).passing_values()
        .labelled("item assignment")
        .called(&[Py::Op("setitem")]);
    /// `InplaceCast(old, new)`: what numpy's in-place `old op= v` leaves in `old`, given
    /// `new = old op v`: `new` cast to old's dtype (same_kind) when `old` is a tensor (of
    /// new's shape), else `new` (Python rebinds).
    InplaceCast = PrimDef::new("InplaceCast", "(old, new)",
        |_, a| inplace_cast_abs(&a[0], &a[1]), |_, a, _| inplace_cast(&a[0], &a[1]),
        Backward::Rule(inplace_cast_back))
        .tensor_kernel().passing_values().labelled("in-place operation");
    MakeSlice = PrimDef::new("MakeSlice", "(start, stop, step)", make_slice_abs,
        |_, a, _| make_slice(a), Backward::Zero);
    /// Python truthiness of a condition (one-element tensors allowed): returns a bool.
    Truth = PrimDef::new("Truth", "(obj)", |_, a| Ok(truth_abs(&a[0])),
        |_, a, _| Ok(Value::Bool(truth(&a[0])?)), Backward::Zero)
        .raising(unless_plain);
    /// `not x`.
    Not = PrimDef::new("Not", "(x)", not_abs, |_, a, _| Ok(Value::Bool(!truth(&a[0])?)),
        Backward::Zero)
        .raising(unless_plain);
    /// `CallKw(f, names, args...)`: a call with keyword arguments whose callee is only known at
    /// run time; the last `len(names)` arguments are the keyword values.
    CallKw = PrimDef::new("CallKw", "(func, names, *args)", |_, _| Ok(Abs::Any),
        |_, _, _| Err(("SystemError", "CallKw is executed by the machine".into())),
        Backward::Refused(
            "a keyword call of a function value: its binding is only known at run time",
        ))
        .with_refs(Refs::All).unfoldable().opaque();
    /// `CallStar(f, names, args, kwvalues...)`: a call with star-arguments (`f(a, *t, k=v)`):
    /// `args` is the tuple of all positional arguments, the rest as in `CallKw`. Inference
    /// turns it into a plain call (or a `CallKw`) once the tuple's length is known.
    CallStar = PrimDef::new("CallStar", "(func, names, args, *kwargs)", |_, _| Ok(Abs::Any),
        |_, _, _| Err(("SystemError", "CallStar is executed by the machine".into())),
        Backward::Refused(
            "a call with star-arguments of a function value binds only when it runs: call the \
             function by its name",
        ))
        .with_refs(Refs::All).unfoldable().opaque();
    /// `StarBind(f, names, args, kwvalues...)`: the arguments of `CallStar(f, names, args,
    /// kwvalues...)` bound to the signature of `f`, a function named in the program: a tuple
    /// with one item per parameter. The grad stage calls `f` with its items, so that a star call
    /// differentiates as a plain call; specialization makes it a `MakeTuple` (or the TypeError
    /// of arguments that do not bind).
    StarBind = PrimDef::new("StarBind", "(func, names, args, *kwargs)", |_, _| Ok(Abs::Any),
        |_, _, _| Err(("SystemError", "StarBind is bound at compile time".into())),
        Backward::Rule(|e, c| Some(bind_back(e, c, Prim::StarBindGrad, 2))))
        .with_refs(Refs::All).unfoldable().passing_values();
    /// `StarBindGrad(f, names, args, d, kwvalues...)`: from `d`, the sensitivity of
    /// `StarBind`'s tuple, those of its arguments: `(args', kwvalue'...)`.
    StarBindGrad = PrimDef::new("StarBindGrad", "(func, names, args, d, *kwargs)",
        |_, _| Ok(Abs::Any),
        |_, _, _| Err(("SystemError", "StarBindGrad is bound at compile time".into())),
        Backward::Refused("the second derivative of a call with star-arguments"))
        .unfoldable().passing_value_of(3);
    /// `GetAttr(obj, "name")`. In differentiated code, a Parameter read through an object used
    /// as a value gets the read's sensitivity (`AttrGrad`).
    GetAttr = PrimDef::new("GetAttr", "(obj, name)", attr_abs, attr,
        Backward::Rule(|e, c| Some(c.first(e, |e| e.op(Prim::AttrGrad, &[c.x[0], c.x[1], c.d])))))
        .with_refs(Refs::First);
    /// `AttrGrad(obj, name, d)`: the sensitivity of `obj` from `d`, that of `obj.name`. Where
    /// `obj` is the grad stage's copy of an object, partially applied to its lifted weights, and
    /// the attribute is one of those weights: the tuple of the bound values' sensitivities, `d`
    /// at that weight's place (inference and specialization make it). Nothing otherwise.
    AttrGrad = PrimDef::new("AttrGrad", "(obj, name, d)", |_, _| Ok(Abs::None),
        |_, _, _| Ok(Value::None),
        Backward::Refused("the second derivative of an attribute read through an object"))
        .with_refs(Refs::First).passing_value_of(2);
    /// `CheckBound(x, "name", is_free)` raises UnboundLocalError (or NameError for a free
    /// variable of a closure) if `x` is the Unbound marker, else returns `x`. The check is on
    /// the primal; the sensitivity passes through.
    CheckBound = PrimDef::new("CheckBound", "(value, name, is_free)", check_bound_abs,
        |_, a, _| check_bound(a), Backward::First(|_, c| c.d))
        .with_refs(Refs::All).unfoldable().opaque().passing_values().viewing();
    /// `Unpack(seq, n)` checks that `seq` has `n` items and returns them as a tuple.
    Unpack = PrimDef::new("Unpack", "(seq, n)", |_, a| Ok(unpack_abs(&a[0], &a[1])),
        |_, a, _| unpack(&a[0], a[1].as_index().unwrap_or(0)), Backward::Rule(unpack_back))
        .passing_values().viewing();
    /// `UnpackAtLeast(seq, n)`: the items of `seq` as a tuple, at least `n` of them (Python's
    /// `a, *b, c = seq` with `n` targets besides the starred one).
    UnpackAtLeast = PrimDef::new("UnpackAtLeast", "(seq, n)",
        |_, a| Ok(unpack_at_least_abs(&a[0], &a[1])),
        |_, a, _| unpack_at_least(&a[0], a[1].as_index().unwrap_or(0)), Backward::Rule(unpack_back))
        .passing_values().viewing();
    /// `Raise("ExcType", message)`.
    Raise = PrimDef::new("Raise", "(kind, message)", |_, _| Ok(Abs::Bottom), |_, a, _| raise(a),
        Backward::Zero)
        .with_effects(Effects::IO).opaque();
    /// `Assert(cond, message)`: raises AssertionError when `cond` is false.
    Assert = PrimDef::new("Assert", "(cond, message)", |_, _| Ok(Abs::None), |_, a, _| assert(a),
        Backward::Zero)
        .with_effects(Effects::IO).opaque();
    /// `Enumerate(seq, start)`: tuple of `(start + i, item)` pairs.
    Enumerate = PrimDef::new("Enumerate", "(iterable, start=0)", enumerate_abs,
        |_, a, _| enumerate(a), Backward::Zero)
        .passing_values().viewing();
    /// `Zip(a, b, ...)`: tuple of item tuples, as long as the shortest input.
    Zip = PrimDef::new("Zip", "(*args)", zip_abs, |_, a, _| zip(a),
        Backward::Refused(
            "sequence conversions of the builtins are not differentiated (use tuples directly)",
        ))
        .passing_values().viewing();
    /// Length of a sequence a `for` loop iterates over ("'int' object is not iterable").
    IterLen = PrimDef::new("IterLen", "(obj)", |_, a| iter_len_abs(&a[0]),
        |_, a, _| iter_len(&a[0]).map(Value::Int), Backward::Zero);
    /// The sequence a `for` loop walks: a dict's keys (a tuple of strings, each then a
    /// constant), anything else itself. The optimizer drops it where the value is no dict.
    IterSequence = PrimDef::new("IterSequence", "(iterable)", |_, a| Ok(iter_sequence_abs(&a[0])),
        |_, a, _| Ok(iter_sequence(&a[0])), Backward::First(|_, c| c.d))
        .passing_values().viewing();
    /// `x is y`.
    Is = identity("Is");
    /// `x is not y`.
    IsNot = identity("IsNot");
    /// `x in y`.
    In = membership("In");
    /// `x not in y`.
    NotIn = membership("NotIn");
}

/// A tuple or list display: its items' sensitivities are those of the items.
const fn sequence(name: &'static str, infer: InferFn, eval: EvalFn) -> PrimDef {
    let backward = Backward::Rule(|e, c| Some(items_back(e, c, 0)));
    PrimDef::new(name, "(*args)", infer, eval, backward)
        .raising(never)
        .with_refs(Refs::All)
        .lazy()
}

/// `is` or `is not`: compares any values, Parameters included.
const fn identity(name: &'static str) -> PrimDef {
    PrimDef::new(name, "(x, y)", is_abs, is, Backward::Zero)
        .raising(never)
        .with_refs(Refs::All)
}

/// `in` or `not in`.
const fn membership(name: &'static str) -> PrimDef {
    PrimDef::new(
        name,
        "(x, y)",
        |_, _| Ok(Abs::Bool(None)),
        contains_eval,
        Backward::Zero,
    )
}

fn contains_eval(p: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let found = contains(&a[1], &a[0])?;
    Ok(Value::Bool(found != (p == Prim::NotIn)))
}

fn switch(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    Ok(if truth(&a[0])? {
        a[1].clone()
    } else {
        a[2].clone()
    })
}

fn item_abs(_: Prim, a: &[Abs]) -> Rule {
    getitem_abs(&a[0], &a[1])
}

fn item(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    getitem(&a[0], &a[1])
}

/// The rule of `StarBind`/`DictBind`: `grad(f, ..., d, ...)` gives the sensitivities of the
/// arguments from index `first` on, in order (`grad` takes `d` where the tuple ends, before
/// the keyword values).
pub(crate) fn bind_back(e: &mut dyn Emit, c: &Call, grad: Prim, first: usize) -> Grads {
    let mut g = c.none();
    if !(first..c.x.len()).any(|i| c.need(i)) {
        return g;
    }
    let split = first + 1;
    let mut ins = c.x[..split].to_vec();
    ins.push(c.d);
    ins.extend(&c.x[split..]);
    let grads = e.op(grad, &ins);
    for (i, slot) in g.iter_mut().enumerate().skip(first) {
        if c.need(i) {
            let k = e.konst(crate::Const::Int((i - first) as i64));
            *slot = Some(e.op(Prim::GradItem, &[grads, k]));
        }
    }
    g
}

fn iter_sequence_abs(a: &Abs) -> Abs {
    match a {
        Abs::Dict(items) => Abs::tuple(
            items
                .iter()
                .map(|(k, _)| Abs::Str(Some(k.clone())))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn iter_sequence(v: &Value) -> Value {
    match v {
        Value::Dict(d) => {
            Value::tuple(d.items.iter().map(|(k, _)| Value::Str(k.clone())).collect())
        }
        other => other.clone(),
    }
}

fn unpack_back(_: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let mut g = c.none();
    g[0] = Some(c.d);
    Some(g)
}

/// `SetItem(obj, index, value)`: obj's sensitivity is `d` with the assigned positions zeroed,
/// value's is `d[index]` summed back to value's shape (`SetItemGrad`: where an index repeats,
/// only the element written last, the one stored, gets it). The index gets none.
/// `SetItem` consuming the object: written in place when nothing else holds it.
fn setitem_owned(_: Prim, a: &mut [Value], _: &mut dyn Write) -> OpResult {
    match a {
        [obj, idx, value] => {
            crate::indexing::setitem_owned(std::mem::replace(obj, Value::None), idx, value)
        }
        _ => Err(type_error("SetItem takes three arguments")),
    }
}

fn setitem_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let mut g = c.none();
    if !(c.need(0) || c.need(2)) {
        return Some(g);
    }
    // The sensitivity may arrive unbroadcast (a reduction's): give it the output's shape.
    let d = e.op(Prim::FillZeros, &[c.d, c.out]);
    let d = e.op(Prim::BroadcastLike, &[d, c.out]);
    if c.need(0) {
        let zero = int(e, 0);
        g[0] = Some(e.op(Prim::SetItem, &[d, c.x[1], zero]));
    }
    if c.need(2) {
        g[2] = Some(e.op(Prim::SetItemGrad, &[d, c.x[1], c.x[2]]));
    }
    Some(g)
}

/// `InplaceCast(old, new)`: new's sensitivity is `d` in new's dtype; old's value is replaced,
/// so it gets none.
fn inplace_cast_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let mut g = c.none();
    if c.need(1) {
        g[1] = Some(e.op(Prim::SumToShape, &[c.d, c.x[1]]));
    }
    Some(g)
}

fn switch_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match a[0].as_bool() {
        Some(true) => a[1].clone(),
        Some(false) => a[2].clone(),
        None => a[1].join(&a[2]).unwrap_or(Abs::Any),
    })
}

fn partial_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match &a[0] {
        Abs::Func(fs) if fs.len() == 1 => Abs::func(Func::Partial(
            Arc::new(fs[0].clone()),
            Arc::from(a[1..].to_vec()),
        )),
        _ => Abs::Any,
    })
}

fn partial(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let (f, rest) = a
        .split_first()
        .ok_or_else(|| type_error("Partial needs a function"))?;
    Ok(Value::Partial(Rc::new(PartialApp {
        func: f.clone(),
        args: rest.to_vec(),
    })))
}

fn make_slice_abs(_: Prim, a: &[Abs]) -> Rule {
    let part = |a: &Abs| match a {
        Abs::None => Some(None),
        other => other.as_i64().map(Some),
    };
    Ok(match (part(&a[0]), part(&a[1]), part(&a[2])) {
        (Some(start), Some(stop), Some(step)) => Abs::Slice(Some(Slice { start, stop, step })),
        _ => Abs::Slice(None),
    })
}

fn not_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match truth_abs(&a[0]) {
        Abs::Bool(b) => Abs::Bool(b.map(|b| !b)),
        other => other,
    })
}

fn attr_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match &a[1] {
        Abs::Str(Some(name)) => getattr_abs(&a[0], name),
        _ => Abs::Any,
    })
}

fn attr(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    match &a[1] {
        Value::Str(name) => getattr(&a[0], name),
        _ => Err(type_error("attribute name must be a string")),
    }
}

fn check_bound_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match &a[0] {
        Abs::Unbound => Abs::Bottom,
        other => other.clone(),
    })
}

fn raise(a: &[Value]) -> OpResult {
    Err((
        match &a[0] {
            Value::Str(s) if &**s == "AssertionError" => "AssertionError",
            // The call of an object that has no `__call__`.
            Value::Str(s) if &**s == "TypeError" => "TypeError",
            _ => "RuntimeError",
        },
        to_str(&a[1]),
    ))
}

fn assert(a: &[Value]) -> OpResult {
    if truth(&a[0])? {
        return Ok(Value::None);
    }
    let message = match &a[1] {
        Value::None => String::new(),
        m => to_str(m),
    };
    Err(("AssertionError", message))
}

fn enumerate_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match items_abs(&a[0]) {
        Some(xs) => Abs::tuple(
            xs.into_iter()
                .enumerate()
                .map(|(i, x)| Abs::tuple(vec![Abs::Int(a[1].as_i64().map(|s| s + i as i64)), x]))
                .collect(),
        ),
        None => Abs::Any,
    })
}

fn zip_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match a.iter().map(items_abs).collect::<Option<Vec<_>>>() {
        Some(lists) => zip_items(&lists, Abs::tuple),
        None => Abs::Any,
    })
}

/// Truthiness raises only for tensors (and objects with a `__bool__` of their own).
fn unless_plain(args: &[Abs]) -> bool {
    !args.iter().all(|a| {
        matches!(
            a,
            Abs::Bool(_) | Abs::Int(_) | Abs::Float(_) | Abs::Str(_) | Abs::None
        )
    })
}

/// The sensitivities of the items of a tuple, a list or a Partial's bound arguments (from
/// argument `skip` on): item `i - skip` of `d`, dense (the tuple's sensitivity may lack it).
fn items_back(e: &mut dyn Emit, c: &Call, skip: usize) -> Grads {
    c.each(e, skip..c.x.len(), |e, i| {
        let k = int(e, (i - skip) as i64);
        let item = e.op(Prim::GradItem, &[c.d, k]);
        e.op(Prim::FillZeros, &[item, c.x[i]])
    })
}

fn item_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.first(e, |e| e.op(Prim::GradTupleAt, &[c.x[0], c.x[1], c.d])))
}

fn make_slice(args: &[Value]) -> OpResult {
    let part = |v: &Value| match v {
        Value::None => Ok(None),
        other => crate::python::index_of(other).map(Some).ok_or_else(|| {
            type_error("slice indices must be integers or None or have an __index__ method")
        }),
    };
    Ok(Value::Slice(Rc::new(Slice {
        start: part(&args[0])?,
        stop: part(&args[1])?,
        step: part(&args[2])?,
    })))
}

fn check_bound(args: &[Value]) -> OpResult {
    if !matches!(args[0], Value::Unbound) {
        return Ok(args[0].clone());
    }
    let name = to_str(&args[1]);
    Err(if truth(&args[2])? {
        (
            "NameError",
            format!(
                "cannot access free variable '{name}' where it is not associated with a value in enclosing scope"
            ),
        )
    } else {
        (
            "UnboundLocalError",
            format!(
                "cannot access local variable '{name}' where it is not associated with a value"
            ),
        )
    })
}

fn unpack_at_least_abs(seq: &Abs, n: &Abs) -> Abs {
    match (items_abs(seq), n.as_i64()) {
        (Some(xs), Some(n)) if xs.len() as i64 >= n => Abs::tuple(xs),
        (Some(_), Some(_)) => Abs::Bottom,
        _ => Abs::Any,
    }
}

fn unpack_abs(seq: &Abs, n: &Abs) -> Abs {
    match (items_abs(seq), n.as_i64()) {
        (Some(xs), Some(n)) if xs.len() as i64 == n => Abs::tuple(xs),
        (Some(_), Some(_)) => Abs::Bottom,
        (None, Some(n))
            if matches!(
                seq,
                Abs::Any
                    | Abs::Tuple(_)
                    | Abs::List(_)
                    | Abs::Str(_)
                    | Abs::Range(_)
                    | Abs::Tensor(_)
            ) =>
        {
            Abs::tuple(vec![element_abs(seq); n.max(0) as usize])
        }
        _ => Abs::Bottom,
    }
}

fn enumerate(args: &[Value]) -> OpResult {
    let start = int_arg(&args[1])?;
    let xs = items(&args[0], &not_iterable)?;
    let mut out = Vec::with_capacity(xs.len());
    for (i, x) in xs.into_iter().enumerate() {
        let n = start
            .checked_add(i as i64)
            .ok_or_else(|| overflow("enumerate"))?;
        out.push(Value::tuple(vec![Value::Int(n), x]));
    }
    Ok(Value::tuple(out))
}

/// The tuple of the `k`-th items of `lists`, as long as the shortest.
fn zip_items<T: Clone, R>(lists: &[Vec<T>], tuple: impl Fn(Vec<T>) -> R) -> R
where
    R: Into<T>,
{
    let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
    tuple(
        (0..n)
            .map(|k| tuple(lists.iter().map(|l| l[k].clone()).collect()).into())
            .collect(),
    )
}

fn zip(args: &[Value]) -> OpResult {
    let lists: Vec<Vec<Value>> = args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            items(a, &|t| {
                type_error(format!(
                    "zip argument #{} must support iteration ('{t}' is not iterable)",
                    i + 1
                ))
            })
        })
        .collect::<Result<_, PyErr>>()?;
    Ok(zip_items(&lists, Value::tuple))
}

fn is_abs(p: Prim, args: &[Abs]) -> Rule {
    let same = match (&args[0], &args[1]) {
        (Abs::None, Abs::None) => Some(true),
        (Abs::Bool(Some(a)), Abs::Bool(Some(b))) => Some(a == b),
        (Abs::Any | Abs::Bool(None), _) | (_, Abs::Any | Abs::Bool(None)) => None,
        _ => Some(false),
    };
    Ok(Abs::Bool(same.map(|s| s == (p == Prim::Is))))
}

fn is(p: Prim, args: &[Value], _: &mut dyn Write) -> OpResult {
    let same = match (&args[0], &args[1]) {
        (Value::None, Value::None) => true,
        (Value::Ref(a), Value::Ref(b)) => a == b,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        _ => false,
    };
    Ok(Value::Bool(same == (p == Prim::Is)))
}
