//! How any primitive is called, whichever it is: binding arguments to its signature, reading
//! Parameters passed as values, dropping effect states, folding constants at compile time. The
//! rules themselves are in each primitive's declaration.

use std::io::Write;
use std::rc::Rc;

use crate::abs::{Abs, Rule, from_value, to_value};
use crate::constant::Const;
use crate::prim::Prim;
use crate::pynum::{PyErr, type_error};
use crate::python::call_method;
use crate::signature::Signature;
use crate::value::{Closure, OpResult, Value, from_const, to_str};

/// The name of an operation in compile-time error messages: the `anfora.ops` or builtin name
/// (`add`, `matmul`, `sum`, `len`), or the label its declaration gives.
pub fn op_label(p: Prim) -> String {
    if let Some(label) = p.def().attrs.label {
        return label.to_string();
    }
    let name = p.python_name();
    name.strip_prefix("ops.").unwrap_or(&name).to_string()
}

/// The message of E0304 when an argument of `p` that must be known at compile time is not.
pub fn not_constant(p: Prim, args: &[Abs]) -> Option<String> {
    p.def().attrs.constant_args.iter().find_map(|&(i, name)| {
        let a = args.get(i)?;
        if matches!(a, Abs::Bottom) || to_value(a).is_some() {
            return None;
        }
        let what = match a {
            Abs::Str(None) => "a str computed at run time".to_string(),
            Abs::Any => "a value known only at run time".to_string(),
            other => format!("{other} (known only at run time)"),
        };
        Some(format!(
            "the {name} must be known at compile time (a constant such as 'reflect'), got {what}"
        ))
    })
}

/// `operation: message`, unless the message already starts with the operation's name (numpy's
/// matmul messages do).
pub fn shape_message(operation: &str, msg: &str) -> String {
    let msg = msg.trim_end();
    if msg
        .strip_prefix(operation)
        .is_some_and(|rest| rest.starts_with(':'))
    {
        msg.to_string()
    } else {
        format!("{operation}: {msg}")
    }
}

/// The abstract result of calling primitive `p` with arguments `args` (already bound to its
/// signature): a Parameter passed where a value is expected is read; a `Bottom` argument gives
/// `Bottom`, except to the primitives that hold values lazily; the declared rule gives types
/// and shapes (and compile-time shape errors, even for constant tensors); constant arguments
/// fold by running the reference implementation, so folding has the runtime semantics.
pub fn infer_prim(p: Prim, args: &[Abs]) -> Rule {
    if let Some(read) = read_refs(p, args, |a| match a {
        Abs::Ref(r) => Some(r.value()),
        _ => None,
    }) {
        return infer_prim(p, &read);
    }
    if args.iter().any(Abs::is_bottom) && !p.def().attrs.lazy {
        return Ok(Abs::Bottom);
    }
    let typed = p.infer(args)?;
    if p.foldable()
        && !typed.is_bottom()
        && let Some(values) = args.iter().map(to_value).collect::<Option<Vec<_>>>()
    {
        return Ok(match call_prim(p, &values, &mut std::io::sink()) {
            // A huge container stays a run-time value: its type would list every item.
            Ok(v) if v.too_large_to_fold() => typed,
            Ok(v) => from_value(&v),
            // The operation raises: keep it for run time.
            Err(_) => Abs::Bottom,
        });
    }
    Ok(typed)
}

/// Whether evaluating `p` on these arguments can raise at run time (operations that cannot
/// may be removed when their result is unused).
pub fn may_raise(p: Prim, args: &[Abs]) -> bool {
    (p.def().raises)(args)
}

/// The arguments with every Parameter that `p` does not take by reference read (`read` gives
/// the value of a Parameter); `None` when there is none.
fn read_refs<T: Clone>(p: Prim, args: &[T], read: impl Fn(&T) -> Option<T>) -> Option<Vec<T>> {
    let reads = |i: usize, a: &T| !p.takes_ref(i) && read(a).is_some();
    if !args.iter().enumerate().any(|(i, a)| reads(i, a)) {
        return None;
    }
    Some(
        args.iter()
            .enumerate()
            .map(|(i, a)| match reads(i, a) {
                true => read(a).unwrap_or_else(|| a.clone()),
                false => a.clone(),
            })
            .collect(),
    )
}

/// Drops the effect states a call passes last (they carry no data).
pub fn without_monads(mut args: Vec<Value>) -> Vec<Value> {
    while matches!(args.last(), Some(Value::Monad(_))) {
        args.pop();
    }
    args
}

/// Calls a primitive whose arguments are already bound (defaults filled). The state plumbing
/// receives its states; every other primitive has them dropped, and reads the Parameters it
/// does not take by reference. Control primitives that call functions (`CallKw`) are run by
/// the engines.
pub fn call_prim(p: Prim, args: &[Value], out: &mut dyn Write) -> OpResult {
    let def = p.def();
    if def.attrs.states {
        return (def.eval)(p, args, out);
    }
    let mut args = args;
    while let [rest @ .., Value::Monad(_)] = args {
        args = rest;
    }
    match read_refs(p, args, |a| match a {
        Value::Ref(r) => Some(Value::Tensor(r.get())),
        _ => None,
    }) {
        Some(read) => (def.eval)(p, &read, out),
        None => (def.eval)(p, args, out),
    }
}

fn call_kw_error(msg: &str) -> PyErr {
    ("SystemError", format!("internal error: {msg}"))
}

/// Splits the arguments of `CallKw(f, names, args..., kwvalues...)` into the function, the
/// positional arguments and the keyword names with their values.
#[allow(clippy::type_complexity)]
pub fn split_call_kw(
    args: Vec<Value>,
) -> Result<(Value, Vec<Value>, (Vec<String>, Vec<Value>)), PyErr> {
    let mut args = args.into_iter();
    let f = args
        .next()
        .ok_or_else(|| call_kw_error("CallKw without a function"))?;
    let names: Vec<String> = match &args.next() {
        Some(Value::Tuple(t)) => t.iter().map(to_str).collect(),
        _ => return Err(call_kw_error("CallKw without keyword names")),
    };
    let mut positional: Vec<Value> = args.collect();
    let split = positional
        .len()
        .checked_sub(names.len())
        .ok_or_else(|| call_kw_error("CallKw arity"))?;
    let values = positional.split_off(split);
    Ok((f, positional, (names, values)))
}

/// Whether `p` binds a star or `**` call's arguments to its first argument's signature
/// (`StarBind`, `DictBind`) or routes sensitivities back through that binding (their
/// gradients): the function is read for its signature, never called or used as a value.
pub fn binds_arguments(p: Prim) -> bool {
    matches!(
        p,
        Prim::StarBind | Prim::StarBindGrad | Prim::DictBind | Prim::DictBindGrad
    )
}

/// Splits the arguments of `CallStar(f, names, args, kwvalues...)` into the function, the
/// positional arguments (the items of `args`) and the keyword arguments, if any.
#[allow(clippy::type_complexity)]
pub fn split_call_star(
    args: Vec<Value>,
) -> Result<(Value, Vec<Value>, Option<(Vec<String>, Vec<Value>)>), PyErr> {
    let mut args = args.into_iter();
    let (Some(f), Some(names), Some(positional)) = (args.next(), args.next(), args.next()) else {
        return Err(call_kw_error("CallStar arguments"));
    };
    let (Value::Tuple(names), Value::Tuple(positional)) = (&names, &positional) else {
        return Err(call_kw_error("CallStar arguments"));
    };
    let values: Vec<Value> = args.collect();
    if values.len() != names.len() {
        return Err(call_kw_error("CallStar arity"));
    }
    // Always bound by name: the items are the arguments one by one, whatever their count.
    let kw = Some((names.iter().map(to_str).collect(), values));
    Ok((f, positional.to_vec(), kw))
}

/// Splits the arguments of `CallDict(f, args, kwargs)` into the function, the positional
/// arguments (the items of `args`) and the keyword arguments (the items of `kwargs`).
#[allow(clippy::type_complexity)]
pub fn split_call_dict(
    args: Vec<Value>,
) -> Result<(Value, Vec<Value>, Option<(Vec<String>, Vec<Value>)>), PyErr> {
    let [f, positional, kwargs] =
        <[Value; 3]>::try_from(args).map_err(|_| call_kw_error("CallDict arguments"))?;
    let (Value::Tuple(positional), Value::Dict(kwargs)) = (&positional, &kwargs) else {
        return Err(call_kw_error("CallDict arguments"));
    };
    let names = kwargs.items.iter().map(|(k, _)| k.to_string()).collect();
    let values = kwargs.items.iter().map(|(_, v)| v.clone()).collect();
    Ok((f, positional.to_vec(), Some((names, values))))
}

/// Keyword arguments of a call: their names and values.
pub type Keywords = (Vec<String>, Vec<Value>);

/// What calling a value leaves to the engine: a closure to enter with its arguments, or the
/// call's value.
pub enum Called {
    Enter(Rc<Closure>, Vec<Value>, Option<Keywords>),
    Done(Value),
}

/// Calls `callee` as both engines do: a keyword call unpacked, a partial application's bound
/// arguments put first, a primitive bound to its signature and called, a tensor method
/// called, anything else not callable. Entering a closure is the engine's.
pub fn call_value(
    callee: &Value,
    args: Vec<Value>,
    kw: Option<Keywords>,
    out: &mut dyn Write,
) -> Result<Called, PyErr> {
    let (mut callee, mut args, mut kw) = (callee.clone(), args, kw);
    loop {
        (callee, args, kw) = match &callee {
            Value::Closure(c) => return Ok(Called::Enter(c.clone(), args, kw)),
            Value::Prim(Prim::CallKw) => {
                let (f, positional, keywords) = split_call_kw(args)?;
                (f, positional, Some(keywords))
            }
            Value::Prim(Prim::CallStar) => split_call_star(args)?,
            Value::Prim(Prim::CallDict) => split_call_dict(without_monads(args))?,
            Value::Prim(p) => {
                let bound = bind_prim(*p, without_monads(args), kw)?;
                return call_prim(*p, &bound, out).map(Called::Done);
            }
            Value::Partial(pa) => {
                let all = pa.args.iter().cloned().chain(args).collect();
                (pa.func.clone(), all, kw)
            }
            Value::Method(m) => {
                let (names, values) = kw.unwrap_or_default();
                let kwargs = names.into_iter().zip(values).collect();
                return call_method(m.0, &m.1, without_monads(args), kwargs).map(Called::Done);
            }
            other => {
                let msg = format!("'{}' object is not callable", other.type_name());
                return Err(type_error(msg));
            }
        };
    }
}

/// Binds the positional and keyword arguments of a call of primitive `p` to its parameters.
pub fn bind_prim(
    p: Prim,
    args: Vec<Value>,
    kw: Option<(Vec<String>, Vec<Value>)>,
) -> Result<Vec<Value>, PyErr> {
    bind_call(p.signature(), &args, kw, |c| {
        from_const(c, &mut |_| Value::None)
    })
}

/// A call's arguments bound to `sig` as both engines bind them, Python's `TypeError` for a
/// mismatch; `kw` the keyword arguments' names and values, `default` makes a default.
pub fn bind_call(
    sig: &Signature,
    args: &[Value],
    kw: Option<(Vec<String>, Vec<Value>)>,
    default: impl FnMut(&Const) -> Value,
) -> Result<Vec<Value>, PyErr> {
    let (names, values) = kw.unwrap_or_default();
    let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    let dict = |items: Vec<(std::sync::Arc<str>, Value)>| {
        Value::Dict(Rc::new(crate::value::Dict::from_items(items)))
    };
    sig.bind_args(args, (&refs, &values), default, Value::tuple, dict)
        .map_err(|e| type_error(e.message(&sig.name)))
}
