//! Workloads shared by the benchmarks in `benches/benches/` (run with `cargo bench -p
//! anfora-benches`). Each is a Python source the benchmarks compile or run.

/// A function of 50 straight-line statements mixing scalar arithmetic.
pub fn straight_line_50() -> String {
    let mut src = String::from("def f(x, y):\n    a0 = x + y\n");
    for i in 1..50 {
        let op = ["+", "-", "*", "/"][i % 4];
        let rhs = if i % 3 == 0 { "x" } else { "y" };
        src.push_str(&format!("    a{i} = a{} {op} {rhs}\n", i - 1));
    }
    src.push_str("    return a49\n");
    src
}

/// A while loop of 10 iterations whose body holds an if/else and 20 arithmetic operations.
pub fn loop_with_branches() -> String {
    let mut src = String::from(
        "def f(x, y):\n    i = 0\n    acc = x\n    while i < 10:\n        if acc > y:\n",
    );
    for k in 0..10 {
        src.push_str(&format!("            acc = acc * 0.5 + {k}.0\n"));
    }
    src.push_str("        else:\n");
    for k in 0..10 {
        src.push_str(&format!("            acc = acc * 1.5 - {k}.0\n"));
    }
    src.push_str("        i = i + 1\n    return acc\n");
    src
}

/// A scalar while loop: `main(n)` sums `i * 2 + 1` for `i < n`.
pub const SCALAR_LOOP: &str = "def main(n):\n    i = 0\n    s = 0\n    while i < n:\n        s = s + i * 2 + 1\n        i = i + 1\n    return s\n";

/// The peers' W4 `line50` (`../shared/reference/bench/workload_defs.py`): 50 straight-line
/// elementwise ops (10 x [mul, add, sin, square, sub]) on a float32 vector; `c` perturbs the
/// first constant, as the peers do to defeat their caches.
pub fn w4_line50(c: f64) -> String {
    let mut src = String::from("from anfora import ops\n\ndef line50(x):\n");
    for k in 0..10 {
        let a = 1.0 + 0.01 * k as f64 + if k == 0 { c } else { 0.0 };
        let b = 0.1 * k as f64 - 0.3;
        src.push_str(&format!(
            "    x = x * {a:?}\n    x = x + {b:?}\n    x = ops.sin(x)\n    x = x * x\n    x = x - 0.5\n"
        ));
    }
    src.push_str("    return x\n");
    src
}

/// The peers' W4 `ctrl` (`benches/workloads/w4_ctrl.py`): 10 iterations of `if sum(x) > 0:
/// branch_a (10 ops) else: branch_b (10 ops)` on a float32 vector, as real Python control
/// flow; `c` is added to each branch's first constant.
pub fn w4_ctrl(c: f64) -> String {
    const SRC: &str = include_str!("../workloads/w4_ctrl.py");
    SRC.replacen(
        "    x = x * 0.9\n",
        &format!("    x = x * {:?}\n", 0.9 + c),
        1,
    )
    .replacen(
        "    x = x * 1.2\n",
        &format!("    x = x * {:?}\n", 1.2 + c),
        1,
    )
}

/// W3: `x*y+1`.
pub const W3_XY1: &str = "def f(x, y):\n    return x * y + 1\n";

/// W5: `tanh(x*1.5+0.3)*sigmoid(x) - x/3`.
pub const W5_CHAIN: &str = "from anfora import ops\n\ndef w5(x):\n    return ops.tanh(x * 1.5 + 0.3) * ops.sigmoid(x) - x / 3\n";

/// W1: the 784-512-512-10 ReLU MLP's training step (`step(x, y)`, returning the loss) and
/// its loss with gradients (`grads(x, y)`), for one-hot labels `y`. The Python benchmark
/// (`benches/python/bench_anfora.py`) runs the same file.
pub const W1_MLP: &str = include_str!("../workloads/w1_mlp.py");

/// W2: LeNet-5's training step (`step(x, y)`, returning the loss) on 28x28 images, for
/// one-hot labels `y`. The Python benchmark runs the same file.
pub const W2_LENET: &str = include_str!("../workloads/w2_lenet.py");

/// A session of a training workload (`W1_MLP`, `W2_LENET`) whose `step` has run three
/// times on `batch`, and a closure running one more step (what the benchmarks time).
pub fn training_step(
    src: &str,
    batch: (anfora_tensor::Tensor, anfora_tensor::Tensor),
) -> impl FnMut() -> anfora_ops::Value {
    use anfora_ops::Value;
    use anfora_session::{Arg, Session};
    let (x, y) = batch;
    let args = move || {
        vec![
            Arg::from(Value::Tensor(x.clone())),
            Arg::from(Value::Tensor(y.clone())),
        ]
    };
    let mut s = Session::load("bench.py", src, anfora_ir::Options::default());
    for _ in 0..3 {
        s.call("step", args(), &mut std::io::sink())
            .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    }
    move || {
        s.call("step", args(), &mut std::io::sink())
            .unwrap_or_else(|f| panic!("{}", s.render(&f)))
    }
}

/// The W1 batch: 128 inputs of 784 values in [0, 1) and their one-hot labels (10 classes).
pub fn w1_batch() -> (anfora_tensor::Tensor, anfora_tensor::Tensor) {
    let data = vector(128 * 784, 0.5)
        .as_f32_slice()
        .expect("float32")
        .iter()
        .map(|v| v + 0.5)
        .collect();
    let x = anfora_tensor::Tensor::from_f32(data, &[128, 784]).expect("a batch");
    (x, one_hot_labels(128, 7))
}

/// The W2 batch: 64 images (1x28x28) of values in [-1, 1] and their one-hot labels.
pub fn w2_batch() -> (anfora_tensor::Tensor, anfora_tensor::Tensor) {
    let x = vector(64 * 28 * 28, 1.0)
        .reshape(&[64, 1, 28, 28])
        .expect("a batch");
    (x, one_hot_labels(64, 3))
}

/// `n` one-hot labels of 10 classes (`n x 10` float32): sample `k` is class `k * step % 10`.
fn one_hot_labels(n: usize, step: usize) -> anfora_tensor::Tensor {
    let labels: Vec<f32> = (0..n * 10)
        .map(|i| {
            let (sample, class) = (i / 10, i % 10);
            if (sample * step) % 10 == class {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    anfora_tensor::Tensor::from_f32(labels, &[n, 10]).expect("labels")
}

/// A session of `src` whose `entry` has run once on `args` (so later calls find it compiled).
pub fn warm(src: &str, entry: &str, args: &[anfora_session::Arg]) -> anfora_session::Session {
    let mut s = anfora_session::Session::load("bench.py", src, anfora_ir::Options::default());
    s.call(entry, args.to_vec(), &mut std::io::sink())
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    s
}

/// The scalar workloads' arguments, `x = 1.5` and `y = 2.0`, marked mutable (compiled for any
/// float rather than for these values).
pub fn mutable_floats() -> [anfora_session::Arg; 2] {
    use anfora_ops::Value;
    [
        anfora_session::Arg::mutable(Value::Float(1.5)),
        anfora_session::Arg::mutable(Value::Float(2.0)),
    ]
}

/// The W4 input: 1024 float32 values from a fixed sequence in [-2, 2].
pub fn w4_input() -> anfora_tensor::Tensor {
    vector(1024, 2.0)
}

/// `n` float32 values in [-scale, scale] from a fixed xorshift sequence.
pub fn vector(n: usize, scale: f32) -> anfora_tensor::Tensor {
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    let data = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 * scale - scale
        })
        .collect();
    anfora_tensor::Tensor::from_f32(data, &[n]).expect("a vector")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_compile_and_run() {
        for (src, entry) in [(straight_line_50(), "f"), (loop_with_branches(), "f")] {
            let mut s = anfora_session::Session::load("w.py", &src, anfora_ir::Options::default());
            let v = s
                .run(
                    entry,
                    vec![anfora_ops::Value::Float(1.5), anfora_ops::Value::Float(2.0)],
                    &mut std::io::sink(),
                )
                .unwrap_or_else(|f| panic!("{}", s.render(&f)));
            assert!(matches!(v, anfora_ops::Value::Float(_)));
        }
        // The perturbation reaches both branches' first constants.
        let moved = w4_ctrl(0.5);
        assert!(moved.contains("    x = x * 1.4\n") && moved.contains("    x = x * 1.7\n"));
        let lines = straight_line_50().lines().count();
        assert_eq!(lines, 52, "def + 50 statements + return");
        let mut s =
            anfora_session::Session::load("w.py", SCALAR_LOOP, anfora_ir::Options::default());
        let v = s
            .run(
                "main",
                vec![anfora_ops::Value::Int(1000)],
                &mut std::io::sink(),
            )
            .unwrap();
        assert_eq!(anfora_session::repr(&v), "1000000");
    }

    /// The training workloads run, and repeated steps on one batch lower its loss (starting
    /// near ln 10, the loss of an untrained classifier of 10 classes).
    #[test]
    fn training_workloads_learn() {
        for (src, batch) in [(W1_MLP, w1_batch()), (W2_LENET, w2_batch())] {
            let mut step = training_step(src, batch);
            let loss = |v: anfora_ops::Value| match &v {
                anfora_ops::Value::Tensor(t) => t.to_f64_vec()[0],
                other => panic!("a loss tensor, got {other:?}"),
            };
            let later = (0..5).map(|_| loss(step())).last().unwrap();
            let mut fresh = training_step(
                src,
                if src == W1_MLP {
                    w1_batch()
                } else {
                    w2_batch()
                },
            );
            let first = loss(fresh());
            assert!(first > 1.0 && first < 4.0, "initial loss {first}");
            assert!(later < first, "{later} !< {first}");
        }
    }

    /// The W4 functions compute what numpy computes for them (checked in float64 against
    /// the same arithmetic written out here).
    #[test]
    fn w4_workloads_match_their_definition() {
        use anfora_ops::Value;
        use anfora_session::{Arg, Engine};
        let x = w4_input();
        let xs: Vec<f64> = x.to_f64_vec();
        let line = |mut v: f32| {
            for k in 0..10 {
                v *= 1.0 + 0.01 * k as f32;
                v += 0.1 * k as f32 - 0.3;
                v = v.sin();
                v *= v;
                v -= 0.5;
            }
            v
        };
        for (src, entry) in [(w4_line50(0.0), "line50"), (w4_ctrl(0.0), "ctrl")] {
            let mut results = Vec::new();
            for engine in [Engine::Compiled, Engine::Reference] {
                let mut s =
                    anfora_session::Session::load("w4.py", &src, anfora_ir::Options::default());
                s.engine = engine;
                let v = s
                    .call(
                        entry,
                        vec![Arg::from(Value::Tensor(x.clone()))],
                        &mut std::io::sink(),
                    )
                    .unwrap_or_else(|f| panic!("{}", s.render(&f)));
                let Value::Tensor(t) = &v else {
                    panic!("a tensor")
                };
                results.push(t.to_f64_vec());
            }
            assert_eq!(
                results[0], results[1],
                "{entry}: both engines agree exactly"
            );
            if entry == "line50" {
                for (got, &x) in results[0].iter().zip(&xs) {
                    assert!((got - line(x as f32) as f64).abs() < 1e-4, "{got}");
                }
            }
        }
    }
}
