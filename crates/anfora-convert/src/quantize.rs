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

use crate::calibrate::{QuantParams, quantize_weights_to, weight_scales_to};
use crate::graph::Editor;
use crate::{ConvertError, Report};

/// A convolution's geometry, as `QLinearConv` takes it.
#[derive(Clone, Debug)]
pub struct ConvShape {
    pub kernel: [usize; 2],
    pub stride: [usize; 2],
    /// Top, bottom, left, right.
    pub padding: [usize; 4],
    pub dilation: [usize; 2],
}

/// A product the rewrite replaces.
pub struct Layer {
    pub node: NodeId,
    pub x: NodeId,
    /// The k×n float32 weights (transposed already where the product transposes them; a
    /// convolution's (O, C, KH, KW) weights as their (C·KH·KW)×O matrix).
    pub w: Tensor,
    /// A convolution's geometry; `None` for a matrix product.
    pub conv: Option<ConvShape>,
    /// The node whose value is the layer's before its ReLU: the product, or the `Add` of a
    /// convolution's bias.
    pub tail: NodeId,
    pub bias: Option<Tensor>,
    /// The `ReLU` that alone reads the product.
    pub relu: Option<NodeId>,
    pub span: Span,
}

impl Layer {
    /// The node whose value the layer gives: its ReLU's, or the product's.
    pub fn out(&self) -> NodeId {
        self.relu.unwrap_or(self.tail)
    }

    fn describe(&self) -> String {
        let (k, n) = (self.w.shape()[0], self.w.shape()[1]);
        let relu = if self.relu.is_some() { " + ReLU" } else { "" };
        match &self.conv {
            Some(c) => format!(
                "{}×{} convolution to {n} channels{relu}",
                c.kernel[0], c.kernel[1]
            ),
            None => format!("{k}×{n} product{relu}"),
        }
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
                    ed.value_of(inputs[1]),
                    inputs[2],
                    Some(inputs[3]),
                    is_false(ed, inputs[5]) == Some(false),
                )
            }
            Prim::MatMul => (ed.value_of(inputs[1]), inputs[2], None, false),
            Prim::Conv2D => {
                match conv_layer(ed, n, &users) {
                    Ok(l) => found.push(l),
                    Err(why) => report.keep(format!("Conv2D: {why}")),
                }
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
        let relu = only_relu(ed, n, &users);
        let span = ed.module.node(n).span;
        found.push(Layer {
            node: n,
            x,
            w: wt,
            conv: None,
            tail: n,
            bias,
            relu,
            span,
        });
    }
    Ok(found)
}

/// The ReLU that alone reads `n`, if one does.
fn only_relu(ed: &Editor, n: NodeId, users: &HashMap<NodeId, Vec<NodeId>>) -> Option<NodeId> {
    match users.get(&n).map(Vec::as_slice) {
        Some(&[u]) if ed.module.callee_prim(u) == Some(Prim::Relu) => Some(u),
        _ => None,
    }
}

/// Ints of a constant int or tuple of ints.
fn ints(c: Option<&Const>) -> Option<Vec<i64>> {
    match c? {
        Const::Int(i) => Some(vec![*i]),
        Const::Tuple(items) => (items.iter())
            .map(|c| match c {
                Const::Int(i) => Some(*i),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// A pair from one int or two.
fn pair_of(c: Option<&Const>) -> Option<[usize; 2]> {
    match ints(c)?.as_slice() {
        [a] if *a >= 0 => Some([*a as usize; 2]),
        [a, b] if *a >= 0 && *b >= 0 => Some([*a as usize, *b as usize]),
        _ => None,
    }
}

/// `Conv2D(x, w, stride, padding, dilation, groups)` as a layer, or why it stays float32.
fn conv_layer(
    ed: &Editor,
    n: NodeId,
    users: &HashMap<NodeId, Vec<NodeId>>,
) -> Result<Layer, String> {
    let inputs = ed.module.inputs(n).to_vec();
    let c = |i: usize| ed.module.constant(inputs[i]);
    let w = (ed.known_tensor(inputs[2]))
        .filter(|t| t.dtype() == DType::F32 && t.ndim() == 4)
        .ok_or("its weights are not known float32 before the model runs")?;
    let image =
        matches!(ed.abs(inputs[1]), Abs::Tensor(t) if t.dtype == DType::F32 && t.shape.len() == 4);
    if !image {
        return Err("not a float32 (N, C, H, W) image".into());
    }
    if ints(c(6)) != Some(vec![1]) {
        return Err("grouped".into());
    }
    let (o, ch, kh, kw) = (w.shape()[0], w.shape()[1], w.shape()[2], w.shape()[3]);
    let stride = pair_of(c(3)).ok_or("its stride is not constant")?;
    let dilation = pair_of(c(5)).ok_or("its dilation is not constant")?;
    let padding = match c(4) {
        Some(Const::Str(s)) if &**s == "valid" => [0; 4],
        Some(Const::Str(s)) if &**s == "same" => {
            let (th, tw) = (dilation[0] * (kh - 1), dilation[1] * (kw - 1));
            [th / 2, th - th / 2, tw / 2, tw - tw / 2]
        }
        other => {
            let [ph, pw] = pair_of(other).ok_or("its padding is not constant")?;
            [ph, ph, pw, pw]
        }
    };
    // A bias the folding left after the convolution: `Add(conv, b)`, b one value per channel.
    let (tail, bias) = match users.get(&n).map(Vec::as_slice) {
        Some(&[u]) if ed.module.callee_prim(u) == Some(Prim::Add) => {
            let other = ed
                .module
                .inputs(u)
                .iter()
                .skip(1)
                .copied()
                .find(|&i| i != n);
            match other.and_then(|b| ed.known_tensor(b)) {
                Some(b) if b.numel() == o && b.dtype() == DType::F32 => {
                    (u, Some(b.reshape(&[o as i64]).map_err(|e| e.to_string())?))
                }
                _ => (n, None),
            }
        }
        _ => (n, None),
    };
    // (O, C·KH·KW) transposed: column j is output channel j's weights.
    let k = ch * kh * kw;
    let matrix = (w.reshape(&[o as i64, k as i64]))
        .and_then(|m| m.transpose(None))
        .and_then(|m| m.contiguous_host())
        .map_err(|e| e.to_string())?;
    Ok(Layer {
        node: n,
        x: ed.value_of(inputs[1]),
        w: matrix,
        conv: Some(ConvShape {
            kernel: [kh, kw],
            stride,
            padding,
            dilation,
        }),
        tail,
        bias,
        relu: only_relu(ed, tail, users),
        span: ed.module.node(n).span,
    })
}

/// The weights as `i8` with their column scales.
fn quantized_weights(w: &Tensor, per_tensor: bool) -> Result<(Tensor, Tensor), ConvertError> {
    let (q, scales) = narrow_weights(w, per_tensor, 127)?;
    let (k, n) = (w.shape()[0], w.shape()[1]);
    Ok((
        Tensor::from_i8(q, &[k, n])?,
        Tensor::from_f32(scales, &[n])?,
    ))
}

/// The weights' values in `±levels` and their column scales (one for all with `per_tensor`).
fn narrow_weights(
    w: &Tensor,
    per_tensor: bool,
    levels: u8,
) -> Result<(Vec<i8>, Vec<f32>), ConvertError> {
    let (k, n) = (w.shape()[0], w.shape()[1]);
    let values: Vec<f32> = w.to_f64_vec().into_iter().map(|v| v as f32).collect();
    let mut scales = weight_scales_to(&values, k, n, levels)?;
    if per_tensor {
        let top = scales.iter().copied().fold(0.0f32, f32::max);
        scales.iter_mut().for_each(|s| *s = top);
    }
    Ok((quantize_weights_to(&values, n, &scales, levels), scales))
}

/// 4-bit weights two per byte (column `2t` in the low nibble of byte `t`), k×⌈n/2⌉ `u8`, and
/// their column scales.
fn int4_weights(w: &Tensor, per_tensor: bool) -> Result<(Tensor, Tensor), ConvertError> {
    let (q, scales) = narrow_weights(w, per_tensor, 7)?;
    let (k, n) = (w.shape()[0], w.shape()[1]);
    let row = n.div_ceil(2);
    let mut pairs = vec![0u8; k * row];
    for (i, v) in q.iter().enumerate() {
        let (p, j) = (i / n, i % n);
        pairs[p * row + j / 2] |= ((*v as u8) & 15) << (4 * (j % 2));
    }
    Ok((
        Tensor::from_u8(pairs, &[k, row])?,
        Tensor::from_f32(scales, &[n])?,
    ))
}

/// The weight-only rewrite of every layer.
pub fn weight_only(
    ed: &mut Editor,
    layers: &[Layer],
    per_tensor: bool,
    bits: u8,
    report: &mut Report,
) -> Result<(), ConvertError> {
    for l in layers {
        if l.conv.is_some() {
            report.keep("Conv2D: weight-only quantization covers matrix products".into());
            continue;
        }
        let (wq, scales) = match bits {
            4 => int4_weights(&l.w, per_tensor)?,
            _ => quantized_weights(&l.w, per_tensor)?,
        };
        let (wn, sn) = (ed.tensor(wq), ed.tensor(scales));
        let mut y = ed.call_before(l.node, Prim::WeightOnlyMatMul, &[l.x, wn, sn], l.span)?;
        if let Some(b) = &l.bias {
            let bn = ed.tensor(b.clone());
            y = ed.call_before(l.node, Prim::Add, &[y, bn], l.span)?;
        }
        ed.module.replace_uses(&[ed.entry], l.node, y);
        report.change(format!(
            "{}: int{bits} weights, float32 activations",
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
        let feeds_layer = readers.iter().any(|r| reaches(ed, &users, *r, &products));
        let (wn, sn) = (ed.tensor(wq), ed.tensor(scales));
        let (sx, zx) = (scalar_f(ed, xq.scale), scalar_i(ed, xq.zero));
        let relu = ed.constant(Const::Bool(l.relu.is_some()));
        let (so, zo, oq) = if feeds_layer {
            let oq = *params.get(&out).ok_or_else(|| missing(out))?;
            (scalar_f(ed, oq.scale), scalar_i(ed, oq.zero), Some(oq))
        } else {
            (ed.constant(Const::None), scalar_i(ed, 0), None)
        };
        let q = match &l.conv {
            None => {
                let args = [qx, sx, zx, wn, sn, bias, so, zo, relu];
                ed.call_before(l.node, Prim::QuantMatMul, &args, l.span)?
            }
            Some(c) => {
                let ints = |ed: &mut Editor, v: &[usize]| {
                    ed.constant(Const::Tuple(
                        v.iter().map(|&i| Const::Int(i as i64)).collect(),
                    ))
                };
                let (kernel, stride) = (ints(ed, &c.kernel), ints(ed, &c.stride));
                let (padding, dilation) = (ints(ed, &c.padding), ints(ed, &c.dilation));
                let args = [
                    qx, sx, zx, wn, kernel, sn, bias, so, zo, relu, stride, padding, dilation,
                ];
                ed.call_before(l.node, Prim::QuantConv2D, &args, l.span)?
            }
        };
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

/// Operations that give the same values on a quantized input as on the float one, so a
/// `u8` value passes through them: data movement and the maximum.
fn passes_u8(p: Option<Prim>) -> bool {
    matches!(p, Some(Prim::Reshape | Prim::MaxPool2D | Prim::Depend))
}

/// Whether `r` is one of `products`, or passes its value on to one (`users`: the graph's).
fn reaches(
    ed: &Editor,
    users: &HashMap<NodeId, Vec<NodeId>>,
    r: NodeId,
    products: &[NodeId],
) -> bool {
    products.contains(&r)
        || passes_u8(ed.module.callee_prim(r))
            && (users.get(&r)).is_some_and(|us| us.iter().any(|u| reaches(ed, users, *u, products)))
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
    if let Some(q) = passed_u8(ed, l, l.x, quantized)? {
        return Ok(q);
    }
    // Quantized where the values come from (before any Reshape or MaxPool2D of them), then
    // passed on as bytes.
    let r = root(ed, l.x);
    let xq = *params.get(&r).ok_or_else(|| missing(r))?;
    let (s, z) = (scalar_f(ed, xq.scale), scalar_i(ed, xq.zero));
    let q = ed.call_before(l.node, Prim::Quantize, &[r, s, z], l.span)?;
    quantized.insert(r, (q, xq));
    Ok(passed_u8(ed, l, l.x, quantized)?.expect("the root is quantized"))
}

/// Where the values of `n` come from: through `Reshape`, `MaxPool2D` and `Depend`.
fn root(ed: &Editor, mut n: NodeId) -> NodeId {
    while passes_u8(ed.module.callee_prim(n)) {
        n = ed.module.inputs(n)[1];
    }
    n
}

/// The `u8` form of `n` when one exists: a quantized node's, or the same data movement or
/// maximum applied to the `u8` form of its input.
fn passed_u8(
    ed: &mut Editor,
    l: &Layer,
    n: NodeId,
    quantized: &mut HashMap<NodeId, (NodeId, QuantParams)>,
) -> Result<Option<(NodeId, QuantParams)>, ConvertError> {
    if let Some(&q) = quantized.get(&n) {
        return Ok(Some(q));
    }
    let prim = ed.module.callee_prim(n);
    if !passes_u8(prim) {
        return Ok(None);
    }
    let inputs = ed.module.inputs(n).to_vec();
    let Some((q, qp)) = passed_u8(ed, l, inputs[1], quantized)? else {
        return Ok(None);
    };
    let mut args = inputs[1..].to_vec();
    args[0] = q;
    let r = ed.call_before(l.node, prim.expect("a primitive call"), &args, l.span)?;
    quantized.insert(n, (r, qp));
    Ok(Some((r, qp)))
}

/// Quant-aware training's `FakeQuant(y, min, max)` nodes with ranges known before the model
/// runs: each is dropped (its readers read `y`), and `y`'s quantization is the range's. The
/// converter takes those instead of calibrating.
pub fn absorb_fake_quant(
    ed: &mut Editor,
    report: &mut Report,
) -> Result<HashMap<NodeId, QuantParams>, ConvertError> {
    let mut known = HashMap::new();
    for n in ed.module.graph_nodes(ed.entry) {
        if ed.module.callee_prim(n) != Some(Prim::FakeQuant) {
            continue;
        }
        let inputs = ed.module.inputs(n).to_vec();
        let bound = |i: usize| -> Option<f32> {
            match ed.module.constant(inputs[i]) {
                Some(Const::Float(f)) => Some(*f as f32),
                Some(Const::Int(v)) => Some(*v as f32),
                _ => (ed.known_tensor(inputs[i]))
                    .filter(|t| t.numel() == 1)
                    .map(|t| t.to_f64_vec()[0] as f32),
            }
        };
        let (Some(lo), Some(hi)) = (bound(2), bound(3)) else {
            report.keep("FakeQuant: its range is not known before the model runs".into());
            continue;
        };
        let q = QuantParams::of_range(lo, hi);
        known.entry(ed.value_of(inputs[1])).or_insert(q);
        ed.module.replace_uses(&[ed.entry], n, inputs[1]);
        report.change(format!(
            "FakeQuant [{lo:.4}, {hi:.4}] taken as its input's quantization (scale {:.6}, zero point {})",
            q.scale, q.zero
        ));
    }
    Ok(known)
}

/// The activations whose quantization the int8 rewrite needs: each layer's input unless an
/// earlier layer's `u8` output reaches it (through `Reshape` and `MaxPool2D`), and each
/// layer's output that reaches a layer.
pub fn required(ed: &Editor, layers: &[Layer]) -> Vec<NodeId> {
    let products: Vec<NodeId> = layers.iter().map(|l| l.node).collect();
    let outs: Vec<NodeId> = layers.iter().map(Layer::out).collect();
    let users = ed.users();
    let mut need = Vec::new();
    for l in layers {
        // A layer's output is no passing operation, so the walk to the root stops there.
        let r = root(ed, l.x);
        if !outs.contains(&r) && !need.contains(&r) {
            need.push(r);
        }
        let readers = users.get(&l.out()).map(Vec::as_slice).unwrap_or_default();
        let feeds = readers.iter().any(|r| reaches(ed, &users, *r, &products));
        if feeds && !need.contains(&l.out()) {
            need.push(l.out());
        }
    }
    need
}
