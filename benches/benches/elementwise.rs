//! Elementwise kernels on 4M (4_194_304) float32 values.
//!
//! W5 is `tanh(x*1.5+0.3)*sigmoid(x) - x/3` on x drawn from a fixed pseudo-random sequence in
//! [-3, 3]: op by op with the tensor methods (`w5_unfused`), as one fused kernel (`w5_fused`),
//! and fused into the buffer of a uniquely owned x (`w5_fused_owned`; x is rebuilt outside the
//! timed part). Single ops: `exp`, `tanh` and `add`.

use anfora_tensor::fused::{FusedKernel, FusedOp};
use anfora_tensor::{BinaryOp, DType, Scalar, Tensor, UnaryOp};

fn main() {
    divan::main();
}

const N: usize = 4_194_304;

/// N values in [-3, 3] from a fixed xorshift sequence.
fn data(seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..N)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 6.0 - 3.0
        })
        .collect()
}

fn x() -> Tensor {
    Tensor::from_f32(data(0x9e37_79b9_7f4a_7c15), &[N]).expect("tensor")
}

fn w5_kernel() -> FusedKernel {
    FusedKernel::new(
        &[DType::F32],
        vec![
            FusedOp::Scalar(Scalar::Float(1.5)),
            FusedOp::Binary(BinaryOp::Mul, 0, 1),
            FusedOp::Scalar(Scalar::Float(0.3)),
            FusedOp::Binary(BinaryOp::Add, 2, 3),
            FusedOp::Unary(UnaryOp::Tanh, 4),
            FusedOp::Unary(UnaryOp::Sigmoid, 0),
            FusedOp::Binary(BinaryOp::Mul, 5, 6),
            FusedOp::Scalar(Scalar::Int(3)),
            FusedOp::Binary(BinaryOp::Div, 0, 8),
            FusedOp::Binary(BinaryOp::Sub, 7, 9),
        ],
    )
    .expect("valid program")
}

fn w5_unfused_eval(x: &Tensor) -> Tensor {
    let s = |op, t: &Tensor, v: f64| Tensor::binary_scalar(op, t, Scalar::Float(v), false);
    let y = s(BinaryOp::Add, &s(BinaryOp::Mul, x, 1.5).unwrap(), 0.3).unwrap();
    let t = Tensor::unary(UnaryOp::Tanh, &y).unwrap();
    let g = Tensor::unary(UnaryOp::Sigmoid, x).unwrap();
    let m = Tensor::binary(BinaryOp::Mul, &t, &g).unwrap();
    let d = Tensor::binary_scalar(BinaryOp::Div, x, Scalar::Int(3), false).unwrap();
    Tensor::binary(BinaryOp::Sub, &m, &d).unwrap()
}

#[divan::bench(sample_count = 30)]
fn w5_unfused(b: divan::Bencher) {
    let x = x();
    b.bench(|| divan::black_box(w5_unfused_eval(divan::black_box(&x))));
}

#[divan::bench(sample_count = 50)]
fn w5_fused(b: divan::Bencher) {
    let x = x();
    let k = w5_kernel();
    assert!(k.run(&[&x]).unwrap().same_as(&w5_unfused_eval(&x)));
    b.bench(|| divan::black_box(k.run(&[divan::black_box(&x)]).unwrap()));
}

#[divan::bench(sample_count = 50)]
fn w5_fused_owned(b: divan::Bencher) {
    let x = x();
    let k = w5_kernel();
    b.with_inputs(|| Tensor::from_f32(x.as_f32_slice().unwrap().to_vec(), &[N]).unwrap())
        .bench_local_values(|x| divan::black_box(k.run_owned(vec![x]).unwrap()));
}

#[divan::bench(sample_count = 50)]
fn exp_f32_4m(b: divan::Bencher) {
    let x = x();
    b.bench(|| divan::black_box(Tensor::unary(UnaryOp::Exp, divan::black_box(&x)).unwrap()));
}

#[divan::bench(sample_count = 50)]
fn tanh_f32_4m(b: divan::Bencher) {
    let x = x();
    b.bench(|| divan::black_box(Tensor::unary(UnaryOp::Tanh, divan::black_box(&x)).unwrap()));
}

#[divan::bench(sample_count = 50)]
fn add_f32_4m(b: divan::Bencher) {
    let x = x();
    let y = Tensor::from_f32(data(0x2545_f491_4f6c_dd1d), &[N]).unwrap();
    b.bench(|| divan::black_box(Tensor::binary(BinaryOp::Add, divan::black_box(&x), &y).unwrap()));
}
