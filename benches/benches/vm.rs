//! Reference-VM throughput on a scalar while loop (10^6 iterations).

use anfora_benches::SCALAR_LOOP;
use anfora_driver::Session;
use anfora_vm::{Options, Value};

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 10)]
fn scalar_while_loop_1e6(b: divan::Bencher) {
    b.bench(|| {
        let mut s = Session::load("bench.py", SCALAR_LOOP, Options::default());
        let v = s
            .run("main", vec![Value::Int(1_000_000)], &mut std::io::sink())
            .expect("runs");
        divan::black_box(v)
    });
}
