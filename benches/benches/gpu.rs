//! The GPU workloads of issue 31 on a CUDA device, timed as `../shared/reference/bench/
//! jax_gpu.py` times JAX: warm-up calls, then each call followed by a synchronization, the
//! median and minimum wall time in ms. One line per result, `name  median_ms  min_ms`; lines
//! starting with `#` are information. Without a CUDA device it says so and exits.
//!
//! `scripts/gpu-check.sh` builds it on a CPU machine; `scripts/gpu-bench.sh` runs it beside
//! JAX on the GPU machine.

use std::time::Instant;

use anfora_benches::{W1_MLP, W2_LENET, W5_CHAIN, training_step, vector, w1_batch, w2_batch};
use anfora_ops::Value;
use anfora_session::{Arg, Session};
use anfora_tensor::Tensor;

const W6_FWD: &str = "from anfora import ops\n\ndef fwd(W1, b1, W2, b2, W3, b3, x):\n    h = ops.relu(x @ W1 + b1)\n    h = ops.relu(h @ W2 + b2)\n    return h @ W3 + b3\n";

fn main() {
    let device = match anfora_cuda::install() {
        anfora_cuda::Probe::Found(d) if !d.is_empty() => d[0],
        anfora_cuda::Probe::Found(_) => return println!("# no CUDA device could be opened"),
        anfora_cuda::Probe::None(why) => return println!("# no CUDA device: {why}"),
    };
    let backend = anfora_tensor::device::backend(device).expect("installed");
    println!("# {}", backend.describe());
    anfora_ops::kernels::set_default_device(device).expect("installed");
    let sync = || backend.synchronize().expect("the device works");
    let on = |t: Tensor| Value::Tensor(t.to_device(device).expect("uploads"));

    let x = on(vector(4 * 1024 * 1024, 3.0));
    let mut s = session(W5_CHAIN, "w5", std::slice::from_ref(&x));
    bench("anfora_W5_chain_4M_jit", 10, 50, || {
        call(&mut s, "w5", std::slice::from_ref(&x));
        sync();
    });

    for precision in ["f32", "tf32"] {
        let p = anfora_ops::kernels::MatmulPrecision::parse(precision).expect("a precision");
        anfora_ops::kernels::set_matmul_precision(p);
        for (name, src, (x, y)) in [
            ("W1_mlp", W1_MLP, w1_batch()),
            ("W2_lenet_b64", W2_LENET, w2_batch()),
        ] {
            let batch = (x.to_device(device).unwrap(), y.to_device(device).unwrap());
            let mut step = training_step(src, batch);
            bench(
                &format!("anfora_{name}_train_step_{precision}"),
                10,
                50,
                || {
                    step();
                    sync();
                },
            );
        }
    }

    let sizes = [784, 512, 512, 10];
    let mut params = Vec::new();
    for (i, w) in sizes.windows(2).enumerate() {
        let scale = (2.0 / w[0] as f32).sqrt();
        let m = vector(w[0] * w[1], scale)
            .reshape(&[w[0] as i64, w[1] as i64])
            .unwrap();
        params.push(on(m));
        params.push(on(vector(w[1], 0.1 * (i + 1) as f32)));
    }
    for precision in ["f32", "tf32"] {
        let p = anfora_ops::kernels::MatmulPrecision::parse(precision).expect("a precision");
        anfora_ops::kernels::set_matmul_precision(p);
        for batch in [1usize, 256] {
            let x = on(vector(batch * 784, 1.0)
                .reshape(&[batch as i64, 784])
                .unwrap());
            let mut args = params.clone();
            args.push(x);
            let mut s = session(W6_FWD, "fwd", &args);
            bench(
                &format!("anfora_W6_mlp_fwd_b{batch}_{precision}"),
                20,
                50,
                || {
                    call(&mut s, "fwd", &args);
                    sync();
                },
            );
        }
    }
}

fn session(src: &str, entry: &str, args: &[Value]) -> Session {
    let t = Instant::now();
    let mut s = Session::load("gpu_bench.py", src, anfora_ir::Options::default());
    call(&mut s, entry, args);
    println!(
        "# {entry}: compile + first call {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    s
}

fn call(s: &mut Session, entry: &str, args: &[Value]) -> Value {
    let args = args.iter().cloned().map(Arg::from).collect();
    s.call(entry, args, &mut std::io::sink())
        .unwrap_or_else(|f| panic!("{}", s.render(&f)))
}

fn bench(name: &str, warmup: usize, reps: usize, mut f: impl FnMut()) {
    for _ in 0..warmup {
        f();
    }
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!("{name}  {:.4}  {:.4}", times[reps / 2], times[0]);
}
