//! Calls of compiled functions from Rust through the session: argument signature, cache
//! lookup, and the executor. W3 is `x*y+1` on two float32 vectors of 4 elements; the W4
//! steady-state calls run the compiled `line50` and `ctrl` on 1024 elements.

use anfora_benches::{W3_XY1, mutable_floats, vector, w4_ctrl, w4_input, w4_line50, warm};
use anfora_ops::Value;
use anfora_session::Arg;

fn main() {
    divan::main();
}

#[divan::bench]
fn w3_xy1_4_floats(b: divan::Bencher) {
    let x = Value::Tensor(vector(4, 1.0));
    let y = Value::Tensor(vector(4, 2.0));
    let args = [Arg::from(x.clone()), Arg::from(y.clone())];
    let mut s = warm(W3_XY1, "f", &args);
    b.bench_local(|| {
        let v = s
            .call(
                "f",
                vec![Arg::from(x.clone()), Arg::from(y.clone())],
                &mut std::io::sink(),
            )
            .unwrap();
        divan::black_box(v)
    });
}

/// Steady-state calls of W4's `entry` in `src` on the W4 input.
fn w4_steady(b: divan::Bencher, src: &str, entry: &str) {
    let x = Value::Tensor(w4_input());
    let mut s = warm(src, entry, &[Arg::from(x.clone())]);
    b.bench_local(|| {
        let v = s
            .call(entry, vec![Arg::from(x.clone())], &mut std::io::sink())
            .unwrap();
        divan::black_box(v)
    });
}

#[divan::bench]
fn w4_line50_steady(b: divan::Bencher) {
    w4_steady(b, &w4_line50(0.0), "line50");
}

#[divan::bench]
fn w4_ctrl_steady(b: divan::Bencher) {
    w4_steady(b, &w4_ctrl(0.0), "ctrl");
}

/// The same function on Python floats marked mutable: the cost of a call itself (signature,
/// cache lookup, frame) without tensor work.
#[divan::bench]
fn xy1_mutable_floats(b: divan::Bencher) {
    let args = mutable_floats();
    let mut s = warm(W3_XY1, "f", &args);
    b.bench_local(|| {
        let v = s.call("f", args.to_vec(), &mut std::io::sink()).unwrap();
        divan::black_box(v)
    });
}
