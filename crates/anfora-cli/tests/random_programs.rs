//! Random differential programs: `tests/differential/gen_programs.py` generates 2,000 small
//! programs (cases) in anfora's subset from a fixed seed, runs them under CPython (with the
//! numpy oracle in `tests/oracle`) and under `anfora run` with both engines, and fails on any
//! refusal or difference in printed output, result or exception.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `$ANFORA_PYTHON`, the repository's `.venv`, or `python3`; it must have numpy.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("ANFORA_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = root().join(".venv/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

#[test]
fn random_programs_match_cpython() {
    let generator = root().join("tests/differential/gen_programs.py");
    let output = Command::new(python())
        .arg(&generator)
        .arg("--check")
        .arg("--seed")
        .arg("0")
        .arg("--count")
        .arg("2000")
        .arg("--jobs")
        .arg("2")
        .arg("--anfora")
        .arg(env!("CARGO_BIN_EXE_anfora"))
        .current_dir(root())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {} (set ANFORA_PYTHON to a Python with numpy): {e}",
                python().display()
            )
        });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "random programs differ from CPython (status {:?}):\n{stdout}\n{stderr}",
        output.status.code()
    );
    // Show the summary (timings) with `cargo test -- --nocapture`.
    println!("{stdout}");
}
