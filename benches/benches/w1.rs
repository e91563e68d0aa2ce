//! W1: one training step of the 784-512-512-10 MLP (batch 128): forward, softmax
//! cross-entropy, backward and SGD on all six weights, as one compiled call that updates the
//! Parameters in place (`benches/workloads/w1_mlp.py`).

use anfora_benches::{W1_MLP, w1_batch};

fn main() {
    anfora_tensor::run_kernels_on_this_thread();
    divan::main();
}

#[divan::bench(sample_count = 50)]
fn w1_mlp_train_step(b: divan::Bencher) {
    let mut step = anfora_benches::training_step(W1_MLP, w1_batch());
    b.bench_local(|| divan::black_box(step()));
}
