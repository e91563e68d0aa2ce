//! Compile latency, parse to executable: a fresh session loads the source and runs every stage
//! (parse, resolve, infer, optimize, lower) for the argument signature. The peers' W4
//! functions (`line50`: 50 straight-line elementwise ops; `ctrl`: a 10-iteration while loop
//! holding an if/else of 20 elementwise ops) on a float32 vector of 1024, plus the scalar
//! versions from the frontend benchmark. Each run perturbs a constant, as the peers do.

use std::sync::atomic::{AtomicU32, Ordering};

use anfora_benches::{
    W1_MLP, loop_with_branches, mutable_floats, straight_line_50, w4_ctrl, w4_input, w4_line50,
};
use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Session};

fn main() {
    divan::main();
}

fn compile(src: &str, entry: &str, args: &[Arg]) {
    let mut s = Session::load("bench.py", src, Options::default());
    let c = s
        .compile_pipeline(entry, Some(args), &mut |_| {})
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    divan::black_box(c);
}

/// Sources with a different constant on every run (prepared outside the timed part).
fn sources(make: fn(f64) -> String) -> impl Fn() -> String + Sync {
    let k = AtomicU32::new(0);
    move || make((k.fetch_add(1, Ordering::Relaxed) + 1) as f64 * 1e-6)
}

/// W4's `entry` compiled for the W4 input, from a differently perturbed source each run.
fn w4_compile(b: divan::Bencher, make: fn(f64) -> String, entry: &str) {
    let args = [Arg::from(Value::Tensor(w4_input()))];
    b.with_inputs(sources(make))
        .bench_local_refs(|src| compile(src, entry, &args));
}

#[divan::bench]
fn w4_line50_tensor(b: divan::Bencher) {
    w4_compile(b, w4_line50, "line50");
}

#[divan::bench]
fn w4_ctrl_tensor(b: divan::Bencher) {
    w4_compile(b, w4_ctrl, "ctrl");
}

/// Scalar workload `src` (its function `f`) compiled for mutable floats.
fn scalars_compile(b: divan::Bencher, src: String) {
    let args = mutable_floats();
    b.bench_local(|| compile(&src, "f", &args));
}

#[divan::bench]
fn straight_line_50_scalars(b: divan::Bencher) {
    scalars_compile(b, straight_line_50());
}

#[divan::bench]
fn while_loop_if_else_20_ops_scalars(b: divan::Bencher) {
    scalars_compile(b, loop_with_branches());
}

/// The MLP loss of W1 (784-512-512-10, ReLU, softmax cross-entropy written with `exp`, `log`,
/// `max` and `sum`) under `value_and_grad` with respect to its six Parameters: the grad stage
/// and every later stage, for a batch of 128 (issue: ≤ 20 ms).

#[divan::bench]
fn mlp_value_and_grad(b: divan::Bencher) {
    let tensor = |shape: &[usize]| {
        Arg::from(Value::Tensor(
            anfora_tensor::Tensor::zeros(shape, anfora_tensor::DType::F32).unwrap(),
        ))
    };
    let args = [tensor(&[128, 784]), tensor(&[128, 10])];
    b.with_inputs(|| Session::load("bench.py", W1_MLP, Options::default()))
        .bench_local_values(|mut s| {
            let c = s
                .compile_pipeline("grads", Some(&args), &mut |_| {})
                .unwrap_or_else(|f| panic!("{}", s.render(&f)));
            divan::black_box(c);
        });
}
