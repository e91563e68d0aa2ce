//! Bias epilogues: a tensor added to a product of float matrices becomes the product's
//! accumulator, `Add(MatMul(a, b), c)` → `Gemm(a, b, c, False, False)` (and likewise for a
//! `Gemm` without one), so the sum costs neither a pass over the result nor a buffer.
//!
//! Only when the product has no other user (it is then computed once, inside the `Gemm`),
//! lives in the same graph as the sum, and `c` has the product's dtype and a shape that
//! broadcasts to the product's without growing it (a bias row, column or scalar).

use std::collections::HashMap;

use anfora_ir::{Const, GraphId, NodeId, Prim};
use anfora_ops::{Abs, TensorAbs};

use crate::Graphs;

/// The float matrix abstract of `n`, if it is one with a known shape.
fn matrix(p: &Graphs, n: NodeId) -> Option<(std::sync::Arc<TensorAbs>, [usize; 2])> {
    match p.abs(n) {
        Abs::Tensor(t) if t.dtype.is_float() => match t.known_shape()?[..] {
            [r, c] => Some((t, [r, c])),
            _ => None,
        },
        _ => None,
    }
}

/// A product `Gemm` can take over: its operands and transpose flags (`None`: not transposed).
struct Product {
    a: NodeId,
    b: NodeId,
    flags: Option<[NodeId; 2]>,
}

/// A `MatMul` of two float matrices of one dtype, or a `Gemm` without an accumulator.
fn product(p: &Graphs, n: NodeId) -> Option<Product> {
    let inputs = p.module.inputs(n);
    match p.module.callee_prim(n)? {
        Prim::MatMul => {
            let (a, _) = matrix(p, inputs[1])?;
            let (b, _) = matrix(p, inputs[2])?;
            (a.dtype == b.dtype).then_some(Product {
                a: inputs[1],
                b: inputs[2],
                flags: None,
            })
        }
        Prim::Gemm if matches!(p.module.constant(inputs[3]), Some(Const::None)) => Some(Product {
            a: inputs[1],
            b: inputs[2],
            flags: Some([inputs[4], inputs[5]]),
        }),
        _ => None,
    }
}

/// Whether a tensor of shape `c` broadcasts to `out` without changing it.
fn fits(c: &[usize], out: [usize; 2]) -> bool {
    c.len() <= 2
        && c.iter()
            .rev()
            .zip([out[1], out[0]])
            .all(|(&d, o)| d == 1 || d == o)
}

/// The accumulated product `Add` node `n` (in graph `g`) can become, and the accumulator.
fn epilogue(
    p: &Graphs,
    g: GraphId,
    n: NodeId,
    users: &HashMap<NodeId, usize>,
) -> Option<(Product, NodeId)> {
    let inputs = p.module.inputs(n);
    // Float addition commutes exactly, so the product may be either operand.
    [(inputs[1], inputs[2]), (inputs[2], inputs[1])]
        .into_iter()
        .find_map(|(prod, c)| {
            let ops = product(p, prod)?;
            let (out, out_shape) = matrix(p, prod)?;
            let Abs::Tensor(ct) = p.abs(c) else {
                return None;
            };
            let ok = users.get(&prod).copied() == Some(1)
                && p.module.node(prod).owner == Some(g)
                && ct.dtype == out.dtype
                && fits(&ct.known_shape()?, out_shape);
            ok.then_some((ops, c))
        })
}

pub fn run(p: &mut Graphs) -> bool {
    let a = anfora_ir::analysis::analyze(p.module, &[p.entry]);
    let users = crate::use_counts(p, &a);
    let mut found = vec![];
    for &g in &a.graphs {
        for &n in &a.nodes[g] {
            if p.module.callee_prim(n) == Some(Prim::Add) {
                found.extend(epilogue(p, g, n, &users).map(|e| (n, e)));
            }
        }
    }
    let changed = !found.is_empty();
    for (n, (prod, c)) in found {
        let [ta, tb] = prod.flags.unwrap_or_else(|| {
            let no = p.module.value(Const::Bool(false));
            [no, no]
        });
        let callee = p.module.value(Const::Prim(Prim::Gemm));
        // The sum keeps its place and abstract; the product, now unused, is dead code.
        *p.module.inputs_mut(n).expect("an Add") = vec![callee, prod.a, prod.b, c, ta, tb];
    }
    changed
}

#[cfg(test)]
mod tests {
    use anfora_ir::{Const, Prim};
    use anfora_ops::Abs;
    use anfora_ops::Value;
    use anfora_tensor::Tensor;

    use crate::testing::*;
    use crate::{dce, gemm};

    fn matrix(rows: usize, cols: usize, scale: f32) -> Value {
        let data = (0..rows * cols)
            .map(|i| (i % 7) as f32 * scale - 1.0)
            .collect();
        Value::Tensor(Tensor::from_f32(data, &[rows, cols]).unwrap())
    }

    /// `main(x, w, c) = x @ w + c` (or `c + x @ w`), with `c` of shape `bias`.
    fn biased(bias: &[usize], product_first: bool, reuse: bool) -> (Builder, anfora_ir::GraphId) {
        let mut b = Builder::new();
        let main = b.function("main");
        let x = b.param(main, "x", tensor_of(&[3, 4]));
        let w = b.param(main, "w", tensor_of(&[4, 5]));
        let c = b.param(main, "c", tensor_of(bias));
        let prod = b.prim(main, Prim::MatMul, &[x, w], tensor_of(&[3, 5]));
        let (l, r) = if product_first { (prod, c) } else { (c, prod) };
        let sum = b.prim(main, Prim::Add, &[l, r], tensor_of(&[3, 5]));
        let out = if reuse {
            b.prim(main, Prim::Mul, &[sum, prod], tensor_of(&[3, 5]))
        } else {
            sum
        };
        b.output(main, out);
        (b, main)
    }

    #[test]
    fn a_bias_added_to_a_product_becomes_its_accumulator() {
        for bias in [&[5][..], &[1, 5], &[3, 1], &[3, 5], &[], &[1]] {
            for product_first in [true, false] {
                let (mut b, main) = biased(bias, product_first, false);
                let n = bias.iter().product::<usize>();
                let data = (0..n).map(|i| i as f32 - 2.5).collect();
                let c = Value::Tensor(Tensor::from_f32(data, bias).unwrap());
                let args = vec![matrix(3, 4, 0.5), matrix(4, 5, 0.25), c];
                let before = b.run(main, args.clone());
                assert!(b.apply(main, gemm::run), "{bias:?}");
                b.apply(main, dce::run);
                assert_eq!(b.prims(main), vec![Prim::Gemm], "{bias:?}");
                assert_eq!(b.run(main, args), before, "{bias:?}");
            }
        }
    }

    #[test]
    fn products_that_cannot_take_the_sum_stay() {
        // The product is used again: computing it twice would cost more than the add.
        let (mut b, main) = biased(&[5], true, true);
        assert!(!b.apply(main, gemm::run));
        // A bias that would grow the result, or has another dtype.
        for (bias, abs) in [
            (&[2, 3, 5][..], tensor_of(&[2, 3, 5])),
            (
                &[5],
                Abs::tensor(anfora_ops::TensorAbs::new(
                    anfora_tensor::DType::F64,
                    vec![Some(5)],
                )),
            ),
        ] {
            let mut b = Builder::new();
            let main = b.function("main");
            let x = b.param(main, "x", tensor_of(&[3, 4]));
            let w = b.param(main, "w", tensor_of(&[4, 5]));
            let c = b.param(main, "c", abs);
            let prod = b.prim(main, Prim::MatMul, &[x, w], tensor_of(&[3, 5]));
            let out = tensor_of(&[bias.len().max(2) - 2 + 3, 5]);
            let sum = b.prim(main, Prim::Add, &[prod, c], out);
            b.output(main, sum);
            assert!(!b.apply(main, gemm::run), "{bias:?}");
        }
        // Vectors are not matrices.
        let mut b = Builder::new();
        let main = b.function("main");
        let x = b.param(main, "x", tensor_of(&[4]));
        let w = b.param(main, "w", tensor_of(&[4, 5]));
        let c = b.param(main, "c", tensor_of(&[5]));
        let prod = b.prim(main, Prim::MatMul, &[x, w], tensor_of(&[5]));
        let sum = b.prim(main, Prim::Add, &[prod, c], tensor_of(&[5]));
        b.output(main, sum);
        assert!(!b.apply(main, gemm::run));
    }

    #[test]
    fn a_transposed_product_keeps_its_flags() {
        let mut b = Builder::new();
        let main = b.function("main");
        let x = b.param(main, "x", tensor_of(&[4, 3]));
        let w = b.param(main, "w", tensor_of(&[4, 5]));
        let c = b.param(main, "c", tensor_of(&[5]));
        let none = b.konst(Const::None);
        let yes = b.konst(Const::Bool(true));
        let no = b.konst(Const::Bool(false));
        let prod = b.prim(main, Prim::Gemm, &[x, w, none, yes, no], tensor_of(&[3, 5]));
        let sum = b.prim(main, Prim::Add, &[prod, c], tensor_of(&[3, 5]));
        b.output(main, sum);
        let c = Value::Tensor(Tensor::from_f32(vec![1.0, -2.0, 0.5, 3.0, 0.0], &[5]).unwrap());
        let args = vec![matrix(4, 3, 0.5), matrix(4, 5, 0.25), c];
        let before = b.run(main, args.clone());
        assert!(before.0.is_ok(), "{before:?}");
        assert!(b.apply(main, gemm::run));
        b.apply(main, dce::run);
        assert_eq!(b.prims(main), vec![Prim::Gemm]);
        assert_eq!(b.run(main, args), before);
    }
}
