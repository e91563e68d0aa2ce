//! The converter's float optimizations for inference models: Parameters read but never
//! written are constants of the model, so what only they determine is computed once
//! (`constants`), and a per-channel affine chain after a convolution or a matrix product —
//! an inference BatchNorm `(y − mean) / sqrt(var + eps) · gamma + beta`, or a bias — is folded
//! into the product's weights and one bias (`affine`).

use anfora_ir::{Const, NodeId, Prim, Span};
use anfora_ops::Value;
use anfora_ops::value::{from_const, to_const};
use anfora_tensor::{BinaryOp, DType, Tensor};

use crate::graph::Editor;
use crate::{ConvertError, Report};

/// Calls whose value only their arguments determine and that constant folding may compute:
/// arithmetic and data movement.
fn foldable(p: Prim) -> bool {
    const FOLDABLE: [Prim; 11] = [
        Prim::Add,
        Prim::Sub,
        Prim::Mul,
        Prim::Div,
        Prim::Neg,
        Prim::Sqrt,
        Prim::Rsqrt,
        Prim::Reshape,
        Prim::ExpandDims,
        Prim::Transpose,
        Prim::Cast,
    ];
    FOLDABLE.contains(&p)
}

/// The operations an affine chain is made of.
fn affine_op(p: Prim) -> bool {
    [Prim::Add, Prim::Sub, Prim::Mul, Prim::Div].contains(&p)
}

/// Computes every foldable call whose arguments are all known before the model runs
/// (constants and Parameters' values) and replaces it by its value.
pub fn constants(ed: &mut Editor, report: &mut Report) -> Result<(), ConvertError> {
    let mut folded = 0;
    for n in ed.module.graph_nodes(ed.entry) {
        let Some(p) = ed.module.callee_prim(n).filter(|p| foldable(*p)) else {
            continue;
        };
        let args: Option<Vec<Value>> = (ed.module.inputs(n)[1..].iter())
            .map(|&a| known_value(ed, a))
            .collect();
        let Some(args) = args else { continue };
        let Ok(value) = p.eval(&args) else { continue };
        let Some(c) = to_const(&value) else { continue };
        let v = ed.constant(c);
        ed.module.replace_uses(&[ed.entry], n, v);
        folded += 1;
    }
    if folded > 0 {
        report.change(format!(
            "{folded} operations on constants and Parameters computed once"
        ));
    }
    Ok(())
}

/// The value of `n` when it is known before the model runs.
fn known_value(ed: &Editor, n: NodeId) -> Option<Value> {
    match ed.module.constant(n) {
        Some(Const::Ref(_)) | Some(Const::Prim(_)) => None,
        Some(c) => Some(from_const(c, &mut |_| Value::None)),
        None => ed.known_tensor(n).map(Value::Tensor),
    }
}

/// `y = a · x + b` per output channel, built up one operation at a time.
struct Affine {
    a: Vec<f64>,
    b: Vec<f64>,
}

impl Affine {
    /// Applies `y ∘= c` (per channel) for `op` with the constant `c` on the right (or on the
    /// left for `Add`/`Mul`). `None` for an operation that is not affine in `y`.
    fn then(&mut self, op: Prim, c: &[f64], y_left: bool) -> Option<()> {
        for (j, (a, b)) in self.a.iter_mut().zip(self.b.iter_mut()).enumerate() {
            let c = c[if c.len() == 1 { 0 } else { j }];
            match (op, y_left) {
                (Prim::Add, _) => *b += c,
                (Prim::Sub, true) => *b -= c,
                (Prim::Mul, _) => {
                    *a *= c;
                    *b *= c;
                }
                (Prim::Div, true) => {
                    *a /= c;
                    *b /= c;
                }
                _ => return None,
            }
        }
        Some(())
    }
}

/// The channels a constant applies to, for an output of `channels` channels along `axis` of
/// `rank` axes: a number, or a tensor broadcast along that axis alone.
fn per_channel(c: &Value, channels: usize, axis: usize, rank: usize) -> Option<Vec<f64>> {
    match c {
        Value::Float(f) => Some(vec![*f]),
        Value::Int(i) => Some(vec![*i as f64]),
        Value::Tensor(t) if t.numel() == 1 => Some(t.to_f64_vec()),
        Value::Tensor(t) => {
            let s = t.shape();
            // Right-aligned against the output's shape: `channels` at `axis`, 1 elsewhere.
            let offset = rank.checked_sub(s.len())?;
            let fits = s.iter().enumerate().all(|(i, &d)| {
                if i + offset == axis {
                    d == channels
                } else {
                    d == 1
                }
            });
            (fits && t.numel() == channels).then(|| t.to_f64_vec())
        }
        _ => None,
    }
}

/// Folds the per-channel affine chain after each convolution and matrix product with known
/// weights into its weights and one bias.
pub fn affine(ed: &mut Editor, report: &mut Report) -> Result<(), ConvertError> {
    for n in ed.module.graph_nodes(ed.entry) {
        let prim = ed.module.callee_prim(n);
        let (axis, rank) = match prim {
            Some(Prim::Conv2D) => (1, 4),
            Some(Prim::Gemm) => (1, 2),
            _ => continue,
        };
        let inputs = ed.module.inputs(n).to_vec();
        let Some(w) = ed
            .known_tensor(inputs[2])
            .filter(|t| t.dtype() == DType::F32)
        else {
            continue;
        };
        let transposed = prim == Some(Prim::Gemm)
            && !matches!(ed.module.constant(inputs[5]), Some(Const::Bool(false)));
        let channels = match prim {
            Some(Prim::Conv2D) => w.shape()[0],
            _ if transposed => w.shape()[0],
            _ => w.shape()[w.ndim() - 1],
        };
        if prim == Some(Prim::Gemm) && !matches!(ed.module.constant(inputs[3]), Some(Const::None)) {
            // The accumulator must be a known bias: one value, or one per channel.
            let fits = (ed.known_tensor(inputs[3]))
                .is_some_and(|c| c.numel() == channels || c.numel() == 1);
            if !fits {
                continue;
            }
        }
        let mut f = Affine {
            a: vec![1.0; channels],
            b: vec![0.0; channels],
        };
        let (mut last, mut steps) = (n, 0);
        let users = ed.users();
        while let Some(&[u]) = users.get(&last).map(Vec::as_slice) {
            let Some(op) = ed.module.callee_prim(u).filter(|p| affine_op(*p)) else {
                break;
            };
            let ui = ed.module.inputs(u).to_vec();
            let (y_left, other) = if ui[1] == last {
                (true, ui[2])
            } else {
                (false, ui[1])
            };
            let Some(c) =
                known_value(ed, other).and_then(|c| per_channel(&c, channels, axis, rank))
            else {
                break;
            };
            if f.then(op, &c, y_left).is_none() {
                break;
            }
            (last, steps) = (u, steps + 1);
        }
        if steps == 0 {
            continue;
        }
        let span = ed.module.node(last).span;
        let new = rebuilt(ed, n, &inputs, &w, &f, transposed, span)?;
        ed.module.replace_uses(&[ed.entry], last, new);
        report.change(format!(
            "{steps} per-channel operations after {} folded into its weights and bias",
            prim.map_or("a product", |p| p.name())
        ));
    }
    Ok(())
}

/// The product with weights scaled per channel by `f.a`, and its bias `f.a · bias + f.b`.
fn rebuilt(
    ed: &mut Editor,
    n: NodeId,
    inputs: &[NodeId],
    w: &Tensor,
    f: &Affine,
    transposed: bool,
    span: Span,
) -> Result<NodeId, ConvertError> {
    let channels = f.a.len();
    let conv = ed.module.callee_prim(n) == Some(Prim::Conv2D);
    // The scale as a tensor broadcast along the weights' channel axis.
    let scale_shape: Vec<usize> = match (conv, transposed) {
        (true, _) => vec![channels, 1, 1, 1],
        (false, true) => vec![channels, 1],
        (false, false) => vec![1, channels],
    };
    let a = Tensor::from_f64(f.a.clone(), &scale_shape)?.try_cast(DType::F32)?;
    let scaled = Tensor::binary(BinaryOp::Mul, w, &a)?;
    let old = if conv {
        None
    } else {
        inputs.get(3).and_then(|&b| ed.known_tensor(b))
    };
    let old_bias = match old {
        Some(t) => t.reshape(&[-1])?.to_f64_vec(),
        None => vec![0.0; channels],
    };
    let bias: Vec<f64> = (0..channels)
        .map(|j| f.a[j] * old_bias.get(j).copied().unwrap_or(old_bias[0]) + f.b[j])
        .collect();
    let wn = ed.tensor(scaled);
    if conv {
        let mut args = inputs[1..].to_vec();
        args[1] = wn;
        let y = ed.call_before(n, Prim::Conv2D, &args, span)?;
        let b = Tensor::from_f64(bias, &[channels, 1, 1])?.try_cast(DType::F32)?;
        let bn = ed.tensor(b);
        ed.call_before(n, Prim::Add, &[y, bn], span)
    } else {
        let b = Tensor::from_f64(bias, &[channels])?.try_cast(DType::F32)?;
        let bn = ed.tensor(b);
        let args = [inputs[1], wn, bn, inputs[4], inputs[5]];
        ed.call_before(n, Prim::Gemm, &args, span)
    }
}
