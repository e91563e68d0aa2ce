//! `StarBind`/`DictBind` and their gradients, which the grad stage writes for a star or `**`
//! call of a function named in the program (`anfora-ad`'s `stars`): the VM runs resolved
//! graphs as written, so it binds them when they run, as the compiled engine's specialization
//! binds them before; the same signature and the same placement of arguments.

use std::io::Write;

use anfora_ir::{ArgPlace, Prim, arg_places};
use anfora_ops::call::{self, split_call_dict, split_call_star};
use anfora_ops::pynum::{PyErr, type_error};
use anfora_ops::value::Value;

use crate::machine::{Vm, internal};

impl Vm<'_> {
    /// Runs binding `p` on `args`: `StarBind(f, names, args, kw...)` and `DictBind(f, args,
    /// kwargs)` give the tuple of `f`'s bound parameters; their gradients (the tuple's
    /// sensitivity `d` after the arguments' tuple) give the arguments' sensitivities.
    pub(crate) fn run_binding(
        &self,
        p: Prim,
        mut args: Vec<Value>,
        out: &mut dyn Write,
    ) -> Result<Value, PyErr> {
        let d_at = match p {
            Prim::StarBindGrad => Some(3),
            Prim::DictBindGrad => Some(2),
            _ => None,
        };
        let d = match d_at {
            Some(i) if i < args.len() => Some(args.remove(i)),
            Some(_) => return Err(internal(format!("{} arguments", p.name()))),
            None => None,
        };
        let dict = matches!(p, Prim::DictBind | Prim::DictBindGrad);
        let (f, positional, kw) = match dict {
            true => split_call_dict(args)?,
            false => split_call_star(args)?,
        };
        let Value::Closure(c) = &f else {
            return Err(internal(format!("{} of a {}", p.name(), f.type_name())));
        };
        let graph = self.module.graph(c.graph);
        let sig = (graph.signature.as_ref()).ok_or_else(|| {
            internal(format!(
                "{} of @{} without a signature",
                p.name(),
                graph.name
            ))
        })?;
        let Some(d) = d else {
            let bound = call::bind_call(sig, &positional, kw, |k| self.constant(k))?;
            return Ok(Value::tuple(bound));
        };
        let (names, _) = kw.unwrap_or_default();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let sources =
            (sig.bind(positional.len(), &refs)).map_err(|e| type_error(e.message(&sig.name)))?;
        let (at_positional, at_keyword) = arg_places(&sources, positional.len(), refs.len());
        let mut of = |place: Option<ArgPlace>| sensitivity(&d, place, out);
        let positional = Value::tuple(
            at_positional
                .into_iter()
                .map(&mut of)
                .collect::<Result<_, _>>()?,
        );
        let keywords: Vec<Value> = at_keyword.into_iter().map(of).collect::<Result<_, _>>()?;
        Ok(match dict {
            true => Value::tuple(vec![positional, Value::tuple(keywords)]),
            false => Value::tuple(std::iter::once(positional).chain(keywords).collect()),
        })
    }
}

/// The sensitivity from `d` of the argument that went to `place` (`None` where none did).
fn sensitivity(d: &Value, place: Option<ArgPlace>, out: &mut dyn Write) -> Result<Value, PyErr> {
    let Some(place) = place else {
        return Ok(Value::None);
    };
    let item = |v: &Value, i: usize, out: &mut dyn Write| {
        call::call_prim(Prim::GradItem, &[v.clone(), Value::Int(i as i64)], out)
    };
    let whole = item(d, place.param, out)?;
    match place.item {
        Some(q) => item(&whole, q, out),
        None => Ok(whole),
    }
}
