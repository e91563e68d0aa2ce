//! Scalar while loop of 10^6 iterations: the reference VM (interpreting the graphs) against
//! compiled execution (the lowered register program; compiled once outside the timed part).

use anfora_benches::SCALAR_LOOP;
use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Session};

fn main() {
    divan::main();
}

fn session(engine: Engine) -> Session {
    let mut s = Session::load("bench.py", SCALAR_LOOP, Options::default());
    s.engine = engine;
    s
}

fn run(s: &mut Session) -> Value {
    s.call(
        "main",
        vec![Arg::mutable(Value::Int(1_000_000))],
        &mut std::io::sink(),
    )
    .expect("runs")
}

#[divan::bench(sample_count = 10)]
fn scalar_while_loop_1e6_reference(b: divan::Bencher) {
    let mut s = session(Engine::Reference);
    b.bench_local(|| divan::black_box(run(&mut s)));
}

#[divan::bench(sample_count = 10)]
fn scalar_while_loop_1e6_compiled(b: divan::Bencher) {
    let mut s = session(Engine::Compiled);
    run(&mut s);
    b.bench_local(|| divan::black_box(run(&mut s)));
}

/// A buffer of 10^6 floats filled item by item in a loop of 5,000 iterations: `buf[i] = v`
/// writes into the buffer the variable owns (the executor's last read of it moves it into
/// `SetItem`), so the loop does not copy the buffer at each iteration.
const FILL: &str = "from anfora import ops\n\ndef main(n):\n    buf = ops.zeros(1000000)\n    for i in range(n):\n        buf[i] = i * 0.5\n    return buf[n - 1]\n";

#[divan::bench(sample_count = 10)]
fn fill_items_of_a_1e6_buffer_5000_times_compiled(b: divan::Bencher) {
    let mut s = Session::load("fill.py", FILL, Options::default());
    s.engine = Engine::Compiled;
    let run = |s: &mut Session| {
        s.call(
            "main",
            vec![Arg::mutable(Value::Int(5000))],
            &mut std::io::sink(),
        )
        .expect("runs")
    };
    run(&mut s);
    b.bench_local(|| divan::black_box(run(&mut s)));
}
