//! Writing a compiled function out: anfora's model file (`anfora-model`) or ONNX
//! (`anfora-onnx`), one entry point for the command line and the Python package.

use std::collections::HashMap;

use anfora_ir::Module;
use anfora_ir::diag::Diagnostic;

use crate::{Compiled, Failure};

/// What a model file says wrote it.
pub const PRODUCER: &str = concat!("anfora ", env!("CARGO_PKG_VERSION"));

/// The formats a compiled function is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// anfora's model file, which `anfora run-model`, `anfora.load` and the C runtime load.
    Anfora,
    /// ONNX, for programs without recursion or escaping closures.
    Onnx,
}

impl ExportFormat {
    /// Each format by the name users give it.
    pub const NAMES: [(&'static str, ExportFormat); 2] = [
        ("anfora", ExportFormat::Anfora),
        ("onnx", ExportFormat::Onnx),
    ];

    /// The format named `name` (any case).
    pub fn parse(name: &str) -> Result<ExportFormat, String> {
        let found = Self::NAMES
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name));
        found
            .map(|(_, f)| *f)
            .ok_or_else(|| format!("the export format must be 'anfora' or 'onnx', not '{name}'"))
    }
}

/// The bytes of `compiled` (a function of `module`) in `format`. `names` name Parameters in
/// an anfora model file by ref key (a Cell's paths); what the format cannot hold is a compile
/// failure, a diagnostic at its node (E0601 for the model file, E0602 for ONNX).
pub fn export(
    module: &Module,
    compiled: &Compiled,
    format: ExportFormat,
    names: &HashMap<u64, String>,
) -> Result<Vec<u8>, Failure> {
    let (graph, abstracts) = (compiled.graph, &compiled.abstracts);
    let written = match format {
        ExportFormat::Anfora => {
            anfora_model::write_model(module, graph, abstracts, PRODUCER, names)
                .map_err(|e| Diagnostic::error(anfora_ir::codes::EXPORT, e.message, e.span))
        }
        ExportFormat::Onnx => anfora_onnx::export(module, graph, abstracts, &Default::default())
            .map_err(|e| e.diagnostic()),
    };
    written.map_err(|d| Failure::Compile(vec![d]))
}
