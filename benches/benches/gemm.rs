//! Matrix products. `square_1024` is f32 1024³ through anfora's `matmul` and through the
//! `gemm` crate called directly on the same buffers (the target: anfora reaches at
//! least 90 % of gemm alone). The `w1_*` rows are the seven products of one W1 training step
//! (batch 128, 784-512-512-10), forward then backward, as the compiled step runs them
//! (`Gemm` with transposed operands read in place and the bias as accumulator).

use anfora_benches::vector;
use anfora_tensor::Tensor;

fn main() {
    divan::main();
}

fn matrix(rows: usize, cols: usize) -> Tensor {
    vector(rows * cols, 1.0)
        .reshape(&[rows as i64, cols as i64])
        .expect("a matrix")
}

#[divan::bench(sample_count = 30)]
fn square_1024_anfora_matmul(b: divan::Bencher) {
    let (x, y) = (matrix(1024, 1024), matrix(1024, 1024));
    b.counter(divan::counter::ItemsCount::new(2 * 1024usize.pow(3)))
        .bench_local(|| Tensor::matmul(&x, &y).unwrap());
}

#[divan::bench(sample_count = 30)]
fn square_1024_gemm_crate(b: divan::Bencher) {
    let n = 1024;
    let (x, y) = (matrix(n, n), matrix(n, n));
    let mut dst = vec![0f32; n * n];
    b.counter(divan::counter::ItemsCount::new(2 * n.pow(3)))
        .bench_local(|| gemm_crate(&mut dst, &x, &y, gemm::Parallelism::Rayon(0)));
}

/// `dst = x · y` by the `gemm` crate called directly (row-major float32 matrices).
fn gemm_crate(dst: &mut [f32], x: &Tensor, y: &Tensor, parallelism: gemm::Parallelism) {
    let (&[m, k], &[_, n]) = (x.shape(), y.shape()) else {
        panic!("matrices")
    };
    let (x, y) = (x.as_f32_slice().unwrap(), y.as_f32_slice().unwrap());
    assert!(x.len() == m * k && y.len() == k * n && dst.len() == m * n);
    // SAFETY: three contiguous row-major matrices of these sizes (asserted).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            false,
            x.as_ptr(),
            1,
            k as isize,
            y.as_ptr(),
            1,
            n as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        )
    }
}

/// One W1 product: `(a rows, a cols, b rows, b cols, transpose a, transpose b, bias)`.
type Shape = (usize, usize, usize, usize, bool, bool, bool);

const W1: &[(&str, Shape)] = &[
    ("fwd1 x@W1+b1", (128, 784, 784, 512, false, false, true)),
    ("fwd2 h1@W2+b2", (128, 512, 512, 512, false, false, true)),
    ("fwd3 h2@W3+b3", (128, 512, 512, 10, false, false, true)),
    ("bwd dW3 h2^T@d", (128, 512, 128, 10, true, false, false)),
    ("bwd dh2 d@W3^T", (128, 10, 512, 10, false, true, false)),
    ("bwd dW2 h1^T@d", (128, 512, 128, 512, true, false, false)),
    ("bwd dh1 d@W2^T", (128, 512, 512, 512, false, true, false)),
    ("bwd dW1 x^T@d", (128, 784, 128, 512, true, false, false)),
];

#[divan::bench(args = W1.iter().map(|(n, _)| *n))]
fn w1_products(b: divan::Bencher, name: &str) {
    let &(_, (ar, ac, br, bc, ta, tb, bias)) = W1.iter().find(|(n, _)| *n == name).unwrap();
    let (x, y) = (matrix(ar, ac), matrix(br, bc));
    let c = bias.then(|| matrix(1, if tb { br } else { bc }));
    b.bench_local(|| Tensor::gemm(&x, &y, c.clone(), ta, tb).unwrap());
}

/// The backward pass's two products of W1's second layer, `d @ W2ᵀ` and `h1ᵀ @ d`: one after
/// the other, each on gemm's threads, or side by side with `Tensor::gemm_pair` (one thread
/// each), as the compiled step runs them.
#[divan::bench(args = ["one after the other", "side by side"])]
fn w1_backward_pair(b: divan::Bencher, how: &str) {
    let (d, w2, h1) = (matrix(128, 512), matrix(512, 512), matrix(128, 512));
    let call = |a, b, ta, tb| anfora_tensor::GemmCall {
        a,
        b,
        c: None,
        transpose_a: ta,
        transpose_b: tb,
    };
    b.bench_local(|| {
        if how == "side by side" {
            let (x, y) = Tensor::gemm_pair(call(&d, &w2, false, true), call(&h1, &d, true, false));
            (x.unwrap(), y.unwrap())
        } else {
            let x = Tensor::gemm(&d, &w2, None, false, true).unwrap();
            (x, Tensor::gemm(&h1, &d, None, true, false).unwrap())
        }
    });
}

/// Products with few columns and short sums, as linear layers on a batch compute them (the
/// digits MLP at batch 360: 360×64·64×128 and 360×128·128×10; W1's last layer 128×512·512×10),
/// one thread: anfora's `matmul` (its AVX-512 kernel for fewer than 16 columns, gemm for the
/// rest; the result allocated per call) against the `gemm` crate alone on a reused buffer.
/// Run with `RAYON_NUM_THREADS=1`.
const NARROW: [&str; 11] = [
    "360x64x128",
    "360x128x10",
    "128x512x10",
    "360x128x128",
    "360x64x32",
    "360x64x64",
    "360x256x16",
    "360x32x256",
    "360x256x256",
    "128x1024x64",
    "1x64x128",
];

fn dims(shape: &str) -> [usize; 3] {
    let d: Vec<usize> = shape.split('x').map(|s| s.parse().unwrap()).collect();
    [d[0], d[1], d[2]]
}

#[divan::bench(args = NARROW, sample_count = 200)]
fn narrow_anfora_one_thread(b: divan::Bencher, shape: &str) {
    let [m, k, n] = dims(shape);
    let (x, y) = (matrix(m, k), matrix(k, n));
    b.counter(divan::counter::ItemsCount::new(2 * m * k * n))
        .bench_local(|| Tensor::matmul(&x, &y).unwrap());
}

#[divan::bench(args = NARROW, sample_count = 200)]
fn narrow_gemm_crate_one_thread(b: divan::Bencher, shape: &str) {
    let [m, k, n] = dims(shape);
    let (x, y) = (matrix(m, k), matrix(k, n));
    let mut dst = vec![0f32; m * n];
    b.counter(divan::counter::ItemsCount::new(2 * m * k * n))
        .bench_local(|| gemm_crate(&mut dst, &x, &y, gemm::Parallelism::None));
}

/// The 8-bit product of quantized models (`u8` activations with a zero point, `i8` packed
/// weights, `i32` sums; VNNI where the CPU has it) on the narrow shapes, one thread: the
/// figure issue 28 compares with `narrow_gemm_crate_one_thread`.
#[divan::bench(args = NARROW, sample_count = 200)]
fn narrow_u8i8_one_thread(b: divan::Bencher, shape: &str) {
    use anfora_tensor::quant::{PackedWeights, matmul_u8i8};
    let [m, k, n] = dims(shape);
    let a: Vec<u8> = (0..m * k).map(|i| (i * 7 % 251) as u8).collect();
    let w: Vec<i8> = (0..k * n).map(|i| (i * 13 % 255) as u8 as i8).collect();
    let packed = PackedWeights::pack(&w, k, n);
    let mut c = vec![0i32; m * n];
    b.counter(divan::counter::ItemsCount::new(2 * m * k * n))
        .bench_local(|| matmul_u8i8(&a, k, m, 3, &packed, &mut c));
}

/// Weight-only quantization: float32 activations times `i8` weights with column scales,
/// widened inside the kernel, on the narrow shapes, one thread.
#[divan::bench(args = NARROW, sample_count = 200)]
fn narrow_f32_i8_one_thread(b: divan::Bencher, shape: &str) {
    use anfora_tensor::quant::{WeightOnly, matmul_f32_i8};
    let [m, k, n] = dims(shape);
    let a: Vec<f32> = (0..m * k).map(|i| (i % 17) as f32 * 0.1).collect();
    let w: Vec<i8> = (0..k * n).map(|i| (i * 13 % 255) as u8 as i8).collect();
    let packed = WeightOnly::pack(&w, k, n, &vec![0.01; n]);
    let mut c = vec![0f32; m * n];
    b.counter(divan::counter::ItemsCount::new(2 * m * k * n))
        .bench_local(|| matmul_f32_i8(&a, k, m, &packed, &mut c));
}
