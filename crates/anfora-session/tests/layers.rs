//! The crates' layering, read from their manifests: a crate's (non-dev) dependencies are all
//! of lower layers, and the reference VM, the oracle, is used only by the session and the
//! command line (and by tests), never by a compiler stage or the Python package.

use std::collections::BTreeMap;
use std::path::Path;

/// Every crate of the workspace and its layer: kernels, operations, the IR, the stages (the
/// ones that read inference's output one above), the pipeline, its hosts.
const LAYERS: &[(&str, u8)] = &[
    ("anfora-tensor", 0),
    ("anfora-ops", 1),
    ("anfora-ir", 2),
    ("anfora-cuda", 2),
    ("anfora-dist", 2),
    ("anfora-front", 3),
    ("anfora-infer", 3),
    ("anfora-ad", 3),
    ("anfora-vm", 3),
    ("anfora-monad", 4),
    ("anfora-opt", 4),
    ("anfora-exec", 4),
    ("anfora-onnx", 4),
    ("anfora-model", 4),
    ("anfora-runtime", 5),
    ("anfora-convert", 5),
    ("anfora-driver", 5),
    ("anfora-session", 6),
    ("anfora-py", 6),
    ("anfora-cli", 7),
];

/// The only crates that may use the reference VM outside their tests.
const ORACLE_USERS: &[&str] = &["anfora-session", "anfora-cli"];

/// The anfora crates a manifest lists under `[dependencies]`.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut section = "";
    let mut deps = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section == "[dependencies]" && line.starts_with("anfora-") {
            let name = line.split(['.', ' ', '=']).next().unwrap_or_default();
            deps.push(name.to_string());
        }
    }
    deps
}

fn manifests() -> BTreeMap<String, String> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let path = entry.unwrap().path().join("Cargo.toml");
        if let Ok(text) = std::fs::read_to_string(&path) {
            let name = path.parent().unwrap().file_name().unwrap();
            out.insert(name.to_string_lossy().into_owned(), text);
        }
    }
    out
}

fn layer(name: &str) -> u8 {
    LAYERS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("{name} has no layer in this test's table"))
        .1
}

#[test]
fn every_crate_depends_only_on_lower_layers() {
    let manifests = manifests();
    assert_eq!(
        manifests.len(),
        LAYERS.len(),
        "crates: {:?}",
        manifests.keys()
    );
    for (name, text) in &manifests {
        for dep in dependencies(text) {
            assert!(
                layer(&dep) < layer(name),
                "{name} (layer {}) depends on {dep} (layer {})",
                layer(name),
                layer(&dep)
            );
        }
    }
}

#[test]
fn only_the_session_and_the_command_line_use_the_oracle() {
    for (name, text) in manifests() {
        if dependencies(&text).iter().any(|d| d == "anfora-vm") {
            assert!(
                ORACLE_USERS.contains(&name.as_str()),
                "{name} uses anfora-vm"
            );
        }
    }
}

/// The runtime holds the executor and the kernels only: nothing of the parser, inference,
/// autodiff, the auto-monad, the optimizer or the pipeline, directly or through a dependency.
#[test]
fn the_runtime_depends_on_no_compiler_stage() {
    let manifests = manifests();
    let mut seen = vec!["anfora-runtime".to_string()];
    let mut i = 0;
    while i < seen.len() {
        for dep in dependencies(&manifests[&seen[i]]) {
            if !seen.contains(&dep) {
                seen.push(dep);
            }
        }
        i += 1;
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "anfora-exec",
            "anfora-ir",
            "anfora-model",
            "anfora-ops",
            "anfora-runtime",
            "anfora-tensor"
        ]
    );
    let ruff = manifests
        .values()
        .filter(|m| m.contains("ruff_python_parser"))
        .count();
    assert!(ruff > 0 && !seen.iter().any(|c| manifests[c].contains("ruff")));
}

#[test]
fn the_manifest_reader_sees_sections() {
    let text = "[dependencies]\nanfora-ir.workspace = true\nanfora-ops = { path = \"x\" }\n\n[dev-dependencies]\nanfora-vm.workspace = true\n";
    assert_eq!(dependencies(text), ["anfora-ir", "anfora-ops"]);
}
