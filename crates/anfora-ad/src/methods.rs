//! Tensor method calls in differentiated code become calls of their primitives.
//!
//! `x.sum()` is a call of the value `x.sum`; the J transform would call that value's J form,
//! which a tensor method does not have. The method's primitive has a backward rule, and
//! `x.sum(axis)` is `ReduceSum(x, axis)` bound to the primitive's signature (as the VM binds
//! the method's arguments), so the call is rewritten before J. Only calls whose arguments
//! map one to one are rewritten: reductions and `astype` by the primitive's signature,
//! `reshape`/`transpose`/`permute` with their axes packed as the method packs them. A dict's
//! `d.get(k, default)` (the one method other than a tensor's that compiled code has) becomes
//! `DictGet(d, k, default)` the same way.

use anfora_ir::analysis::reachable;
use anfora_ir::{ArgSource, Const, GraphId, Module, NodeId, NodeKind, Prim};
use anfora_ops::value::Method;

/// Rewrites the tensor method calls in the graphs `root` reaches.
pub(crate) fn to_primitives(m: &mut Module, root: GraphId) {
    for (g, nodes) in reachable(m, &[root]) {
        for n in nodes {
            if let Some(inputs) = primitive_call(m, g, n) {
                *m.inputs_mut(n).expect("a call") = inputs;
            }
        }
    }
}

/// The inputs of the primitive call that call `n` of `g` is, if it calls a tensor method.
fn primitive_call(m: &mut Module, g: GraphId, n: NodeId) -> Option<Vec<NodeId>> {
    let inputs = m.inputs(n).to_vec();
    let keyword = m.callee_prim(n) == Some(Prim::CallKw);
    let (callee, names, args) = if keyword {
        let Some(Const::Tuple(names)) = m.constant(*inputs.get(2)?) else {
            return None;
        };
        let names: Vec<String> = (names.iter())
            .map(|c| match c {
                Const::Str(s) => Some(s.to_string()),
                _ => None,
            })
            .collect::<Option<_>>()?;
        (inputs[1], names, inputs[3..].to_vec())
    } else {
        (inputs[0], Vec::new(), inputs[1..].to_vec())
    };
    let positional = &args[..args.len() - names.len()];
    if let Some(this) = dict_get_value(m, g, callee) {
        return bound(
            m,
            Prim::DictGet,
            this,
            positional,
            (&names, &args[positional.len()..]),
        );
    }
    let (this, method) = method_value(m, g, callee)?;
    let span = m.node(n).span;
    let prim = match method {
        Method::Astype => Prim::Cast,
        Method::Reshape | Method::Transpose | Method::Permute if names.is_empty() => {
            let prim = match method {
                Method::Reshape => Prim::Reshape,
                _ => Prim::Transpose,
            };
            let axes = match positional {
                [] if method == Method::Transpose => m.value(Const::None),
                [one] => *one,
                [_, _, ..] => {
                    let make = m.value(Const::Prim(Prim::MakeTuple));
                    let items = std::iter::once(make).chain(positional.iter().copied());
                    let t = m.apply_unordered(g, items.collect(), span);
                    m.insert_before(g, t, n);
                    t
                }
                // `reshape()`/`permute()` raise TypeError: left to the method.
                [] => return None,
            };
            return Some(vec![m.value(Const::Prim(prim)), this, axes]);
        }
        other => other.reduction()?,
    };
    // `x.sum(axis, keepdims=k)` binds as `ReduceSum(x, axis, keepdims=k)`.
    bound(
        m,
        prim,
        this,
        positional,
        (&names, &args[positional.len()..]),
    )
}

/// The inputs of `prim(this, positional..., names=kw...)` bound to the primitive's signature;
/// `None` where Python would raise TypeError (left to the method).
fn bound(
    m: &mut Module,
    prim: Prim,
    this: NodeId,
    positional: &[NodeId],
    (names, kw): (&[String], &[NodeId]),
) -> Option<Vec<NodeId>> {
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let sources = prim.signature().bind(positional.len() + 1, &refs).ok()?;
    let mut out = vec![m.value(Const::Prim(prim))];
    for s in sources {
        out.push(match s {
            ArgSource::Positional(0) => this,
            ArgSource::Positional(i) => positional[i - 1],
            ArgSource::Keyword(j) => kw[j],
            ArgSource::Default(c) => m.value(c),
            ArgSource::Packed(..) | ArgSource::PackedKeywords(_) => return None,
        });
    }
    Some(out)
}

/// `x` where node `f` of `g` is `GetAttr(x, "get")`.
fn dict_get_value(m: &Module, g: GraphId, f: NodeId) -> Option<NodeId> {
    let (x, name) = attribute(m, g, f)?;
    (&*name == "get").then_some(x)
}

/// `(x, name)` where node `f` of `g` is `GetAttr(x, name)`.
fn attribute(m: &Module, g: GraphId, f: NodeId) -> Option<(NodeId, std::sync::Arc<str>)> {
    let node = m.node(f);
    if !matches!(node.kind, NodeKind::Apply(_))
        || node.owner != Some(g)
        || m.callee_prim(f) != Some(Prim::GetAttr)
    {
        return None;
    }
    let ins = m.inputs(f);
    let Some(Const::Str(name)) = m.constant(*ins.get(2)?) else {
        return None;
    };
    Some((ins[1], name.clone()))
}

/// `(x, method)` where node `f` of `g` is `GetAttr(x, name)` of a tensor method's name.
fn method_value(m: &Module, g: GraphId, f: NodeId) -> Option<(NodeId, Method)> {
    let (x, name) = attribute(m, g, f)?;
    Some((x, Method::from_name(&name)?))
}
