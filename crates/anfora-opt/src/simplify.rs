//! Local simplifications:
//! * `Switch` on a constant condition is the branch taken;
//! * calling `Partial(f, a...)` calls `f` with the bound arguments first;
//! * tuple plumbing: an item of a `MakeTuple`, `Unpack` of a tuple of the right length;
//! * constant folding of pure primitives, with the runtime's own implementations;
//! * arithmetic identities that hold for the types involved (`x * 1`, `x + 0` for ints,
//!   `x - 0`, `x / 1` for floats and float tensors, `-(-x)` for floats, `Truth` of a bool).

use std::collections::HashMap;

use anfora_infer::{Abs, rules};
use anfora_ir::{Const, NodeId, Prim};
use anfora_vm::value::{from_const, to_const};

use crate::{Program, rewrite};

/// Primitives that may be evaluated at compile time when their arguments are constants.
pub fn pure(p: Prim) -> bool {
    !matches!(
        p,
        Prim::Print | Prim::Assert | Prim::Raise | Prim::CheckBound | Prim::CallKw | Prim::Partial
    ) && !p.effects().io
        && !p.effects().mem
        && !p.effects().hidden
}

fn const_int(p: &Program, n: NodeId) -> Option<i64> {
    match p.module.constant(n) {
        Some(Const::Int(i)) => Some(*i),
        Some(Const::Bool(b)) => Some(*b as i64),
        _ => None,
    }
}

fn is_number_const(p: &Program, n: NodeId, v: f64) -> bool {
    match p.module.constant(n) {
        Some(Const::Int(i)) => *i as f64 == v,
        Some(Const::Float(f)) => *f == v,
        _ => false,
    }
}

/// Same type and shape as the result: `x op k` can be `x` itself.
fn keeps_type(result: &Abs, x: &Abs) -> bool {
    match (result, x) {
        (Abs::Int(_), Abs::Int(_)) | (Abs::Float(_), Abs::Float(_)) => true,
        (Abs::Tensor(r), Abs::Tensor(t)) => r.dtype == t.dtype && r.shape == t.shape && r.known_shape().is_some(),
        _ => false,
    }
}

pub fn run(p: &mut Program) -> bool {
    let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
    let mut rewritten = false;
    for g in p.graphs() {
        for n in p.module.graph_nodes(g) {
            let inputs = p.module.inputs(n).to_vec();
            // Calls of partial applications.
            if p.module.is_apply(inputs[0]) && p.module.callee_prim(inputs[0]) == Some(Prim::Partial) {
                let partial = p.module.inputs(inputs[0]).to_vec();
                let mut new_inputs = vec![partial[1]];
                new_inputs.extend_from_slice(&partial[2..]);
                new_inputs.extend_from_slice(&inputs[1..]);
                *p.module.inputs_mut(n).expect("an Apply") = new_inputs;
                rewritten = true;
                continue;
            }
            let Some(prim) = p.module.callee_prim(n) else { continue };
            let args = &inputs[1..];
            let result = p.abs(n);
            let replacement: Option<NodeId> = match prim {
                Prim::Switch => match p.module.constant(args[0]) {
                    Some(Const::Bool(true)) => Some(args[1]),
                    Some(Const::Bool(false)) => Some(args[2]),
                    _ => None,
                },
                Prim::TupleGetItem | Prim::GetItem => {
                    let tuple = args[0];
                    match (p.module.callee_prim(tuple), const_int(p, args[1])) {
                        (Some(Prim::MakeTuple), Some(i)) => {
                            let items = &p.module.inputs(tuple)[1..];
                            let len = items.len() as i64;
                            let j = if i < 0 { i + len } else { i };
                            (0..len).contains(&j).then(|| items[j as usize])
                        }
                        _ => None,
                    }
                }
                Prim::Unpack => match (p.abs(args[0]), const_int(p, args[1])) {
                    (Abs::Tuple(items), Some(k)) if items.len() as i64 == k => Some(args[0]),
                    _ => None,
                },
                Prim::Truth => matches!(p.abs(args[0]), Abs::Bool(_)).then_some(args[0]),
                Prim::Mul => {
                    if is_number_const(p, args[1], 1.0) && keeps_type(&result, &p.abs(args[0])) {
                        Some(args[0])
                    } else if is_number_const(p, args[0], 1.0) && keeps_type(&result, &p.abs(args[1])) {
                        Some(args[1])
                    } else {
                        None
                    }
                }
                Prim::Add => {
                    // -0.0 + 0 is 0.0: only ints may drop an added zero.
                    let int = |a: &Abs| matches!(a, Abs::Int(_)) || matches!(a, Abs::Tensor(t) if t.dtype.is_int());
                    if matches!(p.module.constant(args[1]), Some(Const::Int(0))) && int(&p.abs(args[0])) && keeps_type(&result, &p.abs(args[0])) {
                        Some(args[0])
                    } else if matches!(p.module.constant(args[0]), Some(Const::Int(0))) && int(&p.abs(args[1])) && keeps_type(&result, &p.abs(args[1])) {
                        Some(args[1])
                    } else {
                        None
                    }
                }
                Prim::Sub | Prim::Div => {
                    let unit = if prim == Prim::Sub { 0.0 } else { 1.0 };
                    let float = matches!(p.abs(args[0]), Abs::Float(_))
                        || matches!(p.abs(args[0]), Abs::Tensor(ref t) if t.dtype.is_float())
                        || (prim == Prim::Sub && matches!(p.abs(args[0]), Abs::Int(_)));
                    (is_number_const(p, args[1], unit) && float && keeps_type(&result, &p.abs(args[0]))).then_some(args[0])
                }
                Prim::Neg => {
                    let inner = args[0];
                    let float = matches!(p.abs(inner), Abs::Float(_) | Abs::Tensor(_)) && !matches!(p.abs(inner), Abs::Tensor(ref t) if t.dtype.is_int());
                    (p.module.callee_prim(inner) == Some(Prim::Neg) && float).then(|| p.module.inputs(inner)[1])
                }
                _ => None,
            };
            if let Some(r) = replacement {
                repl.insert(n, r);
                continue;
            }
            // Constant folding.
            if pure(prim) && !matches!(prim, Prim::Switch | Prim::MakeTuple | Prim::MakeList) {
                let values: Option<Vec<_>> = args
                    .iter()
                    .map(|&a| p.module.constant(a).map(|c| from_const(c, &mut |_| anfora_vm::Value::None)))
                    .collect();
                let has_graph = args.iter().any(|&a| {
                    let mut g = false;
                    if let Some(c) = p.module.constant(a) {
                        c.for_each_graph(&mut |_| g = true);
                    }
                    g
                });
                if let (Some(values), false) = (values, has_graph)
                    && let Ok(v) = anfora_vm::ops::call_prim(prim, &values, &mut std::io::sink())
                    && let Some(c) = to_const(&v)
                    && !matches!(&c, Const::Tensor(t) if t.numel() > rules::MAX_CONST_ELEMENTS)
                {
                    let span = p.module.node(n).span;
                    let k = p.module.value_at(c, span);
                    p.abstracts.insert(k, rules::from_value(&v));
                    repl.insert(n, k);
                }
            }
        }
    }
    let changed = rewritten || !repl.is_empty();
    rewrite::apply(p, &repl);
    changed
}
