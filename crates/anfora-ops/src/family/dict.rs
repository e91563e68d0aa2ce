//! Dicts with string keys: displays (`{'lr': 0.1}`), a function's `**kwargs`, the `**d` of a
//! call, `d[k]`, `d.get(k, default)`. Their keys are known at compile time, as a tuple's
//! length is, so a call with `**d` binds its keywords when it is specialized.

use std::io::Write;
use std::rc::Rc;
use std::sync::Arc;

use crate::Const;
use crate::abs::{Abs, Rule, err};
use crate::def::{Backward, PrimDef, primitives};
use crate::emit::{Call, Emit, Grads};
use crate::prim::{Prim, Refs};
use crate::pynum::type_error;
use crate::python::dict_lookup_abs;
use crate::value::{Dict, OpResult, Value, to_str};

primitives! {
    family dict = 15;

    /// `MakeDict(keys, values...)`: `{k: v, ...}` with the constant string keys `keys` (a
    /// tuple); a later duplicate key replaces the earlier value in its place.
    MakeDict = PrimDef::new("MakeDict", "(keys, *values)", make_dict_abs, make_dict,
        Backward::Rule(make_dict_back))
        .passing_values();
    /// `DictMerge(a, b, callee)`: the keyword arguments `a` and then the `**b` of a call of
    /// `callee` (its name, for Python's errors: `b` must be a dict, and no key twice).
    DictMerge = PrimDef::new("DictMerge", "(a, b, callee)", merge_abs, merge,
        Backward::Rule(merge_back))
        .passing_values();
    /// `DictUpdate(a, b)`: `{**a, **b}`, `dict(a, **b)`: `a`'s items, those of `b` replacing
    /// the values of keys `a` has (in their place) and following them otherwise.
    DictUpdate = PrimDef::new("DictUpdate", "(a, b)", update_abs, update,
        Backward::Rule(update_back))
        .passing_values();
    /// `DictUpdateGrad(s, a, b, i)`: the part of `DictUpdate(a, b)`'s sensitivity `s` that
    /// operand `i` gets (nothing for a value of `a` that `b` replaced).
    DictUpdateGrad = PrimDef::new("DictUpdateGrad", "(s, a, b, i)", update_grad_abs,
        update_grad, Backward::Refused(NOT_DIFFERENTIATED))
        .passing_values();
    /// `d.get(key, default=None)`.
    DictGet = PrimDef::new("DictGet", "(d, key, default=None)", get_abs, get,
        Backward::Rule(get_back))
        .passing_values();
    /// `d.keys()` where a `for` loop or `tuple()`/`list()` consumes it at once: a tuple of the
    /// keys (a view object would print differently, so it never becomes a value of its own).
    DictKeys = PrimDef::new("DictKeys", "(d)", |_, a| Ok(view_abs(&a[0], View::Keys)),
        |_, a, _| view(&a[0], View::Keys), Backward::Zero)
        .passing_values();
    /// `d.values()`, as `DictKeys`: a tuple of the values, whose sensitivity is the dict's.
    DictValues = PrimDef::new("DictValues", "(d)", |_, a| Ok(view_abs(&a[0], View::Values)),
        |_, a, _| view(&a[0], View::Values), crate::def::first(|_, c| c.d))
        .passing_values();
    /// `d.items()`, as `DictKeys`: a tuple of `(key, value)` pairs.
    DictItems = PrimDef::new("DictItems", "(d)", |_, a| Ok(view_abs(&a[0], View::Items)),
        |_, a, _| view(&a[0], View::Items),
        crate::def::first(|e, c| e.op(Prim::DictItemsGrad, &[c.d])))
        .passing_values();
    /// `DictItemsGrad(s)`: the dict's sensitivity from that of its `(key, value)` pairs.
    DictItemsGrad = PrimDef::new("DictItemsGrad", "(s)", |_, a| Ok(items_grad_abs(&a[0])),
        |_, a, _| Ok(items_grad(&a[0])), Backward::Refused(NOT_DIFFERENTIATED))
        .passing_values();
    /// `DictDefaultGrad(d, key, s)`: the sensitivity of `d.get(key, default)`'s default: `s`
    /// where `d` lacks `key`, else nothing.
    DictDefaultGrad = PrimDef::new("DictDefaultGrad", "(d, key, s)", default_grad_abs,
        default_grad, Backward::Refused(NOT_DIFFERENTIATED))
        .passing_values();
    /// `CallDict(f, args, kwargs)`: a call with `**`: the tuple of all positional arguments and
    /// the dict of all keyword arguments. Inference binds it to its callee once it knows the
    /// tuple's length and the dict's keys.
    CallDict = PrimDef::new("CallDict", "(func, args, kwargs)", |_, _| Ok(Abs::Any),
        |_, _, _| Err(("SystemError", "CallDict is executed by the machine".into())),
        Backward::Refused("a call with `**` arguments of a function value binds only when it runs: call the function by its name, or pass the keywords one by one"))
        .with_refs(Refs::All).unfoldable().opaque();
    /// `DictBind(f, args, kwargs)`: the arguments of `CallDict(f, args, kwargs)` bound to the
    /// signature of `f`, as `StarBind` binds those of a star call.
    DictBind = PrimDef::new("DictBind", "(func, args, kwargs)", |_, _| Ok(Abs::Any),
        |_, _, _| Err(("SystemError", "DictBind is bound at compile time".into())),
        Backward::Rule(|e, c| Some(super::structure::bind_back(e, c, Prim::DictBindGrad, 1))))
        .with_refs(Refs::All).unfoldable().passing_values();
    /// `DictBindGrad(f, args, d, kwargs)`: from `d`, the sensitivity of `DictBind`'s tuple,
    /// those of its arguments: `(args', kwargs')`, a dict's being its values' in key order.
    DictBindGrad = PrimDef::new("DictBindGrad", "(func, args, d, kwargs)", |_, _| Ok(Abs::Any),
        |_, _, _| Err(("SystemError", "DictBindGrad is bound at compile time".into())),
        Backward::Refused(NOT_DIFFERENTIATED))
        .unfoldable().passing_value_of(2);
}

const NOT_DIFFERENTIATED: &str =
    "the gradient of a dict's gradient is not supported: pass tensors as arguments or in tuples";

// ---- backward rules: a dict's sensitivity is the tuple of its values' sensitivities, in
// key order (`None` for none at all), as a tuple's is.

/// Each value gets its item of the sensitivity (the keys are unique: the frontend keeps a
/// display's last value of a repeated key, and binding never repeats one).
fn make_dict_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.each(e, 1..c.x.len(), |e, i| {
        let k = e.konst(Const::Int(i as i64 - 1));
        let item = e.op(Prim::GradItem, &[c.d, k]);
        e.op(Prim::FillZeros, &[item, c.x[i]])
    }))
}

/// `a`'s items come first in the merged dict, then `b`'s: a concatenation's parts.
fn merge_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.each(e, 0..2, |e, i| {
        let which = e.konst(Const::Int(i as i64));
        e.op(Prim::ConcatPart, &[c.d, c.x[0], c.x[1], which])
    }))
}

fn get_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let mut g = c.none();
    if c.need(0) {
        g[0] = Some(e.op(Prim::GradTupleAt, &[c.x[0], c.x[1], c.d]));
    }
    if c.need(2) {
        g[2] = Some(e.op(Prim::DictDefaultGrad, &[c.x[0], c.x[1], c.d]));
    }
    Some(g)
}

fn update_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    Some(c.each(e, 0..2, |e, i| {
        let which = e.konst(Const::Int(i as i64));
        e.op(Prim::DictUpdateGrad, &[c.d, c.x[0], c.x[1], which])
    }))
}

/// The keys of `DictUpdate(a, b)` in order.
fn updated_keys<'k>(a: &'k [Arc<str>], b: &'k [Arc<str>]) -> Vec<&'k Arc<str>> {
    let mut keys: Vec<&Arc<str>> = a.iter().collect();
    keys.extend(b.iter().filter(|k| !a.contains(k)));
    keys
}

fn update_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match (&a[0], &a[1]) {
        (Abs::Dict(x), Abs::Dict(y)) => {
            let mut out: Vec<(Arc<str>, Abs)> = x.to_vec();
            for (k, v) in y.iter() {
                match out.iter_mut().find(|(key, _)| key == k) {
                    Some(slot) => slot.1 = v.clone(),
                    None => out.push((k.clone(), v.clone())),
                }
            }
            Abs::Dict(Arc::from(out))
        }
        (Abs::Dict(_), Abs::Any) | (Abs::Any, _) => Abs::Any,
        // TypeError at run time: not a mapping.
        _ => Abs::Bottom,
    })
}

fn update(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    match (&a[0], &a[1]) {
        (Value::Dict(x), Value::Dict(y)) => {
            let mut out = (**x).clone();
            for (k, v) in &y.items {
                out.insert(k.clone(), v.clone());
            }
            Ok(Value::Dict(Rc::new(out)))
        }
        (x, y) => {
            let bad = if matches!(x, Value::Dict(_)) { y } else { x };
            Err(type_error(format!(
                "'{}' object is not a mapping",
                bad.type_name()
            )))
        }
    }
}

fn update_grad_abs(_: Prim, a: &[Abs]) -> Rule {
    let (Abs::Dict(x), Abs::Dict(y)) = (&a[1], &a[2]) else {
        return Ok(Abs::Any);
    };
    let (xk, yk): (Vec<Arc<str>>, Vec<Arc<str>>) = (
        x.iter().map(|(k, _)| k.clone()).collect(),
        y.iter().map(|(k, _)| k.clone()).collect(),
    );
    let parts = match &a[0] {
        Abs::Tuple(s) => s.to_vec(),
        Abs::None => return Ok(Abs::None),
        _ => return Ok(Abs::Any),
    };
    Ok(Abs::tuple(update_part(
        &parts,
        &xk,
        &yk,
        a[3].as_i64() == Some(1),
        Abs::None,
    )))
}

fn update_grad(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let (Value::Dict(x), Value::Dict(y), Value::Tuple(s)) = (&a[1], &a[2], &a[0]) else {
        return Ok(Value::None);
    };
    let xk: Vec<Arc<str>> = x.items.iter().map(|(k, _)| k.clone()).collect();
    let yk: Vec<Arc<str>> = y.items.iter().map(|(k, _)| k.clone()).collect();
    let second = matches!(a[3], Value::Int(1));
    Ok(Value::tuple(update_part(s, &xk, &yk, second, Value::None)))
}

/// Operand `a`'s (or with `second`, `b`'s) sensitivities, one per key, from the updated
/// dict's `s`: a key of `a` that `b` replaced gets `none`.
fn update_part<T: Clone>(s: &[T], a: &[Arc<str>], b: &[Arc<str>], second: bool, none: T) -> Vec<T> {
    let keys = updated_keys(a, b);
    let at = |k: &Arc<str>| {
        keys.iter()
            .position(|x| *x == k)
            .and_then(|i| s.get(i).cloned())
    };
    if second {
        b.iter()
            .map(|k| at(k).unwrap_or_else(|| none.clone()))
            .collect()
    } else {
        a.iter()
            .map(|k| match b.contains(k) {
                true => none.clone(),
                false => at(k).unwrap_or_else(|| none.clone()),
            })
            .collect()
    }
}

/// Which view of a dict a loop walks.
#[derive(Clone, Copy)]
enum View {
    Keys,
    Values,
    Items,
}

impl View {
    fn name(self) -> &'static str {
        match self {
            View::Keys => "keys",
            View::Values => "values",
            View::Items => "items",
        }
    }
}

fn view_abs(d: &Abs, v: View) -> Abs {
    let Abs::Dict(items) = d else {
        // AttributeError at run time (Any stays unknown).
        return if matches!(d, Abs::Any) {
            Abs::Any
        } else {
            Abs::Bottom
        };
    };
    Abs::tuple(
        items
            .iter()
            .map(|(k, a)| {
                let key = Abs::Str(Some(k.clone()));
                match v {
                    View::Keys => key,
                    View::Values => a.clone(),
                    View::Items => Abs::tuple(vec![key, a.clone()]),
                }
            })
            .collect(),
    )
}

fn view(d: &Value, v: View) -> OpResult {
    let Value::Dict(items) = d else {
        return Err((
            "AttributeError",
            format!("'{}' object has no attribute '{}'", d.type_name(), v.name()),
        ));
    };
    Ok(Value::tuple(
        items
            .items
            .iter()
            .map(|(k, x)| {
                let key = Value::Str(k.clone());
                match v {
                    View::Keys => key,
                    View::Values => x.clone(),
                    View::Items => Value::tuple(vec![key, x.clone()]),
                }
            })
            .collect(),
    ))
}

/// The second item of each pair's sensitivity (`None` stays `None`).
fn items_grad(s: &Value) -> Value {
    match s {
        Value::Tuple(pairs) => Value::tuple(
            pairs
                .iter()
                .map(|p| match p {
                    Value::Tuple(kv) if kv.len() == 2 => kv[1].clone(),
                    _ => Value::None,
                })
                .collect(),
        ),
        _ => Value::None,
    }
}

fn items_grad_abs(s: &Abs) -> Abs {
    match s {
        Abs::Tuple(pairs) => Abs::tuple(
            pairs
                .iter()
                .map(|p| match p {
                    Abs::Tuple(kv) if kv.len() == 2 => kv[1].clone(),
                    Abs::Any => Abs::Any,
                    _ => Abs::None,
                })
                .collect(),
        ),
        Abs::Any => Abs::Any,
        _ => Abs::None,
    }
}

fn default_grad_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match (&a[0], &a[1]) {
        (Abs::Dict(d), Abs::Str(Some(k))) if d.iter().any(|(key, _)| key == k) => Abs::None,
        (Abs::Dict(_), Abs::Str(Some(_))) => a[2].clone(),
        _ => Abs::Any,
    })
}

fn default_grad(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let held = match (&a[0], &a[1]) {
        (Value::Dict(d), Value::Str(k)) => d.get(k).is_some(),
        _ => false,
    };
    Ok(if held { Value::None } else { a[2].clone() })
}

/// The string keys of a `MakeDict`.
fn keys_of(a: &Abs) -> Option<Vec<Arc<str>>> {
    match a {
        Abs::Tuple(items) => items
            .iter()
            .map(|k| match k {
                Abs::Str(Some(s)) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Items with later duplicates replacing earlier values in place.
fn deduplicated(items: impl IntoIterator<Item = (Arc<str>, Abs)>) -> Abs {
    let mut out: Vec<(Arc<str>, Abs)> = Vec::new();
    for (k, a) in items {
        match out.iter_mut().find(|(key, _)| *key == k) {
            Some(slot) => slot.1 = a,
            None => out.push((k, a)),
        }
    }
    Abs::Dict(Arc::from(out))
}

fn make_dict_abs(_: Prim, a: &[Abs]) -> Rule {
    let keys = match (keys_of(&a[0]), &a[0]) {
        (Some(keys), _) => keys,
        (None, Abs::Any | Abs::Bottom) => return Ok(a[0].clone()),
        (None, _) => return Err(err("a dict's keys must be string constants")),
    };
    if keys.len() != a.len() - 1 {
        return Err(err("MakeDict: one value per key"));
    }
    Ok(deduplicated(keys.into_iter().zip(a[1..].iter().cloned())))
}

fn make_dict(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let Value::Tuple(keys) = &a[0] else {
        return Err(type_error("MakeDict expects a tuple of keys"));
    };
    let keys = keys.iter().map(|k| match k {
        Value::Str(s) => Ok(s.clone()),
        other => Err(type_error(format!(
            "dict keys in compiled code are strings, not {}",
            other.type_name()
        ))),
    });
    let keys: Vec<Arc<str>> = keys.collect::<Result<_, _>>()?;
    if keys.len() != a.len() - 1 {
        return Err(type_error("MakeDict: one value per key"));
    }
    let items = keys.into_iter().zip(a[1..].iter().cloned());
    Ok(Value::Dict(Rc::new(Dict::from_items(items))))
}

fn merge_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match (&a[0], &a[1]) {
        (Abs::Dict(x), Abs::Dict(y)) => {
            if y.iter().any(|(k, _)| x.iter().any(|(m, _)| m == k)) {
                // TypeError at run time: a keyword given twice.
                Abs::Bottom
            } else {
                Abs::Dict(x.iter().chain(y.iter()).cloned().collect())
            }
        }
        (Abs::Dict(_), Abs::Any) | (Abs::Any, _) => Abs::Any,
        // TypeError at run time: `**` of something that is not a dict.
        _ => Abs::Bottom,
    })
}

fn merge(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let callee = to_str(&a[2]);
    let (Value::Dict(x), Value::Dict(y)) = (&a[0], &a[1]) else {
        return Err(type_error(format!(
            "{callee}() argument after ** must be a mapping, not {}",
            a[1].type_name()
        )));
    };
    let mut out = (**x).clone();
    for (k, v) in &y.items {
        if x.get(k).is_some() {
            return Err(type_error(format!(
                "{callee}() got multiple values for keyword argument '{k}'"
            )));
        }
        out.items.push((k.clone(), v.clone()));
    }
    Ok(Value::Dict(Rc::new(out)))
}

fn get_abs(_: Prim, a: &[Abs]) -> Rule {
    let Abs::Dict(d) = &a[0] else {
        return Ok(Abs::Bottom);
    };
    // A key the dict lacks: the default.
    Ok(dict_lookup_abs(d, &a[1])?.unwrap_or_else(|| a[2].clone()))
}

fn get(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    let Value::Dict(d) = &a[0] else {
        // Differentiated code calls `x.get(...)` as `DictGet(x, ...)` whatever `x` is.
        return Err((
            "AttributeError",
            format!("'{}' object has no attribute 'get'", a[0].type_name()),
        ));
    };
    Ok(match &a[1] {
        Value::Str(k) => d.get(k).cloned().unwrap_or_else(|| a[2].clone()),
        Value::Tuple(_) | Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {
            a[2].clone()
        }
        other => {
            return Err(type_error(format!(
                "unhashable type: '{}'",
                other.type_name()
            )));
        }
    })
}
