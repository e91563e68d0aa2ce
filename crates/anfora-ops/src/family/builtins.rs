//! Python's builtin functions and classes: `print`, `len`, `min`/`max`, the conversions
//! `int`, `float`, `bool`, `str`, `tuple`, `list` and `repr`, `range`, `isinstance`, `sum`,
//! `any` and `all`, and `anfora.Tensor` as a class.

use std::io::Write;
use std::rc::Rc;

use anfora_tensor::Scalar;

use crate::abs::{Abs, Func, Rule, err};
use crate::args::int_arg;
use crate::def::{Backward, EvalFn, InferFn, PrimDef, Py, Refusal, first, primitives};
use crate::emit::{Call, Emit, Grads, unbroadcast};
use crate::prim::{Effects, Prim};
use crate::pynum::{self, PyErr, overflow, tensor, type_error, value_error};
use crate::python::{
    element_abs, items, items_abs, len, length_abs, not_iterable, truth, truth_abs,
};
use crate::value::{OpResult, Range, Value, repr, to_str};

const REFUSED_SEQUENCES: &str = "the builtin `sum` is not differentiated (add the items \
    with `+`, or use ops.sum on tensors)";

primitives! {
    family builtins = 2;

    Print = builtin("Print", &[Py::Builtin("print")], "(*values, sep=' ', end='\\n')",
        |_, _| Ok(Abs::None), |_, a, out| print(a, out), Backward::Zero)
        .with_effects(Effects::IO);
    /// `ops.format_tensor(x, style="numpy")`: the text `print` shows of `x` (`str(x)`), with
    /// `style="mindspore"` MindSpore's `repr` (`Tensor(shape=[...], dtype=..., value=...)`),
    /// with `style="mindspore_print"` what MindSpore's `Print` writes in graph mode (the
    /// MindSpore compatibility layer's `Print` writes it).
    FormatTensor = builtin("FormatTensor", &[Py::Op("format_tensor")], "(x, style='numpy')",
        |_, _| Ok(Abs::Str(None)), |_, a, _| format_tensor(&a[0], &a[1]), Backward::Zero);
    Len = builtin("Len", &[Py::Builtin("len")], "(obj)", |_, a| Ok(length_abs(&a[0])),
        |_, a, _| len(&a[0]).map(Value::Int), Backward::Zero);
    Min = builtin("Min", &[Py::Builtin("min")], "(*args)", min_max_abs, |p, a, _| min_max(p, a),
        Backward::Rule(extremum_back))
        .passing_values().viewing();
    Max = builtin("Max", &[Py::Builtin("max")], "(*args)", min_max_abs, |p, a, _| min_max(p, a),
        Backward::Rule(extremum_back))
        .passing_values().viewing();
    /// `int`: conversion function and type (for isinstance).
    IntType = builtin("int", &[Py::Builtin("int")], "(x=0)", number_abs, |_, a, _| int_of(&a[0]),
        Backward::Zero)
        .class();
    /// `float(x)`: the gradient of `x` in its own kind (none for ints).
    FloatType = builtin("float", &[Py::Builtin("float")], "(x=0.0)", number_abs,
        |_, a, _| float_of(&a[0]), Backward::Rule(float_back))
        .class();
    BoolType = builtin("bool", &[Py::Builtin("bool")], "(x=False)", |_, a| Ok(truth_abs(&a[0])),
        |_, a, _| Ok(Value::Bool(truth(&a[0])?)), Backward::Zero)
        .class();
    StrType = builtin("str", &[Py::Builtin("str")], "(object='')", |_, _| Ok(Abs::Str(None)),
        |_, a, _| Ok(Value::str(&to_str(&a[0]))), Backward::Zero)
        .class();
    TupleType = builtin("tuple", &[Py::Builtin("tuple")], "(iterable=())", sequence_abs,
        |_, a, _| Ok(Value::tuple(items(&a[0], &not_iterable)?)),
        first(|e, c| e.op(Prim::SequenceGrad, &[c.d, c.x[0]])))
        .passing_values().class().viewing();
    ListType = builtin("list", &[Py::Builtin("list")], "(iterable=())", sequence_abs,
        |_, a, _| Ok(Value::List(Rc::from(items(&a[0], &not_iterable)?))),
        first(|e, c| e.op(Prim::SequenceGrad, &[c.d, c.x[0]])))
        .passing_values().class().viewing();
    Repr = builtin("repr", &[Py::Builtin("repr")], "(obj)", |_, _| Ok(Abs::Str(None)),
        |_, a, _| Ok(Value::str(&repr(&a[0]))), Backward::Zero);
    Range = builtin("range", &[Py::Builtin("range")], "(*args)", range_abs, |_, a, _| range(a),
        Backward::Zero);
    IsInstance = builtin("isinstance", &[Py::Builtin("isinstance")], "(obj, class_or_tuple)",
        |_, a| Ok(isinstance_abs(&a[0], &a[1])),
        |_, a, _| isinstance(&a[0], &a[1]).map(Value::Bool), Backward::Zero);
    Sum = builtin("sum", &[Py::Builtin("sum")], "(iterable, start=0)", sum_abs, |_, a, _| sum(a),
        Backward::Refused(REFUSED_SEQUENCES));
    Any = builtin("any", &[Py::Builtin("any")], "(iterable)", |_, _| Ok(Abs::Bool(None)), any_all,
        Backward::Zero);
    All = builtin("all", &[Py::Builtin("all")], "(iterable)", |_, _| Ok(Abs::Bool(None)), any_all,
        Backward::Zero);
    /// `anfora.Tensor`, for isinstance.
    TensorType = PrimDef::new("Tensor", "(data)", |_, _| Ok(Abs::Bottom),
        |_, _, _| Err(type_error("anfora.Tensor cannot be called; use ops.tensor(data)")),
        Backward::Zero)
        .class();
    /// `SharedUpdate(x, name, within=None)`: `x` unchanged, where the front end could not show
    /// that the variable `name` updated in place (`x += v`, `x[i] = v`) is the only holder of
    /// its object. For a mutable object (a tensor, a list, a Parameter) that is a refusal:
    /// numpy would change the object for every holder. Other values are rebound, as in
    /// Python. `within`: `x` is an item of that container (`c[i] += v`), which an array owns
    /// (its elements are written back), a list does not (the item object is shared).
    SharedUpdate = PrimDef::new("SharedUpdate", "(x, name, within=None)", shared_update_abs,
        |_, a, _| shared_update(a), Backward::Rule(|_, c| {
            let mut g = c.none();
            g[0] = Some(c.d);
            Some(g)
        }))
        .refusing(Refusal { code: SHARED_UPDATE, label: UPDATED, hint: SHARED_UPDATE_HINT });
    /// `ViewIndex(array, index)`: `index`, where `array[index]` is a view of the array (a
    /// tensor or Parameter indexed by ints, slices, `None` and `...`), so that `x[i][j] = v`
    /// writes through it into `x`. Anything else is refused: numpy's `x[[0, 1]]` is a copy
    /// (the assignment would change nothing) and a list's item is an object others may hold.
    ViewIndex = PrimDef::new("ViewIndex", "(array, index)", view_index_abs,
        |_, a, _| match view_refusal_value(&a[0], &a[1]) {
            Some(m) => Err(("NotImplementedError", m)),
            None => Ok(a[1].clone()),
        },
        Backward::Zero)
        .refusing(Refusal { code: ITEM_ASSIGN, label: UPDATED, hint: ITEM_ASSIGN_HINT });
    /// `IfMutable(probe, then, otherwise)`: `then` where `probe` is an object an in-place
    /// update changes (a tensor, a list, a Parameter), else `otherwise`. A caller writes back
    /// an argument a function updated in place with it: a tensor takes the updated value, an
    /// int stays (the callee's `n += 1` rebound its own name only). The other names of a
    /// variable updated in place take the update with it too. A 0-d tensor is refused
    /// ([`crate::indexing::ZERO_D`]).
    IfMutable = PrimDef::new("IfMutable", "(probe, then, otherwise)", if_mutable_abs,
        |_, a, _| match &a[0] {
            Value::Tensor(t) if t.ndim() == 0 => {
                Err(("NotImplementedError", crate::indexing::ZERO_D.into()))
            }
            probe => Ok(if value_mutable(probe) { a[1].clone() } else { a[2].clone() }),
        },
        Backward::Rule(|e, c| {
            let none = e.konst(crate::Const::None);
            let mut g = c.none();
            g[1] = Some(e.op(Prim::IfMutable, &[c.x[0], c.d, none]));
            g[2] = Some(e.op(Prim::IfMutable, &[c.x[0], none, c.d]));
            Some(g)
        }))
        .passing_values()
        .refusing(Refusal {
            code: SHARED_UPDATE,
            label: UPDATED,
            hint: crate::indexing::ZERO_D_HINT,
        });
}

/// The diagnostic code of [`Prim::ViewIndex`]'s refusal (anfora-ir's `codes::ITEM_ASSIGN`).
const ITEM_ASSIGN: &str = "E0118";
const ITEM_ASSIGN_HINT: &str = "index once (`x[i, j] = v`, `x[idx, 1:3] += v`), or bind the \
    item to a new value and store it back (`row = x[i] * 1.0`, `row[j] = v`, `x[i] = row`)";

fn view_message(what: &str) -> String {
    format!("`x[i][j] = v` writes through `x[i]` only where it is a view of an array; here {what}")
}

fn view_index_abs(_: Prim, a: &[Abs]) -> Rule {
    let basic = |i: &Abs| matches!(i, Abs::Int(_) | Abs::Slice(_) | Abs::None | Abs::Ellipsis);
    let what = match (&a[0], &a[1]) {
        (Abs::Any | Abs::Bottom, _) | (_, Abs::Any | Abs::Bottom) => return Ok(a[1].clone()),
        (Abs::Tensor(_) | Abs::Ref(_), Abs::Tuple(items)) if items.iter().all(basic) => None,
        (Abs::Tensor(_) | Abs::Ref(_), i) if basic(i) => None,
        (Abs::Tensor(_) | Abs::Ref(_), _) => Some(ADVANCED),
        (Abs::List(_), _) => Some(LIST_ITEM),
        _ => None,
    };
    match what {
        Some(w) => Err(crate::abs::err(view_message(w))),
        None => Ok(a[1].clone()),
    }
}

const ADVANCED: &str = "`x[i]` is a copy (an integer-array or mask index), which numpy would \
    change instead of `x`";
const LIST_ITEM: &str = "`x[i]` is an item of a list, an object other names may hold";

fn view_refusal_value(array: &Value, index: &Value) -> Option<String> {
    let basic = |i: &Value| {
        matches!(
            i,
            Value::Int(_) | Value::Slice(_) | Value::None | Value::Ellipsis
        )
    };
    match (array, index) {
        (Value::Tensor(_) | Value::Ref(_), Value::Tuple(items)) if items.iter().all(basic) => None,
        (Value::Tensor(_) | Value::Ref(_), i) if basic(i) => None,
        (Value::Tensor(_) | Value::Ref(_), _) => Some(view_message(ADVANCED)),
        (Value::List(_), _) => Some(view_message(LIST_ITEM)),
        _ => None,
    }
}

fn if_mutable_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match &a[0] {
        Abs::Tensor(t) if t.shape.is_empty() => return Err(err(crate::indexing::ZERO_D)),
        Abs::Tensor(_) | Abs::List(_) | Abs::Ref(_) => a[1].clone(),
        Abs::Any => Abs::Any,
        Abs::Bottom => Abs::Bottom,
        _ => a[2].clone(),
    })
}

fn value_mutable(v: &Value) -> bool {
    matches!(v, Value::Tensor(_) | Value::List(_) | Value::Ref(_))
}

/// The diagnostic code of [`Prim::SharedUpdate`]'s refusal (anfora-ir's `codes::SHARED_UPDATE`).
const SHARED_UPDATE: &str = "E0306";
const UPDATED: &str = "updated in place here";
const SHARED_UPDATE_HINT: &str = "numpy changes the array itself, so every name, tuple, view or \
    caller holding it would see the update; write `x = x + v` (or `x = ops.where(...)`) to \
    bind a new value, or update a variable that holds a value computed in this function";

fn shared_kind(a: &Abs) -> Option<&'static str> {
    match a {
        Abs::Tensor(_) => Some("array"),
        Abs::List(_) => Some("list"),
        Abs::Ref(_) => Some("Parameter"),
        _ => None,
    }
}

fn shared_message(kind: &str, name: &str) -> String {
    format!(
        "in-place update of '{name}', whose {kind} may also be held elsewhere (an argument, \
         another name, a tuple, a view or a closure)"
    )
}

fn shared_update_abs(_: Prim, a: &[Abs]) -> Rule {
    let name = match &a[1] {
        Abs::Str(Some(n)) => n.to_string(),
        _ => "?".into(),
    };
    if matches!(a.get(2), Some(Abs::Tensor(_) | Abs::Ref(_))) {
        return Ok(a[0].clone());
    }
    match shared_kind(&a[0]) {
        Some(kind) => Err(crate::abs::err(shared_message(kind, &name))),
        None => Ok(a[0].clone()),
    }
}

fn shared_update(a: &[Value]) -> OpResult {
    if matches!(a.get(2), Some(Value::Tensor(_) | Value::Ref(_))) {
        return Ok(a[0].clone());
    }
    let kind = match &a[0] {
        Value::Tensor(_) => Some("array"),
        Value::List(_) => Some("list"),
        Value::Ref(_) => Some("Parameter"),
        _ => None,
    };
    match (kind, &a[1]) {
        (Some(kind), Value::Str(name)) => Err(("NotImplementedError", shared_message(kind, name))),
        (Some(kind), _) => Err(("NotImplementedError", shared_message(kind, "?"))),
        (None, _) => Ok(a[0].clone()),
    }
}

/// A builtin function or class of Python.
const fn builtin(
    name: &'static str,
    python: &'static [Py],
    signature: &'static str,
    infer: InferFn,
    eval: EvalFn,
    backward: Backward,
) -> PrimDef {
    PrimDef::new(name, signature, infer, eval, backward).called(python)
}

/// `int(x)` or `float(x)`: a number of the class's kind for anything it converts.
fn number_abs(p: Prim, a: &[Abs]) -> Rule {
    Ok(match &a[0] {
        Abs::Int(_) | Abs::Bool(_) | Abs::Float(_) | Abs::Str(_) | Abs::Tensor(_) => {
            if p == Prim::IntType {
                Abs::Int(None)
            } else {
                Abs::Float(None)
            }
        }
        Abs::Any => Abs::Any,
        _ => Abs::Bottom,
    })
}

fn float_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    if c.x.len() != 1 {
        return None;
    }
    Some(vec![Some(unbroadcast(e, c.d, c.x[0]))])
}

/// `tuple(x)` or `list(x)`: the items of `x` when they are known.
fn sequence_abs(p: Prim, a: &[Abs]) -> Rule {
    Ok(match items_abs(&a[0]) {
        Some(xs) if p == Prim::TupleType => Abs::tuple(xs),
        Some(xs) => Abs::List(std::sync::Arc::from(xs)),
        None => Abs::Any,
    })
}

fn range_abs(_: Prim, a: &[Abs]) -> Rule {
    let ints = a.iter().all(|a| matches!(a, Abs::Int(_) | Abs::Bool(_)));
    Ok(if ints && (1..=3).contains(&a.len()) {
        Abs::Range(None)
    } else if a.iter().any(|a| matches!(a, Abs::Any)) {
        Abs::Any
    } else {
        Abs::Bottom
    })
}

fn sum_abs(_: Prim, a: &[Abs]) -> Rule {
    match items_abs(&a[0]) {
        Some(xs) => xs
            .iter()
            .try_fold(a[1].clone(), |acc, x| Prim::Add.infer(&[acc, x.clone()])),
        None => Ok(Abs::Any),
    }
}

/// `max(a, b)` is `a` when `a >= b` (the first wins ties), `min(a, b)` when `a <= b`: the
/// rule of `maximum`/`minimum`. Other arities have none.
fn extremum_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    if c.x.len() != 2 {
        return None;
    }
    let prim = if c.prim == Prim::Max {
        Prim::Maximum
    } else {
        Prim::Minimum
    };
    prim.backward(e, &Call { prim, ..*c })
}

fn min_max_abs(_: Prim, args: &[Abs]) -> Rule {
    let candidates = match args {
        [one] => items_abs(one),
        many => Some(many.to_vec()),
    };
    Ok(match candidates {
        Some(c) if c.is_empty() => Abs::Bottom,
        Some(c) => c
            .iter()
            .try_fold(Abs::Bottom, |acc, x| acc.join(x))
            .unwrap_or(Abs::Any),
        None => element_abs(&args[0]),
    })
}

fn sum(args: &[Value]) -> OpResult {
    if matches!(args[1], Value::Str(_)) {
        return Err(type_error(
            "sum() can't sum strings [use ''.join(seq) instead]",
        ));
    }
    let mut acc = args[1].clone();
    for x in items(&args[0], &not_iterable)? {
        acc = Prim::Add.eval(&[acc, x])?;
    }
    Ok(acc)
}

fn any_all(p: Prim, args: &[Value], _: &mut dyn Write) -> OpResult {
    let want = p == Prim::Any;
    for x in items(&args[0], &not_iterable)? {
        if truth(&x)? == want {
            return Ok(Value::Bool(want));
        }
    }
    Ok(Value::Bool(!want))
}

fn int_of(v: &Value) -> OpResult {
    Ok(match v {
        Value::Int(i) => Value::Int(*i),
        Value::Bool(b) => Value::Int(*b as i64),
        Value::Float(f) => Value::Int(float_to_int(*f)?),
        Value::Str(s) => Value::Int(pynum::parse_int(s)?),
        Value::Tensor(t) => match tensor(t.item())? {
            Scalar::Float(f) => Value::Int(float_to_int(f)?),
            s => Value::Int(match s {
                Scalar::Int(i) => i,
                Scalar::Bool(b) => b as i64,
                Scalar::Float(_) => unreachable!(),
            }),
        },
        other => {
            return Err(type_error(format!(
                "int() argument must be a string, a bytes-like object or a real number, not '{}'",
                other.type_name()
            )));
        }
    })
}

fn float_to_int(f: f64) -> Result<i64, PyErr> {
    if f.is_nan() {
        return Err(value_error("cannot convert float NaN to integer"));
    }
    if f.is_infinite() {
        return Err((
            "OverflowError",
            "cannot convert float infinity to integer".into(),
        ));
    }
    let t = f.trunc();
    // 2^63 is exact in f64.
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    if !(-TWO63..TWO63).contains(&t) {
        return Err(overflow("int()"));
    }
    Ok(t as i64)
}

fn float_of(v: &Value) -> OpResult {
    // float(x) of a float is x itself; everything else makes a new object.
    Ok(Value::new_float(match v {
        Value::Int(i) => *i as f64,
        Value::Bool(b) => *b as i64 as f64,
        Value::Float(_) => return Ok(v.clone()),
        Value::Str(s) => pynum::parse_float(s)?,
        Value::Tensor(t) => tensor(t.item())?.as_f64(),
        other => {
            return Err(type_error(format!(
                "float() argument must be a string or a real number, not '{}'",
                other.type_name()
            )));
        }
    }))
}

fn min_max(p: Prim, args: &[Value]) -> OpResult {
    let name = if p == Prim::Min { "min" } else { "max" };
    let candidates = match args {
        [] => {
            return Err(type_error(format!(
                "{name} expected at least 1 argument, got 0"
            )));
        }
        [one] => items(one, &not_iterable)?,
        many => many.to_vec(),
    };
    let mut it = candidates.into_iter();
    let Some(mut best) = it.next() else {
        return Err(value_error(format!("{name}() arg is an empty sequence")));
    };
    let better = if p == Prim::Min { Prim::Lt } else { Prim::Gt };
    for x in it {
        if truth(&better.eval(&[x.clone(), best.clone()])?)? {
            best = x;
        }
    }
    Ok(best)
}

fn isinstance(obj: &Value, cls: &Value) -> Result<bool, PyErr> {
    match cls {
        Value::Tuple(options) => {
            for c in options.iter() {
                if isinstance(obj, c)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        Value::Prim(p) if p.is_type() => Ok(match *p {
            Prim::IntType => matches!(obj, Value::Int(_) | Value::Bool(_)),
            Prim::FloatType => matches!(obj, Value::Float(_)),
            Prim::BoolType => matches!(obj, Value::Bool(_)),
            Prim::StrType => matches!(obj, Value::Str(_)),
            Prim::TupleType => matches!(obj, Value::Tuple(_)),
            Prim::ListType => matches!(obj, Value::List(_)),
            Prim::TensorType => matches!(obj, Value::Tensor(_)),
            _ => false,
        }),
        _ => Err(type_error(
            "isinstance() arg 2 must be a type, a tuple of types, or a union",
        )),
    }
}

fn range(args: &[Value]) -> OpResult {
    let int = int_arg;
    let (start, stop, step) = match args {
        [] => return Err(type_error("range expected at least 1 argument, got 0")),
        [stop] => (0, int(stop)?, 1),
        [start, stop] => (int(start)?, int(stop)?, 1),
        [start, stop, step] => (int(start)?, int(stop)?, int(step)?),
        more => {
            return Err(type_error(format!(
                "range expected at most 3 arguments, got {}",
                more.len()
            )));
        }
    };
    if step == 0 {
        return Err(value_error("range() arg 3 must not be zero"));
    }
    Ok(Value::Range(Range { start, stop, step }))
}

fn print(args: &[Value], out: &mut dyn Write) -> OpResult {
    let (values, rest) = args.split_at(args.len() - 2);
    let text = |v: &Value, what: &str, default: &str| -> Result<String, PyErr> {
        match v {
            Value::None => Ok(default.to_string()),
            Value::Str(s) => Ok(s.to_string()),
            other => Err(type_error(format!(
                "{what} must be None or a string, not {}",
                other.type_name()
            ))),
        }
    };
    let sep = text(&rest[0], "sep", " ")?;
    let end = text(&rest[1], "end", "\n")?;
    let mut line = String::new();
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            line.push_str(&sep);
        }
        line.push_str(&to_str(v));
    }
    line.push_str(&end);
    out.write_all(line.as_bytes())
        .map_err(|e| ("OSError", format!("cannot write output: {e}")))?;
    Ok(Value::None)
}

fn isinstance_abs(obj: &Abs, cls: &Abs) -> Abs {
    let check = |p: Prim| -> Option<bool> {
        Some(match (p, obj) {
            (_, Abs::Any | Abs::Bottom | Abs::Unbound) => return None,
            (Prim::IntType, o) => matches!(o, Abs::Int(_) | Abs::Bool(_)),
            (Prim::FloatType, o) => matches!(o, Abs::Float(_)),
            (Prim::BoolType, o) => matches!(o, Abs::Bool(_)),
            (Prim::StrType, o) => matches!(o, Abs::Str(_)),
            (Prim::TupleType, o) => matches!(o, Abs::Tuple(_)),
            (Prim::ListType, o) => matches!(o, Abs::List(_)),
            (Prim::TensorType, o) => matches!(o, Abs::Tensor(_)),
            _ => return None,
        })
    };
    let classes: Vec<Abs> = match cls {
        Abs::Tuple(items) => items.to_vec(),
        other => vec![other.clone()],
    };
    let mut result = Some(false);
    for c in classes {
        let r = match &c {
            Abs::Func(fs) if fs.len() == 1 => match fs[0] {
                Func::Prim(p) if p.is_type() => check(p),
                _ => return Abs::Bottom,
            },
            _ => return Abs::Bool(None),
        };
        result = match (result, r) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        };
    }
    Abs::Bool(result)
}

fn format_tensor(x: &Value, style: &Value) -> OpResult {
    match (style, x) {
        (Value::Str(s), Value::Tensor(t)) if &**s == "mindspore" => {
            Ok(Value::str(&anfora_tensor::mindspore_repr(t)))
        }
        (Value::Str(s), Value::Tensor(t)) if &**s == "mindspore_print" => {
            Ok(Value::str(&anfora_tensor::mindspore_print(t)))
        }
        (Value::Str(s), x) if matches!(&**s, "numpy" | "mindspore" | "mindspore_print") => {
            Ok(Value::str(&crate::value::to_str(x)))
        }
        (Value::Str(s), _) => Err(value_error(format!(
            "format_tensor: style must be 'numpy', 'mindspore' or 'mindspore_print', not {}",
            crate::pynum::str_repr(s)
        ))),
        (other, _) => Err(type_error(format!(
            "format_tensor: style must be a string, not {}",
            other.type_name()
        ))),
    }
}
