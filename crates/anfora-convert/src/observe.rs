//! Calibration: the float model runs on each calibration batch with the activations the
//! rewrite quantizes added to its result, and a calibrator per activation chooses its range.

use std::collections::HashMap;

use anfora_ir::{NodeId, Options, Prim, Span};
use anfora_model::InputSpec;
use anfora_model::types::InputKind;
use anfora_ops::value::from_const;
use anfora_ops::{Abs, Value};
use anfora_tensor::{DType, Device, Tensor};

use crate::ConvertError;
use crate::calibrate::{Calibrator, Method, QuantParams};
use crate::graph::Editor;

/// The quantization of each node of `nodes` (layers' inputs and outputs) over `batches`.
pub fn calibrate(
    ed: &mut Editor,
    inputs: &[InputSpec],
    nodes: &[NodeId],
    batches: &[Vec<Tensor>],
    method: Method,
) -> Result<HashMap<NodeId, QuantParams>, ConvertError> {
    let mut watched: Vec<NodeId> = Vec::new();
    for &n in nodes {
        if !watched.contains(&n) {
            watched.push(n);
        }
    }
    let mut calibrators = (watched.iter())
        .map(|_| Calibrator::new(method))
        .collect::<Result<Vec<_>, _>>()?;
    let values = run_watching(ed, inputs, &watched, batches)?;
    for batch in values {
        for (c, t) in calibrators.iter_mut().zip(batch) {
            let v = t.try_cast(DType::F32)?;
            c.observe(v.as_f32_slice().expect("a float32 tensor"))?;
        }
    }
    let mut params = HashMap::new();
    for (n, c) in watched.iter().zip(&calibrators) {
        params.insert(*n, c.finish()?);
    }
    Ok(params)
}

/// The values of `watched` on each batch: the entry's result becomes the tuple of its own
/// value and theirs for the runs, and is restored after.
fn run_watching(
    ed: &mut Editor,
    inputs: &[InputSpec],
    watched: &[NodeId],
    batches: &[Vec<Tensor>],
) -> Result<Vec<Vec<Tensor>>, ConvertError> {
    let output = ed
        .module
        .graph(ed.entry)
        .output
        .expect("a model's entry has an output");
    let mut items = vec![output];
    items.extend_from_slice(watched);
    let callee = ed.module.value(anfora_ir::Const::Prim(Prim::MakeTuple));
    let mut tuple_inputs = vec![callee];
    tuple_inputs.extend_from_slice(&items);
    let tuple = ed
        .module
        .apply_unordered(ed.entry, tuple_inputs, Span::NONE);
    ed.abstracts.insert(
        tuple,
        Abs::tuple(items.iter().map(|&n| ed.abs(n)).collect()),
    );
    ed.module.set_output(ed.entry, tuple);
    let program = anfora_exec::lower(ed.module, ed.entry, ed.abstracts, Device::CPU);
    ed.module.set_output(ed.entry, output);
    ed.abstracts.remove(&tuple);
    let program = program.map_err(|e| ConvertError::Run(e.to_string()))?;
    let mut out = Vec::with_capacity(batches.len());
    for (b, batch) in batches.iter().enumerate() {
        let args =
            arguments(inputs, batch).map_err(|e| ConvertError::Data(format!("batch {b}: {e}")))?;
        let value = program
            .call(args, &mut std::io::sink(), &Options::default())
            .map_err(|e| ConvertError::Run(format!("{}: {}", e.kind, e.message)))?;
        let Value::Tuple(values) = &value else {
            return Err(ConvertError::Run(
                "the watched values are not a tuple".into(),
            ));
        };
        let tensors = (values.iter().skip(1))
            .map(|v| match v {
                Value::Tensor(t) => Ok(t.clone()),
                _ => Err(ConvertError::Run("a watched value is not a tensor".into())),
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.push(tensors);
    }
    Ok(out)
}

/// A batch as the program's arguments, each tensor checked against its input's type.
fn arguments(inputs: &[InputSpec], batch: &[Tensor]) -> Result<Vec<Value>, String> {
    let tensor_inputs = inputs
        .iter()
        .filter(|i| matches!(i.kind, InputKind::Tensor(_)))
        .count();
    if batch.len() != tensor_inputs {
        return Err(format!(
            "{} arrays for a model of {tensor_inputs} inputs",
            batch.len()
        ));
    }
    let mut given = batch.iter();
    let mut args = Vec::with_capacity(inputs.len());
    for i in inputs {
        match &i.kind {
            InputKind::Fixed(c) => args.push(from_const(c, &mut |_| Value::None)),
            InputKind::Tensor(spec) => {
                let t = given.next().expect("counted above");
                if !spec.admits(t.dtype(), t.shape()) {
                    return Err(format!(
                        "input '{}' must be {}, not {} {:?}",
                        i.name,
                        spec.text(),
                        t.dtype(),
                        t.shape()
                    ));
                }
                args.push(Value::Tensor(t.clone()));
            }
        }
    }
    Ok(args)
}

/// `arrays` (one per tensor input, samples along the first axis) cut into the model's
/// batches.
pub fn batches(inputs: &[InputSpec], arrays: &[Tensor]) -> Result<Vec<Vec<Tensor>>, ConvertError> {
    let specs: Vec<(&str, &anfora_model::TensorSpec)> = (inputs.iter())
        .filter_map(|i| match &i.kind {
            InputKind::Tensor(t) => Some((i.name.as_str(), t)),
            InputKind::Fixed(_) => None,
        })
        .collect();
    if arrays.len() != specs.len() {
        return Err(ConvertError::Data(format!(
            "{} arrays for a model of {} tensor inputs",
            arrays.len(),
            specs.len()
        )));
    }
    let mut per_input = Vec::with_capacity(arrays.len());
    for ((name, spec), a) in specs.iter().zip(arrays) {
        let wrong = || {
            ConvertError::Data(format!(
                "input '{name}' is {} with samples along the first axis, not {} {:?}",
                spec.text(),
                a.dtype(),
                a.shape()
            ))
        };
        if a.dtype() != spec.dtype || a.ndim() != spec.shape.len() || a.ndim() == 0 {
            return Err(wrong());
        }
        let rest = &a.shape()[1..];
        if (spec.shape[1..].iter().zip(rest)).any(|(d, n)| d.is_some_and(|d| d != *n)) {
            return Err(wrong());
        }
        let n = a.shape()[0];
        let batch = spec.shape[0].unwrap_or(n);
        if n == 0 || n < batch {
            return Err(ConvertError::Data(format!(
                "input '{name}': {n} samples, fewer than the model's batch of {batch}"
            )));
        }
        let bytes = a.to_le_bytes();
        let per = bytes.len() / n * batch;
        let mut shape = a.shape().to_vec();
        shape[0] = batch;
        let cut = (bytes.chunks_exact(per))
            .map(|c| Tensor::from_le_bytes(a.dtype(), &shape, c))
            .collect::<Result<Vec<_>, _>>()?;
        per_input.push(cut);
    }
    let count = per_input.iter().map(Vec::len).min().unwrap_or(0);
    Ok((0..count)
        .map(|b| per_input.iter().map(|cut| cut[b].clone()).collect())
        .collect())
}
