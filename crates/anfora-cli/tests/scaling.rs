//! Hostile sizes (issue 25, items 3 and 4): flat chains whose syntax tree is shallow but long
//! (comparison, `and` and `elif` chains) and long chains of functions, checked and run by the
//! `anfora` binary under a cap of 2 GB of address space. They must succeed with Python's value,
//! never abort, overflow the stack or run out of memory. Times are not asserted; the
//! benchmarks (`benches/benches/scaling.rs`) measure them.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `anfora ARGS` under `ulimit -v` of 2 GB.
fn capped(args: &[&str]) -> Output {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = format!(
        "ulimit -v 2000000; exec '{}' {}",
        env!("CARGO_BIN_EXE_anfora"),
        quoted.join(" ")
    );
    Command::new("sh").args(["-c", &script]).output().unwrap()
}

fn temp(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("anfora-scaling");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// `anfora check` finds no problem in `src`.
fn checks(name: &str, src: &str) {
    let p = temp(name, src);
    let o = capped(&["check", p.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{name}: {err}");
}

/// `anfora run` of `src` with `arg` prints `expected`.
fn runs(name: &str, src: &str, arg: &str, expected: &str) {
    let p = temp(name, src);
    let o = capped(&["run", p.to_str().unwrap(), arg]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{name}: {err}");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        expected,
        "{name}"
    );
}

/// `def main(x): return x op x op ... x` with `n` terms.
fn flat_chain(op: &str, n: usize) -> String {
    let terms = vec!["x"; n].join(&format!(" {op} "));
    format!("def main(x):\n    return {terms}\n")
}

/// An `if`/`elif` chain of `n` branches: `main(x)` is `x` for `0 <= x < n`, else -1.
fn elif_chain(n: usize) -> String {
    let mut s = String::from("def main(x):\n    if x == 0:\n        y = 0\n");
    for i in 1..n {
        s.push_str(&format!("    elif x == {i}:\n        y = {i}\n"));
    }
    s + "    else:\n        y = -1\n    return y\n"
}

/// `n` functions, each adding one to the previous one's result: `main(x)` is `x + n`.
fn functions(n: usize) -> String {
    let mut s = String::from("def f0(x):\n    return x + 1\n");
    for i in 1..n {
        s.push_str(&format!("def f{i}(x):\n    return f{}(x) + 1\n", i - 1));
    }
    s + &format!("def main(x):\n    return f{}(x)\n", n - 1)
}

#[test]
fn a_comparison_chain_of_100000_terms_is_checked() {
    checks("compare.py", &flat_chain("<=", 100_000));
}

#[test]
fn an_and_chain_of_100000_terms_is_checked() {
    checks("and.py", &flat_chain("and", 100_000));
}

#[test]
fn an_elif_chain_of_35000_branches_is_checked() {
    checks("elif.py", &elif_chain(35_000));
}

#[test]
fn a_chain_of_10000_functions_is_checked() {
    checks("functions.py", &functions(10_000));
}

// Compiled and run (every stage, verified after each in a debug build) at the sizes a debug
// build runs in seconds; the benchmarks compile the larger ones. With a plain int argument
// inference decides every branch of the chain; with `mutable(...)` the chain is compiled as
// branches and runs.

#[test]
fn a_comparison_chain_runs_to_pythons_value() {
    let src = flat_chain("<=", 10_000);
    runs("compare_run.py", &src, "3", "True");
    runs(
        "compare_run_false.py",
        &src.replacen("<=", "<", 1),
        "3",
        "False",
    );
    runs(
        "compare_mutable.py",
        &flat_chain("<=", 300),
        "mutable(3)",
        "True",
    );
}

#[test]
fn an_and_chain_runs_to_pythons_value() {
    runs("and_run.py", &flat_chain("and", 10_000), "7", "7");
    runs("or_run.py", &flat_chain("or", 10_000), "0", "0");
    runs("and_mutable.py", &flat_chain("and", 300), "mutable(7)", "7");
}

#[test]
fn an_elif_chain_runs_to_pythons_value() {
    runs("elif_run.py", &elif_chain(10_000), "4321", "4321");
    let src = elif_chain(2_000);
    runs("elif_mutable.py", &src, "mutable(1234)", "1234");
    runs("elif_mutable_else.py", &src, "mutable(2000)", "-1");
}

#[test]
fn a_chain_of_10000_functions_runs_to_pythons_value() {
    runs(
        "functions_run.py",
        &functions(10_000),
        "mutable(5)",
        "10005",
    );
}
