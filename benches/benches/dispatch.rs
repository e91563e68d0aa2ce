//! Calls of compiled functions from Rust through the session: argument signature, cache
//! lookup, and the executor. W3 is `x*y+1` on two float32 vectors of 4 elements; the W4
//! steady-state calls run the compiled `line50` and `ctrl` on 1024 elements.

use anfora_benches::{W3_XY1, vector, w4_ctrl, w4_input, w4_line50};
use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Session};

fn main() {
    divan::main();
}

fn warm(src: &str, entry: &str, args: &[Arg]) -> Session {
    let mut s = Session::load("bench.py", src, Options::default());
    s.call(entry, args.to_vec(), &mut std::io::sink())
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    s
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

#[divan::bench]
fn w4_line50_steady(b: divan::Bencher) {
    let x = Value::Tensor(w4_input());
    let mut s = warm(&w4_line50(0.0), "line50", &[Arg::from(x.clone())]);
    b.bench_local(|| {
        let v = s
            .call("line50", vec![Arg::from(x.clone())], &mut std::io::sink())
            .unwrap();
        divan::black_box(v)
    });
}

#[divan::bench]
fn w4_ctrl_steady(b: divan::Bencher) {
    let x = Value::Tensor(w4_input());
    let mut s = warm(&w4_ctrl(0.0), "ctrl", &[Arg::from(x.clone())]);
    b.bench_local(|| {
        let v = s
            .call("ctrl", vec![Arg::from(x.clone())], &mut std::io::sink())
            .unwrap();
        divan::black_box(v)
    });
}

/// The same function on Python floats marked mutable: the cost of a call itself (signature,
/// cache lookup, frame) without tensor work.
#[divan::bench]
fn xy1_mutable_floats(b: divan::Bencher) {
    let args = [
        Arg::mutable(Value::Float(1.5)),
        Arg::mutable(Value::Float(2.0)),
    ];
    let mut s = warm(W3_XY1, "f", &args);
    b.bench_local(|| {
        let v = s.call("f", args.to_vec(), &mut std::io::sink()).unwrap();
        divan::black_box(v)
    });
}
