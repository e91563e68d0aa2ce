//! `anfora export`, `anfora inspect` and `anfora run-model`: model files.

use std::path::{Path, PathBuf};

use anfora_driver::ExportFormat;
use anfora_ir::Options;
use anfora_model::types::InputKind;
use anfora_runtime::{LoadOptions, Model, npy};
use anfora_session::Session;

use crate::{Exit, emit, failure, parse_args, read_source};

fn usage(message: String) -> Exit {
    Exit(2, format!("error: {message}\n"))
}

/// Compiles `entry` of `file` for `args` and writes the model file.
pub fn export(
    file: PathBuf,
    entry: String,
    args: Vec<String>,
    output: PathBuf,
    format: String,
) -> Result<(), Exit> {
    let format = ExportFormat::parse(&format).map_err(usage)?;
    let text = read_source(&file)?;
    let args = parse_args(&args).map_err(usage)?;
    let mut session = Session::load(&file.display().to_string(), &text, Options::default());
    let compiled = session
        .compiled(&entry, &args)
        .map_err(|f| failure(&session, &f))?;
    let module = &session.frontend.module;
    let bytes = anfora_driver::export(module, &compiled, format, &Default::default())
        .map_err(|f| failure(&session, &f))?;
    std::fs::write(&output, &bytes).map_err(|e| {
        Exit(
            1,
            format!("error: cannot write {}: {e}\n", output.display()),
        )
    })?;
    emit(&format!(
        "wrote {} ({} bytes)\n",
        output.display(),
        bytes.len()
    ))
}

fn load(path: &Path) -> Result<Model, Exit> {
    Model::load(path, &LoadOptions::default())
        .map_err(|e| Exit(1, format!("error: {}: {e}\n", path.display())))
}

fn size_text(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

/// What a model file holds: inputs, outputs, graphs, Parameters, sizes.
pub fn inspect(path: PathBuf) -> Result<(), Exit> {
    let model = load(&path)?;
    let mut out = format!(
        "{}: anfora model, {} ({})\n",
        path.display(),
        size_text(model.file_len()),
        model.producer()
    );
    out.push_str("inputs:\n");
    for i in model.all_inputs() {
        let what = match &i.kind {
            InputKind::Tensor(t) => t.text(),
            InputKind::Fixed(c) => format!("fixed at {c}"),
        };
        out.push_str(&format!("  {}: {what}\n", i.name));
    }
    out.push_str("outputs:\n");
    for o in model.outputs() {
        out.push_str(&format!("  {}: {}\n", o.name, o.tensor_spec().text()));
    }
    let params = model.parameters();
    let weights: usize = params
        .iter()
        .map(|p| p.shape().iter().product::<usize>() * p.dtype().size_of())
        .sum();
    out.push_str(&format!(
        "parameters: {} ({}){}\n",
        params.len(),
        size_text(weights),
        if model.writes_parameters() {
            ", written by each call (a training step)"
        } else {
            ""
        }
    ));
    for p in params {
        let spec = anfora_model::TensorSpec {
            dtype: p.dtype(),
            shape: p.shape().iter().map(|&d| Some(d)).collect(),
        };
        out.push_str(&format!("  {}: {}\n", p.name(), spec.text()));
    }
    out.push_str(&model.graph_summary());
    emit(&out)
}

/// Runs a model on `.npy` inputs and writes `out0.npy`, ... beside the first input or into
/// `output_dir`.
pub fn run_model(
    path: PathBuf,
    inputs: Vec<PathBuf>,
    output_dir: Option<PathBuf>,
) -> Result<(), Exit> {
    let model = load(&path)?;
    let mut tensors = Vec::with_capacity(inputs.len());
    for p in &inputs {
        let bytes = std::fs::read(p)
            .map_err(|e| Exit(1, format!("error: cannot read {}: {e}\n", p.display())))?;
        tensors.push(
            npy::read(&bytes).map_err(|e| Exit(1, format!("error: {}: {e}\n", p.display())))?,
        );
    }
    let results = model.run(&tensors).map_err(|e| Exit(1, format!("{e}\n")))?;
    let dir = output_dir
        .or_else(|| {
            inputs
                .first()
                .and_then(|p| p.parent())
                .map(Path::to_path_buf)
        })
        .unwrap_or_else(|| PathBuf::from("."));
    let mut report = String::new();
    for (i, t) in results.iter().enumerate() {
        let out = dir.join(format!("out{i}.npy"));
        std::fs::write(&out, npy::write(t))
            .map_err(|e| Exit(1, format!("error: cannot write {}: {e}\n", out.display())))?;
        report.push_str(&format!(
            "{}: {}{:?}\n",
            out.display(),
            t.dtype().name(),
            t.shape()
        ));
    }
    emit(&report)
}
