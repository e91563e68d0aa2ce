//! W1: one training step of the 784-512-512-10 MLP (batch 128): forward, softmax
//! cross-entropy, backward and SGD on all six weights, as one compiled call that updates the
//! Parameters in place.

use anfora_benches::{w1_batch, w1_mlp_step};
use anfora_driver::{Arg, Session};
use anfora_vm::{Options, Value};

fn main() {
    anfora_tensor::run_kernels_on_this_thread();
    divan::main();
}

#[divan::bench(sample_count = 50)]
fn w1_mlp_train_step(b: divan::Bencher) {
    let (x, y) = w1_batch();
    let args = || {
        vec![
            Arg::from(Value::Tensor(x.clone())),
            Arg::from(Value::Tensor(y.clone())),
        ]
    };
    let mut s = Session::load("bench.py", &w1_mlp_step(), Options::default());
    for _ in 0..3 {
        s.call("step", args(), &mut std::io::sink())
            .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    }
    b.bench_local(|| divan::black_box(s.call("step", args(), &mut std::io::sink()).unwrap()));
}
