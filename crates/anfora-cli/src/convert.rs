//! `anfora convert`: a model file optimized and quantized offline (see `anfora-convert`).

use std::path::PathBuf;

use anfora_convert::{Method, Options, Quantization, convert as convert_model};
use anfora_runtime::npy;
use anfora_tensor::Tensor;

use crate::{Exit, emit};

#[derive(clap::Args)]
pub struct Args {
    model: PathBuf,
    /// The model file to write.
    #[arg(short, long)]
    output: PathBuf,
    /// `int8` (uint8 activations, int8 weights; needs --calibration unless the model's
    /// FakeQuant cells give the ranges) or `weight-int8`.
    #[arg(long)]
    quantize: Option<String>,
    /// Calibration inputs: an .npz (numpy.savez) with one array per model input, in the
    /// model's input order, or an .npy for a one-input model; arrays longer than the
    /// model's batch are split into batches of it.
    #[arg(long)]
    calibration: Option<PathBuf>,
    /// How activation ranges are chosen: minmax, percentile or kl.
    #[arg(long, default_value = "minmax")]
    method: String,
    /// One weight scale per tensor instead of one per output channel.
    #[arg(long)]
    per_tensor: bool,
}

fn fail(message: impl std::fmt::Display) -> Exit {
    Exit(1, format!("error: {message}\n"))
}

/// The arrays of an `.npz` (archive order) or `.npy` file.
fn calibration_arrays(path: &PathBuf) -> Result<Vec<Tensor>, Exit> {
    let bytes =
        std::fs::read(path).map_err(|e| fail(format!("cannot read {}: {e}", path.display())))?;
    let what = |e: String| fail(format!("{}: {e}", path.display()));
    if bytes.starts_with(b"PK") {
        Ok(npy::read_npz(&bytes)
            .map_err(what)?
            .into_iter()
            .map(|(_, t)| t)
            .collect())
    } else {
        Ok(vec![npy::read(&bytes).map_err(what)?])
    }
}

pub fn convert(a: Args) -> Result<(), Exit> {
    let usage = |e: anfora_convert::ConvertError| Exit(2, format!("error: {e}\n"));
    let quantize = a
        .quantize
        .as_deref()
        .map(Quantization::parse)
        .transpose()
        .map_err(usage)?;
    let method = Method::parse(&a.method).map_err(|e| Exit(2, format!("error: {e}\n")))?;
    let options = Options {
        quantize,
        method,
        per_tensor: a.per_tensor,
    };
    let calibration = match &a.calibration {
        Some(p) => calibration_arrays(p)?,
        None => Vec::new(),
    };
    let bytes = std::fs::read(&a.model)
        .map_err(|e| fail(format!("cannot read {}: {e}", a.model.display())))?;
    let (out, report) = convert_model(&bytes, &options, &calibration)
        .map_err(|e| fail(format!("{}: {e}", a.model.display())))?;
    std::fs::write(&a.output, &out)
        .map_err(|e| fail(format!("cannot write {}: {e}", a.output.display())))?;
    emit(&format!("{report}\nwrote {}\n", a.output.display()))
}
