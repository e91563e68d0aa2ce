//! W2: one training step of LeNet-5 (batch 64, 28x28): two convolutions with ReLU and max
//! pooling, three dense layers, softmax cross-entropy, backward and SGD on all ten weights, as
//! one compiled call that updates the Parameters in place (`benches/workloads/w2_lenet.py`).

use anfora_benches::{W2_LENET, w2_batch};

fn main() {
    anfora_tensor::run_kernels_on_this_thread();
    divan::main();
}

#[divan::bench(sample_count = 30)]
fn w2_lenet_train_step(b: divan::Bencher) {
    let mut step = anfora_benches::training_step(W2_LENET, w2_batch());
    b.bench_local(|| divan::black_box(step()));
}
