//! `anfora convert`: a model file optimized and quantized offline (see `anfora-convert`).

use std::path::PathBuf;

use anfora_convert::{Method, Options, Quantization, convert as convert_model};
use anfora_runtime::npy;
use anfora_tensor::Tensor;

use crate::{Exit, emit};

pub struct Args {
    pub model: PathBuf,
    pub output: PathBuf,
    pub quantize: Option<String>,
    pub calibration: Option<PathBuf>,
    pub method: String,
    pub per_tensor: bool,
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
