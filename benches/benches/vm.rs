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
