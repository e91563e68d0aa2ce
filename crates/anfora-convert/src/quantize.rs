//! The quantizing rewrite of a model's products.
//!
//! A *layer* is a product of the entry graph with weights known before the model runs (a
//! Parameter or a constant): `Gemm(x, w, bias, False, tb)` or `MatMul(x, w)` of a float32
//! m×k `x`, with the `ReLU` that alone uses it. Weights are quantized to `i8` per output
//! column (per tensor with `per_tensor`).
//! * `weight-int8`: the product becomes `MatMulWeightOnly(x, wq, scales)` (plus the bias):
//!   float32 activations, 8-bit weights.
//! * `int8`: activations are `u8` with the scale and zero point calibration chose. The
//!   product becomes `QLinearMatMul` with its bias in `i32` and its ReLU fused; its input is
//!   quantized once (`QuantizeLinear`) unless the previous layer already gives it as `u8`
//!   (through a `Reshape` too), and its output stays `u8` where only layers read it, so the
//!   model never dequantizes between two quantized layers. A result read as float32 is the
//!   product's float32 form.

use std::collections::HashMap;

use anfora_ir::{Const, NodeId, Prim, Span};
use anfora_ops::Abs;
use anfora_tensor::{DType, Tensor};

use crate::calibrate::{QuantParams, quantize_weights_i8, weight_scales};
use crate::graph::Editor;
use crate::{ConvertError, Report};

/// A product the rewrite replaces.
pub struct Layer {
    pub node: NodeId,
    pub x: NodeId,
    /// The k×n float32 weights (transposed already where the product transposes them).
    pub w: Tensor,
    pub bias: Option<Tensor>,
    /// The `ReLU` that alone reads the product.
    pub relu: Option<NodeId>,
    pub span: Span,
}

impl Layer {
    /// The node whose value the layer gives: its ReLU's, or the product's.
    pub fn out(&self) -> NodeId {
        self.relu.unwrap_or(self.node)
    }

    fn describe(&self) -> String {
        let (k, n) = (self.w.shape()[0], self.w.shape()[1]);
        let relu = if self.relu.is_some() { " + ReLU" } else { "" };
        format!("{k}×{n} product{relu}")
    }
}

fn is_false(ed: &Editor, n: NodeId) -> Option<bool> {
    match ed.module.constant(n) {
        Some(Const::Bool(b)) => Some(!b),
        _ => None,
    }
}

fn f32_matrix(a: &Abs) -> bool {
    matches!(a, Abs::Tensor(t) if t.dtype == DType::F32 && t.shape.len() == 2)
}

/// The layers of the entry graph, in evaluation order; what is kept in float32 goes in the
/// report with the reason.
pub fn layers(ed: &Editor, report: &mut Report) -> Result<Vec<Layer>, ConvertError> {
    let users = ed.users();
    let mut found = Vec::new();
    for n in ed.module.graph_nodes(ed.entry) {
        let Some(prim) = ed.module.callee_prim(n) else {
            continue;
        };
        let inputs = ed.module.inputs(n).to_vec();
        let (x, w, bias, transposed) = match prim {
            Prim::Gemm => {
                if is_false(ed, inputs[4]) != Some(true) {
                    report.keep(format!(
                        "{}: a product with a transposed input",
                        prim.name()
                    ));
                    continue;
                }
                (
                    inputs[1],
                    inputs[2],
                    Some(inputs[3]),
                    is_false(ed, inputs[5]) == Some(false),
                )
            }
            Prim::MatMul => (inputs[1], inputs[2], None, false),
            Prim::Conv2D => {
                report.keep("Conv2D: no int8 convolution kernel yet".into());
                continue;
            }
            _ => continue,
        };
        let Some(mut wt) = ed.known_tensor(w).filter(|t| t.dtype() == DType::F32) else {
            report.keep(format!(
                "{}: its weights are not known before the model runs",
                prim.name()
            ));
            continue;
        };
        if !f32_matrix(&ed.abs(x)) || wt.ndim() != 2 {
            report.keep(format!("{}: not a float32 matrix product", prim.name()));
            continue;
        }
        if transposed {
            wt = wt.transpose(None)?.contiguous_host()?;
        }
        let n_out = wt.shape()[1];
        let bias = match bias.map(|b| (b, ed.module.constant(b).cloned())) {
            None | Some((_, Some(Const::None))) => None,
            Some((b, _)) => match ed.known_tensor(b) {
                Some(t) if t.dtype() == DType::F32 && t.numel() == n_out && t.ndim() <= 2 => {
                    Some(t.reshape(&[n_out as i64])?)
                }
                _ => {
                    report.keep(format!(
                        "{}: its bias is not one value per column",
                        prim.name()
                    ));
                    continue;
                }
            },
        };
        let relu = match users.get(&n).map(Vec::as_slice) {
            Some(&[u]) if ed.module.callee_prim(u) == Some(Prim::Relu) => Some(u),
            _ => None,
        };
        let span = ed.module.node(n).span;
        found.push(Layer {
            node: n,
            x,
            w: wt,
            bias,
            relu,
            span,
        });
    }
    Ok(found)
}

/// The weights as `i8` with their column scales.
fn quantized_weights(w: &Tensor, per_tensor: bool) -> Result<(Tensor, Tensor), ConvertError> {
    let (k, n) = (w.shape()[0], w.shape()[1]);
    let values: Vec<f32> = w.to_f64_vec().into_iter().map(|v| v as f32).collect();
    let mut scales = weight_scales(&values, k, n)?;
    if per_tensor {
        let top = scales.iter().copied().fold(0.0f32, f32::max);
        scales.iter_mut().for_each(|s| *s = top);
    }
    let q = quantize_weights_i8(&values, n, &scales);
    Ok((
        Tensor::from_i8(q, &[k, n])?,
        Tensor::from_f32(scales, &[n])?,
    ))
}

/// The weight-only rewrite of every layer.
pub fn weight_only(
    ed: &mut Editor,
    layers: &[Layer],
    per_tensor: bool,
    report: &mut Report,
) -> Result<(), ConvertError> {
    for l in layers {
        let (wq, scales) = quantized_weights(&l.w, per_tensor)?;
        let (wn, sn) = (ed.tensor(wq), ed.tensor(scales));
        let mut y = ed.call_before(l.node, Prim::WeightOnlyMatMul, &[l.x, wn, sn], l.span)?;
        if let Some(b) = &l.bias {
            let bn = ed.tensor(b.clone());
            y = ed.call_before(l.node, Prim::Add, &[y, bn], l.span)?;
        }
        ed.module.replace_uses(&[ed.entry], l.node, y);
        report.change(format!(
            "{}: int8 weights, float32 activations",
            l.describe()
        ));
    }
    Ok(())
}

/// The full int8 rewrite of every layer, with the activations' quantization from `params`
/// (by node: each layer's input and output).
pub fn int8(
    ed: &mut Editor,
    layers: &[Layer],
    params: &HashMap<NodeId, QuantParams>,
    per_tensor: bool,
    report: &mut Report,
) -> Result<(), ConvertError> {
    let products: Vec<NodeId> = layers.iter().map(|l| l.node).collect();
    // The u8 form of a float node and its quantization.
    let mut quantized: HashMap<NodeId, (NodeId, QuantParams)> = HashMap::new();
    for l in layers {
        let users = ed.users();
        let (qx, xq) = u8_input(ed, l, params, &mut quantized)?;
        let (wq, scales) = quantized_weights(&l.w, per_tensor)?;
        let bias = match &l.bias {
            Some(b) => {
                let s = scales.as_f32_slice().expect("float32 scales");
                let q: Vec<i32> = (b.to_f64_vec().iter().zip(s))
                    .map(|(&b, &s)| (b / f64::from(xq.scale * s)).round_ties_even() as i32)
                    .collect();
                ed.tensor(Tensor::from_i32(q, &[s.len()])?)
            }
            None => ed.constant(Const::None),
        };
        let out = l.out();
        let readers = users.get(&out).map(Vec::as_slice).unwrap_or_default();
        // A u8 output where a layer reads it (a float reader gets it dequantized).
        let feeds_layer =
            (readers.iter()).any(|r| products.contains(r) || reshape_into(ed, *r, &products));
        let (wn, sn) = (ed.tensor(wq), ed.tensor(scales));
        let (sx, zx) = (scalar_f(ed, xq.scale), scalar_i(ed, xq.zero));
        let relu = ed.constant(Const::Bool(l.relu.is_some()));
        let (so, zo, oq) = if feeds_layer {
            let oq = *params.get(&out).ok_or_else(|| missing(out))?;
            (scalar_f(ed, oq.scale), scalar_i(ed, oq.zero), Some(oq))
        } else {
            (ed.constant(Const::None), scalar_i(ed, 0), None)
        };
        let args = [qx, sx, zx, wn, sn, bias, so, zo, relu];
        let q = ed.call_before(l.node, Prim::QuantMatMul, &args, l.span)?;
        match oq {
            Some(oq) => {
                let (s, z) = (scalar_f(ed, oq.scale), scalar_i(ed, oq.zero));
                let deq = ed.call_before(l.node, Prim::Dequantize, &[q, s, z], l.span)?;
                ed.module.replace_uses(&[ed.entry], out, deq);
                // Later layers name their input by the node they read before this rewrite.
                quantized.insert(deq, (q, oq));
                quantized.insert(out, (q, oq));
                report.change(format!(
                    "{}: int8, uint8 output (scale {:.6}, zero point {})",
                    l.describe(),
                    oq.scale,
                    oq.zero
                ));
            }
            None => {
                ed.module.replace_uses(&[ed.entry], out, q);
                report.change(format!("{}: int8, float32 output", l.describe()));
            }
        }
    }
    Ok(())
}

/// Whether `r` is a `Reshape` that one of `products` reads.
fn reshape_into(ed: &Editor, r: NodeId, products: &[NodeId]) -> bool {
    ed.module.callee_prim(r) == Some(Prim::Reshape)
        && ed
            .users()
            .get(&r)
            .is_some_and(|us| us.iter().any(|u| products.contains(u)))
}

fn missing(n: NodeId) -> ConvertError {
    ConvertError::Rewrite(format!("no calibration statistics for node {n:?}"))
}

fn scalar_f(ed: &mut Editor, v: f32) -> NodeId {
    ed.constant(Const::Float(f64::from(v)))
}

fn scalar_i(ed: &mut Editor, v: u8) -> NodeId {
    ed.constant(Const::Int(i64::from(v)))
}

/// The `u8` form of layer `l`'s input: the previous layer's output (through a `Reshape`), or
/// a new `QuantizeLinear`.
fn u8_input(
    ed: &mut Editor,
    l: &Layer,
    params: &HashMap<NodeId, QuantParams>,
    quantized: &mut HashMap<NodeId, (NodeId, QuantParams)>,
) -> Result<(NodeId, QuantParams), ConvertError> {
    if let Some(&q) = quantized.get(&l.x) {
        return Ok(q);
    }
    if ed.module.callee_prim(l.x) == Some(Prim::Reshape) {
        let inputs = ed.module.inputs(l.x).to_vec();
        if let Some(&(q, qp)) = quantized.get(&inputs[1]) {
            let r = ed.call_before(l.node, Prim::Reshape, &[q, inputs[2]], l.span)?;
            quantized.insert(l.x, (r, qp));
            return Ok((r, qp));
        }
    }
    let xq = *params.get(&l.x).ok_or_else(|| missing(l.x))?;
    let (s, z) = (scalar_f(ed, xq.scale), scalar_i(ed, xq.zero));
    let q = ed.call_before(l.node, Prim::Quantize, &[l.x, s, z], l.span)?;
    quantized.insert(l.x, (q, xq));
    Ok((q, xq))
}
