//! The offline converter (issue 28): a model file in, an optimized and quantized model file
//! out, and a report of what changed.
//!
//! * `calibrate`: the quantization parameters of activations, from the values they take on
//!   calibration data (min/max, a percentile, or TensorRT's entropy threshold), and per-channel
//!   scales of weights.
//! * `quantize`: the rewrite of a model's products into `int8` (`u8` activations, `i8`
//!   weights, `i32` sums) or weight-only `int8` form.
//! * `observe`: runs the float model on calibration batches and reads the activations the
//!   rewrite quantizes.
//! * `fold`: the float optimizations of inference models: what only constants and
//!   Parameters determine computed once, and per-channel affine chains (an inference
//!   BatchNorm, a bias) folded into the preceding product's weights and bias.
//! * `graph`: the edits themselves, on the loaded model's entry graph.

pub mod calibrate;
mod fold;
mod graph;
mod observe;
pub mod quantize;

use std::collections::HashMap;
use std::fmt;

use anfora_ir::NodeId;
use anfora_model::{Limits, ModelError, read_model, write_model};
use anfora_tensor::{Tensor, TensorError};
use thiserror::Error;

pub use calibrate::{
    CalibrationError, Calibrator, Method, QuantParams, quantize_weights_i8, weight_scales,
};

/// What the converter does to a model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Quantization {
    /// `u8` activations, `i8` weights, `i32` sums; needs calibration data.
    Int8,
    /// `i8` weights, float32 activations.
    WeightInt8,
    /// 4-bit weights (two per byte), float32 activations.
    WeightInt4,
}

impl Quantization {
    /// `int8` or `weight-int8`, as `--quantize` names them.
    pub fn parse(name: &str) -> Result<Quantization, ConvertError> {
        match name {
            "int8" => Ok(Quantization::Int8),
            "weight-int8" => Ok(Quantization::WeightInt8),
            "weight-int4" => Ok(Quantization::WeightInt4),
            other => Err(ConvertError::Unsupported(format!(
                "unknown quantization '{other}': use int8, weight-int8 or weight-int4"
            ))),
        }
    }
}

/// The converter's options.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub quantize: Option<Quantization>,
    pub method: Method,
    /// One weight scale per tensor instead of per output channel.
    pub per_tensor: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            quantize: None,
            method: Method::MinMax,
            per_tensor: false,
        }
    }
}

#[derive(Debug, Error)]
pub enum ConvertError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Calibration(#[from] CalibrationError),
    #[error("calibration data: {0}")]
    Data(String),
    #[error("the model failed on calibration data: {0}")]
    Run(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("cannot rewrite the model: {0}")]
    Rewrite(String),
    #[error("cannot write the model: {0}")]
    Export(String),
}

impl From<TensorError> for ConvertError {
    fn from(e: TensorError) -> ConvertError {
        ConvertError::Rewrite(e.to_string())
    }
}

/// What the converter did: each change, the operations kept in float32 and why, and the
/// file's size before and after.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub changes: Vec<String>,
    pub kept_float: Vec<String>,
    pub size_before: usize,
    pub size_after: usize,
}

impl Report {
    fn change(&mut self, what: String) {
        self.changes.push(what);
    }

    fn keep(&mut self, why: String) {
        self.kept_float.push(why);
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.changes {
            writeln!(f, "changed: {c}")?;
        }
        for k in &self.kept_float {
            writeln!(f, "kept in float32: {k}")?;
        }
        let ratio = self.size_after as f64 / self.size_before.max(1) as f64;
        write!(
            f,
            "size: {} -> {} bytes ({ratio:.2}x)",
            self.size_before, self.size_after
        )
    }
}

/// The converted model file and its report. `calibration` holds one array per tensor input
/// of the model, samples along the first axis, that `Quantization::Int8` calibrates on: each
/// is split into batches of the model's (the rest of a last, shorter batch is left out).
pub fn convert(
    bytes: &[u8],
    options: &Options,
    calibration: &[Tensor],
) -> Result<(Vec<u8>, Report), ConvertError> {
    let mut loaded = read_model(bytes, &Limits::default())?;
    let calibration = if calibration.is_empty() {
        Vec::new()
    } else {
        observe::batches(&loaded.inputs, calibration)?
    };
    let mut report = Report {
        size_before: bytes.len(),
        ..Report::default()
    };
    let names: HashMap<u64, String> = (loaded.parameters.iter())
        .map(|p| (p.key(), p.name().to_string()))
        .collect();
    {
        let mut ed = graph::Editor {
            module: &mut loaded.module,
            entry: loaded.entry,
            abstracts: &mut loaded.abstracts,
        };
        ed.inline_fused();
        let known = quantize::absorb_fake_quant(&mut ed, &mut report)?;
        if !loaded.writes_parameters {
            // An inference model: its Parameters are constants of it.
            fold::constants(&mut ed, &mut report)?;
            ed.clean();
            fold::affine(&mut ed, &mut report)?;
            ed.clean();
        }
        let layers = quantize::layers(&ed, &mut report)?;
        match options.quantize {
            None => {}
            Some(Quantization::WeightInt8) => {
                quantize::weight_only(&mut ed, &layers, options.per_tensor, 8, &mut report)?
            }
            Some(Quantization::WeightInt4) => {
                quantize::weight_only(&mut ed, &layers, options.per_tensor, 4, &mut report)?
            }
            Some(Quantization::Int8) => {
                let mut params = known;
                let missing: Vec<NodeId> = (quantize::required(&ed, &layers).into_iter())
                    .filter(|n| !params.contains_key(n))
                    .collect();
                if !missing.is_empty() {
                    if calibration.is_empty() {
                        return Err(ConvertError::Data(format!(
                            "int8 quantization needs calibration data (--calibration \
                             DATA.npz) for the {} activations no FakeQuant covers",
                            missing.len()
                        )));
                    }
                    let (inputs, method) = (&loaded.inputs, options.method);
                    let observed =
                        observe::calibrate(&mut ed, inputs, &missing, &calibration, method)?;
                    params.extend(observed);
                }
                quantize::int8(&mut ed, &layers, &params, options.per_tensor, &mut report)?;
            }
        }
        ed.clean();
    }
    if let Err(errors) = anfora_ir::verify::verify(&loaded.module, &[loaded.entry]) {
        let first = errors.first().map(|e| e.to_string()).unwrap_or_default();
        return Err(ConvertError::Rewrite(format!(
            "the rewritten graphs are not well formed: {first}"
        )));
    }
    let producer = format!("{} (anfora convert)", loaded.producer);
    let out = write_model(
        &loaded.module,
        loaded.entry,
        &loaded.abstracts,
        &producer,
        &names,
    )
    .map_err(|e| ConvertError::Export(e.message))?;
    report.size_after = out.len();
    Ok((out, report))
}
