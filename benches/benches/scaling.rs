//! Compile time against program size (issue 25, item 4), and the flat chains of item 3: long
//! straight-line functions, chains of functions each calling the previous, and flat chains
//! of branches (`elif`, `a < b < ...`, `a and b and ...`). Each size is generated here; the
//! figures and the peak memory of the command line on the same programs are in
//! `docs/performance.md` ("Compile-time scaling"). Sizes grow tenfold, so a quadratic step
//! shows as a hundredfold time.
//!
//! `frontend_*` is source to resolved graphs; `compile_*` every stage to the lowered
//! program, for a float argument known only at run time (so nothing folds away).

use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Session};

fn main() {
    divan::main();
}

/// `main(x)` of `n` statements, each updating one float.
fn statements(n: usize) -> String {
    let mut s = String::from("def main(x):\n    y = x\n");
    for i in 0..n {
        let op = ["+", "*", "-"][i % 3];
        s.push_str(&format!("    y = y {op} {}.5\n", i % 7));
    }
    s + "    return y\n"
}

/// `n` functions, each calling the previous one, and `main(x)` calling the last.
fn functions(n: usize) -> String {
    let mut s = String::from("def f0(x):\n    return x + 1.0\n");
    for i in 1..n {
        s.push_str(&format!("def f{i}(x):\n    return f{}(x) + 1.0\n", i - 1));
    }
    s + &format!("def main(x):\n    return f{}(x)\n", n - 1)
}

/// An `if`/`elif` chain of `n` branches on `x`.
fn elif_chain(n: usize) -> String {
    let mut s = String::from("def main(x):\n    if x == 0.0:\n        y = 0.0\n");
    for i in 1..n {
        s.push_str(&format!("    elif x == {i}.0:\n        y = {i}.0\n"));
    }
    s + "    else:\n        y = -1.0\n    return y\n"
}

/// `x op x op ... x` with `n` terms.
fn flat_chain(op: &str, n: usize) -> String {
    let terms = vec!["x"; n].join(&format!(" {op} "));
    format!("def main(x):\n    return {terms}\n")
}

fn frontend(src: &str) {
    let mut s = Session::load("scaling.py", src, Options::default());
    let g = s
        .compile("main")
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    divan::black_box(g);
}

fn compile(src: &str) {
    let mut s = Session::load("scaling.py", src, Options::default());
    let args = [Arg::mutable(Value::Float(1.5))];
    let c = s
        .compile_pipeline("main", Some(&args), &mut |_| {})
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    divan::black_box(c);
}

const SIZES: &[usize] = &[1_000, 10_000, 100_000];
const FUNCTIONS: &[usize] = &[100, 1_000, 10_000];

#[divan::bench(args = SIZES, sample_count = 3, sample_size = 1)]
fn frontend_statements(b: divan::Bencher, n: usize) {
    let src = statements(n);
    b.bench(|| frontend(&src));
}

#[divan::bench(args = FUNCTIONS, sample_count = 3, sample_size = 1)]
fn frontend_functions(b: divan::Bencher, n: usize) {
    let src = functions(n);
    b.bench(|| frontend(&src));
}

#[divan::bench(args = SIZES, sample_count = 3, sample_size = 1)]
fn frontend_elif_chain(b: divan::Bencher, n: usize) {
    let src = elif_chain(n);
    b.bench(|| frontend(&src));
}

#[divan::bench(args = SIZES, sample_count = 3, sample_size = 1)]
fn frontend_comparison_chain(b: divan::Bencher, n: usize) {
    let src = flat_chain("<", n);
    b.bench(|| frontend(&src));
}

#[divan::bench(args = SIZES, sample_count = 3, sample_size = 1)]
fn frontend_and_chain(b: divan::Bencher, n: usize) {
    let src = flat_chain("and", n);
    b.bench(|| frontend(&src));
}

#[divan::bench(args = SIZES, sample_count = 3, sample_size = 1)]
fn compile_statements(b: divan::Bencher, n: usize) {
    let src = statements(n);
    b.bench(|| compile(&src));
}

#[divan::bench(args = FUNCTIONS, sample_count = 3, sample_size = 1)]
fn compile_functions(b: divan::Bencher, n: usize) {
    let src = functions(n);
    b.bench(|| compile(&src));
}

/// The chains compiled in every stage for an argument known only at run time are smaller
/// (the frontend benches go to 100,000): each term is a branch, and an `and` chain's small
/// join blocks are copied into both branches before them by the inliner, so that one grows
/// faster than linearly (`docs/performance.md`, "Compile-time scaling").
const CHAINS: &[usize] = &[1_000, 5_000];
const AND_CHAINS: &[usize] = &[100, 1_000];

#[divan::bench(args = CHAINS, sample_count = 3, sample_size = 1)]
fn compile_elif_chain(b: divan::Bencher, n: usize) {
    let src = elif_chain(n);
    b.bench(|| compile(&src));
}

#[divan::bench(args = CHAINS, sample_count = 3, sample_size = 1)]
fn compile_comparison_chain(b: divan::Bencher, n: usize) {
    let src = flat_chain("<", n);
    b.bench(|| compile(&src));
}

#[divan::bench(args = AND_CHAINS, sample_count = 3, sample_size = 1)]
fn compile_and_chain(b: divan::Bencher, n: usize) {
    let src = flat_chain("and", n);
    b.bench(|| compile(&src));
}
