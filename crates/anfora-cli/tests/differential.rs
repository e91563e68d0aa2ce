//! The differential corpus: every program in `tests/corpus` runs under CPython (with the numpy
//! oracle in `tests/oracle`) and under `anfora run`; printed output, the printed result and the
//! exception must match. The same for 2,000 random programs: `tests/differential/gen_programs.py`
//! generates them in anfora's subset from a fixed seed and checks them with both engines; any
//! refusal or difference fails.

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

/// What `python prog.py`-style running shows: stdout (with the result's repr appended as
/// `anfora run` prints it) and the exception line, if any.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    stdout: String,
    exception: Option<String>,
}

fn args_line(text: &str) -> Vec<String> {
    for line in text.lines().take(5) {
        if let Some(rest) = line.trim().strip_prefix("# args:") {
            return split_top_level(rest.trim());
        }
    }
    Vec::new()
}

/// Splits `1, (2, 3), 'a,b'` at top-level commas.
fn split_top_level(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut cur) = (0i32, None::<char>, String::new());
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[') => depth += 1,
            (None, ')' | ']') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn run_anfora(path: &Path, engine: &str) -> Outcome {
    let text = std::fs::read_to_string(path).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_anfora"))
        .arg("run")
        .arg("--engine")
        .arg(engine)
        .arg(path)
        .args(args_line(&text))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let exception = match out.status.code() {
        Some(0) => None,
        // The traceback's exception line comes right before the location line.
        Some(1) if stderr.starts_with("Traceback") => {
            let lines: Vec<&str> = stderr.lines().collect();
            Some(lines[lines.len() - 2].to_string())
        }
        _ => Some(format!(
            "anfora failed ({:?}):\n{stderr}",
            out.status.code()
        )),
    };
    Outcome { stdout, exception }
}

fn run_cpython(paths: &[PathBuf]) -> Vec<Outcome> {
    let runner = root().join("tests/differential/run_cpython.py");
    let output = Command::new(python())
        .arg(&runner)
        .args(paths)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {} (set ANFORA_PYTHON to a Python with numpy): {e}",
                python().display()
            )
        });
    assert!(
        output.status.success(),
        "the CPython runner failed (is numpy installed?):\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("runner JSON");
    paths
        .iter()
        .map(|p| {
            let rec = &json[p.to_string_lossy().as_ref()];
            assert!(!rec.is_null(), "no CPython result for {}", p.display());
            let mut stdout = rec["stdout"].as_str().unwrap().to_string();
            if let Some(r) = rec["result"].as_str() {
                stdout.push_str(r);
                stdout.push('\n');
            }
            Outcome {
                stdout,
                exception: rec["error"].as_str().map(String::from),
            }
        })
        .collect()
}

#[test]
fn corpus_matches_cpython() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("tests/corpus"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 150,
        "the corpus has {} programs",
        files.len()
    );
    let expected = run_cpython(&files);
    let mut failures = Vec::new();
    for engine in ["reference", "compiled"] {
        for (path, want) in files.iter().zip(&expected) {
            let got = run_anfora(path, engine);
            if &got != want {
                failures.push(format!(
                    "== {} ({engine})\n-- CPython:\n{want:#?}\n-- anfora:\n{got:#?}",
                    path.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} runs differ:\n{}",
        failures.len(),
        2 * files.len(),
        failures.join("\n")
    );
}

#[test]
fn args_lines_split_at_top_level_commas() {
    assert_eq!(
        split_top_level("1, (2, 3), 'a,b', [[1, 2]]"),
        vec!["1", "(2, 3)", "'a,b'", "[[1, 2]]"]
    );
    assert_eq!(split_top_level(""), Vec::<String>::new());
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
