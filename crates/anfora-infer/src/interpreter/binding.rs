//! `StarBind`/`DictBind` and their gradients: the arguments of a star or `**` call bound to
//! its callee's signature at compile time. The grad stage writes such a call of a function
//! named in the program as a plain call of the binding's items (`anfora-ad`'s `stars`), and
//! `bind_calls` makes the bindings plain nodes.

use anfora_ir::codes::NO_BACKWARD_RULE;
use anfora_ir::diag::Diagnostic;
use anfora_ir::{ArgPlace, GraphId, NodeId, Prim, Signature, arg_places};
use anfora_ops::abs::{Abs, CtxId, Func};
use anfora_ops::call::infer_prim;

use super::Interpreter;
use super::calls::{keyword_names, pick_args};

/// A bound call's arguments: positional, and keyword names and values.
pub(crate) struct CallArgs<T> {
    pub positional: Vec<T>,
    pub names: Vec<String>,
    pub keywords: Vec<T>,
}

/// Where the arguments of a binding primitive are: the sensitivity `d` of the gradients' and
/// whether the keywords come in a dict (`DictBind`) rather than named values (`StarBind`).
pub(crate) fn layout(p: Prim) -> Option<(Option<usize>, bool)> {
    match p {
        Prim::StarBind => Some((None, false)),
        Prim::StarBindGrad => Some((Some(3), false)),
        Prim::DictBind => Some((None, true)),
        Prim::DictBindGrad => Some((Some(2), true)),
        _ => None,
    }
}

/// The one graph every function in `callee` is.
pub(crate) fn single_graph(callee: &Abs) -> Option<GraphId> {
    let Abs::Func(fs) = callee else {
        return None;
    };
    let graph = |f: &Func| match f {
        Func::Closure { graph, .. } => Some(*graph),
        _ => None,
    };
    let h = graph(fs.first()?)?;
    fs.iter().all(|f| graph(f) == Some(h)).then_some(h)
}

/// The abstract of the sensitivity an argument that went to `place` gets from `d`.
pub(crate) fn place_abs(d: &Abs, place: Option<ArgPlace>) -> Abs {
    let Some(place) = place else {
        return Abs::None;
    };
    let item = |d: &Abs, i: usize| {
        infer_prim(Prim::GradItem, &[d.clone(), Abs::Int(Some(i as i64))]).unwrap_or(Abs::Any)
    };
    let p = item(d, place.param);
    match place.item {
        Some(q) => item(&p, q),
        None => p,
    }
}

impl Interpreter<'_> {
    /// `StarBind(f, names, args, kw...)`, `DictBind(f, args, kwargs)` and their gradients
    /// (`d` after the tuple). A binding that fails is the call's TypeError: no value.
    pub(super) fn bind_args(&mut self, c: CtxId, n: NodeId, p: Prim, mut args: Vec<Abs>) -> Abs {
        let Some((d_at, dict)) = layout(p) else {
            return Abs::Any;
        };
        let d = d_at.map(|i| args.remove(i));
        let call = match call_args(&args, dict) {
            Ok(call) => call,
            Err(None) => return Abs::Bottom,
            Err(Some(why)) => return self.refuse_binding(c, n, dict, why),
        };
        let sig: Option<Signature> =
            single_graph(&args[0]).and_then(|h| self.module.graph(h).signature.clone());
        let Some(sig) = sig else {
            let why = "its callee is not one function named in the program";
            return self.refuse_binding(c, n, dict, why);
        };
        let refs: Vec<&str> = call.names.iter().map(String::as_str).collect();
        let Ok(sources) = sig.bind(call.positional.len(), &refs) else {
            return Abs::Bottom;
        };
        let Some(d) = d else {
            let bound = pick_args(
                sources,
                &call.positional,
                (&refs, &call.keywords),
                &mut |k| self.constant(c, k),
            );
            return Abs::tuple(bound);
        };
        let (positional, keywords) = arg_places(&sources, call.positional.len(), refs.len());
        let positional = Abs::tuple(positional.into_iter().map(|p| place_abs(&d, p)).collect());
        let keywords: Vec<Abs> = keywords.into_iter().map(|p| place_abs(&d, p)).collect();
        if dict {
            Abs::tuple(vec![positional, Abs::tuple(keywords)])
        } else {
            Abs::tuple(std::iter::once(positional).chain(keywords).collect())
        }
    }
}

impl Interpreter<'_> {
    /// E0502 at the star call `n` of differentiated code whose binding is not known at
    /// compile time, because `why`. (No value: the program is refused.)
    fn refuse_binding(&mut self, c: CtxId, n: NodeId, dict: bool, why: &str) -> Abs {
        let (form, what) = match dict {
            true => ("`**` arguments", "a dict whose keys are"),
            false => ("star-arguments", "a tuple whose length is"),
        };
        let d = Diagnostic::error(
            NO_BACKWARD_RULE,
            format!("a call with {form} in differentiated code: {why}"),
            self.module.node(n).span,
        )
        .with_label("the gradient flows through this call")
        .with_hint(format!(
            "in differentiated code, a call with {form} calls one function named in the \
             program (not a function value), with {what} known at compile time"
        ));
        self.ctx_mut(c).refusals.push(d);
        Abs::Bottom
    }
}

/// The arguments of `StarBind(f, names, args, kw...)` or `DictBind(f, args, kwargs)` (`dict`);
/// `Err(None)` while one is still unknown (`Bottom`), `Err(message)` when they are not known
/// at compile time.
fn call_args(args: &[Abs], dict: bool) -> Result<CallArgs<Abs>, Option<&'static str>> {
    let tuple = |a: &Abs| match a {
        Abs::Tuple(items) => Ok(items.to_vec()),
        Abs::Bottom => Err(None),
        _ => Err(Some(
            "the number of star-arguments is not known at compile time",
        )),
    };
    if dict {
        let positional = tuple(args.get(1).unwrap_or(&Abs::Any))?;
        return match args.get(2) {
            Some(Abs::Dict(items)) => Ok(CallArgs {
                positional,
                names: items.iter().map(|(k, _)| k.to_string()).collect(),
                keywords: items.iter().map(|(_, a)| a.clone()).collect(),
            }),
            Some(Abs::Bottom) => Err(None),
            _ => Err(Some(
                "the keys of the `**` dict are not known at compile time",
            )),
        };
    }
    let names = match args.get(1) {
        Some(Abs::Tuple(names)) => keyword_names(names),
        _ => return Err(Some("the keyword names are not known at compile time")),
    };
    Ok(CallArgs {
        positional: tuple(args.get(2).unwrap_or(&Abs::Any))?,
        names,
        keywords: args.get(3..).unwrap_or(&[]).to_vec(),
    })
}
