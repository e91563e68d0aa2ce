//! Gradients of the neural-network operations checked element by element against central
//! finite differences in float64, and the compiled engine against the reference VM.

use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Failure, Session, repr};
use anfora_tensor::{DType, Tensor};

const HEADER: &str = "import anfora\nfrom anfora import ops, grad, value_and_grad, vjp\n\n";

fn session(src: &str, engine: Engine) -> Session {
    let mut s = Session::load("m.py", src, Options::default());
    s.engine = engine;
    s
}

fn call(s: &mut Session, entry: &str, args: &[Value]) -> Value {
    let args = args.iter().cloned().map(Arg::from).collect();
    s.call(entry, args, &mut std::io::sink())
        .unwrap_or_else(|f| panic!("{entry}: {}", s.render(&f)))
}

/// Deterministic float64 values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn tensor(shape: &[usize], seed: u64) -> Value {
    let n = shape.iter().product();
    Value::Tensor(Tensor::from_f64(values(n, seed), shape).unwrap())
}

fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::Float(f) => vec![*f],
        Value::Int(i) => vec![*i as f64],
        Value::Tensor(t) => t.to_f64_vec(),
        Value::Tuple(xs) => xs.iter().flat_map(floats).collect(),
        other => panic!("not numbers: {}", repr(other)),
    }
}

/// Checks `grad(f, argnums=all)` at `args` (float64 tensors) against central differences of
/// `f` (a scalar) in every element, and the compiled engine against the reference VM.
fn check(body: &str, args: &[Value]) {
    check_with(body, args, 1e-6);
}

fn check_with(body: &str, args: &[Value], tol: f64) {
    let n = args.len();
    let params: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    let p = params.join(", ");
    let argnums: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let src = format!(
        "{HEADER}{body}\n\ndef value({p}):\n    return f({p})\n\ndef gradient({p}):\n    return grad(f, argnums=({},))({p})\n",
        argnums.join(", ")
    );
    let mut compiled = session(&src, Engine::Compiled);
    let mut reference = session(&src, Engine::Reference);
    let g = floats(&call(&mut compiled, "gradient", args));
    let r = floats(&call(&mut reference, "gradient", args));
    assert_eq!(g, r, "the engines disagree\n{src}");
    let h = 1e-6;
    let mut k = 0;
    for i in 0..n {
        let Value::Tensor(t) = &args[i] else {
            panic!("tensor arguments")
        };
        let base = t.to_f64_vec();
        for j in 0..base.len() {
            let at = |delta: f64| {
                let mut v = base.clone();
                v[j] += delta;
                let mut xs = args.to_vec();
                xs[i] = Value::Tensor(Tensor::from_f64(v, t.shape()).unwrap());
                xs
            };
            let fp = floats(&call(&mut compiled, "value", &at(h)));
            let fm = floats(&call(&mut compiled, "value", &at(-h)));
            assert_eq!(fp.len(), 1, "f must return a scalar\n{src}");
            let fd = (fp[0] - fm[0]) / (2.0 * h);
            assert!(
                (g[k] - fd).abs() <= tol * fd.abs().max(1.0),
                "d/da{i}[{j}]: grad {} vs finite difference {fd}\n{src}",
                g[k]
            );
            k += 1;
        }
    }
    assert_eq!(k, g.len(), "one gradient per element\n{src}");
}

// ---- conv2d ---------------------------------------------------------------------------------

#[test]
fn conv2d_gradients_of_input_and_weight() {
    for (call, xs, ws) in [
        ("ops.conv2d(x, w)", &[2, 2, 5, 4][..], [3, 2, 3, 2]),
        (
            "ops.conv2d(x, w, stride=(2, 1), padding=1)",
            &[1, 2, 6, 5],
            [2, 2, 3, 3],
        ),
        (
            "ops.conv2d(x, w, padding=(2, 0), dilation=(2, 1))",
            &[2, 1, 5, 6],
            [2, 1, 2, 3],
        ),
        ("ops.conv2d(x, w, groups=2)", &[1, 4, 4, 4], [4, 2, 2, 2]),
        (
            "ops.conv2d(x, w, padding='same', dilation=2)",
            &[1, 2, 5, 5],
            [1, 2, 2, 3],
        ),
        (
            "ops.conv2d(x, w, padding='valid')",
            &[2, 3, 4],
            [2, 2, 2, 3],
        ),
    ] {
        // tanh makes the loss non-linear in the output, so every sensitivity differs.
        let body = format!("def f(x, w):\n    return ops.sum(ops.tanh({call}) * 0.7)");
        check(&body, &[tensor(xs, 1), tensor(&ws, 2)]);
    }
}

#[test]
fn conv2d_second_order() {
    // The inner gradient is a backward kernel; differentiating it runs the adjoint rules of
    // Conv2DBackpropFilter and Conv2DBackpropInput.
    let body = "def inner(x, w):\n    return ops.sum(ops.tanh(ops.conv2d(x, w, stride=2, padding=1)))\n\ndef f(x, w):\n    gx, gw = grad(inner, argnums=(0, 1))(x, w)\n    return ops.sum(ops.sin(gw)) + ops.sum(gx * gx)";
    check_with(
        body,
        &[tensor(&[1, 2, 5, 5], 3), tensor(&[2, 2, 3, 3], 4)],
        1e-5,
    );
}

#[test]
fn conv2d_errors_at_compile_and_run_time() {
    // Shapes known at compile time: a compile error at the call.
    let src = format!("{HEADER}def main(x, w):\n    y = x * 2.0\n    return ops.conv2d(y, w)\n");
    let mut s = session(&src, Engine::Compiled);
    let args = vec![
        Arg::from(tensor(&[1, 3, 5, 5], 1)),
        Arg::from(tensor(&[2, 4, 3, 3], 2)),
    ];
    match s.call("main", args, &mut std::io::sink()) {
        Err(f @ Failure::Compile(_)) => {
            let text = s.render(&f);
            assert!(
                text.contains("E0301")
                    && text
                        .contains("conv2d: input has 3 channels but weight expects 4 (groups=1)")
                    && text.contains("m.py:6:12"),
                "{text}"
            );
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
    // A stride known only at run time: the kernel's ValueError, on both engines.
    let src = format!("{HEADER}def main(x, w, s):\n    return ops.conv2d(x, w, stride=s)\n");
    for engine in [Engine::Compiled, Engine::Reference] {
        let mut s = session(&src, engine);
        let args = vec![
            Arg::from(tensor(&[1, 1, 5, 5], 1)),
            Arg::from(tensor(&[1, 1, 3, 3], 2)),
            Arg::mutable(Value::Int(0)),
        ];
        match s.call("main", args, &mut std::io::sink()) {
            Err(Failure::Runtime(e)) => assert_eq!(
                e.headline(),
                "ValueError: conv2d: stride must be positive, got (0, 0)",
                "{engine:?}"
            ),
            other => panic!("{engine:?}: expected a ValueError, got {other:?}"),
        }
    }
    // Arguments of the wrong type raise TypeError.
    let src = format!("{HEADER}def main(x, w):\n    return ops.conv2d(x, w, padding=1.5)\n");
    for engine in [Engine::Compiled, Engine::Reference] {
        let mut s = session(&src, engine);
        let args = vec![
            Arg::from(tensor(&[1, 1, 5, 5], 1)),
            Arg::from(tensor(&[1, 1, 3, 3], 2)),
        ];
        match s.call("main", args, &mut std::io::sink()) {
            Err(Failure::Runtime(e)) => assert_eq!(
                e.headline(),
                "TypeError: conv2d() argument 'padding' must be an int or a tuple of 2 ints, not float",
                "{engine:?}"
            ),
            other => panic!("{engine:?}: expected a TypeError, got {other:?}"),
        }
    }
    // A float32 convolution stays float32; an int64 one is refused at compile time.
    let src = format!("{HEADER}def main(x, w):\n    return ops.conv2d(x, w)\n");
    let mut s = session(&src, Engine::Compiled);
    let x = Tensor::ones(&[1, 1, 3, 3], DType::F32).unwrap();
    let w = Tensor::ones(&[1, 1, 2, 2], DType::F32).unwrap();
    let y = call(
        &mut s,
        "main",
        &[Value::Tensor(x), Value::Tensor(w.clone())],
    );
    assert_eq!(
        repr(&y),
        "Tensor([[[[4., 4.],\n          [4., 4.]]]], dtype=float32)"
    );
    let xi = Tensor::ones(&[1, 1, 3, 3], DType::I64).unwrap();
    let args = vec![Arg::from(Value::Tensor(xi)), Arg::from(Value::Tensor(w))];
    match s.call("main", args, &mut std::io::sink()) {
        Err(f @ Failure::Compile(_)) => {
            let text = s.render(&f);
            assert!(
                text.contains("conv2d: expected float32 or float64 tensors, got int64"),
                "{text}"
            );
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

// ---- pooling ----------------------------------------------------------------------------------

#[test]
fn pooling_gradients() {
    for (call, xs) in [
        ("ops.max_pool2d(x, 2)", &[2, 2, 4, 6][..]),
        (
            "ops.max_pool2d(x, (3, 2), stride=(2, 1), padding=1)",
            &[1, 2, 5, 5],
        ),
        ("ops.max_pool2d(x, 3, stride=1)", &[2, 5, 5]),
        ("ops.avg_pool2d(x, 2)", &[2, 2, 4, 6]),
        (
            "ops.avg_pool2d(x, (3, 2), stride=(2, 1), padding=1)",
            &[1, 2, 5, 5],
        ),
        (
            "ops.avg_pool2d(x, kernel_size=3, stride=2, padding=(1, 0))",
            &[2, 5, 6],
        ),
    ] {
        let body = format!("def f(x):\n    return ops.sum(ops.tanh({call}) * 0.8)");
        check(&body, &[tensor(xs, 11)]);
    }
}

#[test]
fn pooling_second_order() {
    for pool in ["max_pool2d", "avg_pool2d"] {
        let body = format!(
            "def inner(x):\n    return ops.sum(ops.tanh(ops.{pool}(x, 2, stride=1) * 1.5))\n\ndef f(x):\n    return ops.sum(ops.sin(grad(inner)(x)))"
        );
        check_with(&body, &[tensor(&[1, 2, 4, 4], 12)], 1e-5);
    }
}

#[test]
fn a_small_convolutional_network() {
    // conv -> relu -> max pool -> conv -> mean: gradients of both weights and the input.
    let body = "def f(x, w1, w2):\n    h = ops.relu(ops.conv2d(x, w1, padding=1))\n    h = ops.max_pool2d(h, 2)\n    h = ops.conv2d(h, w2)\n    return ops.mean(h * h)";
    check(
        body,
        &[
            tensor(&[2, 1, 6, 6], 21),
            tensor(&[3, 1, 3, 3], 22),
            tensor(&[2, 3, 2, 2], 23),
        ],
    );
}

#[test]
fn pooling_errors_at_compile_time() {
    let src = format!("{HEADER}def main(x):\n    return ops.max_pool2d(x, 3, padding=2)\n");
    let mut s = session(&src, Engine::Compiled);
    match s.call(
        "main",
        vec![Arg::from(tensor(&[1, 1, 6, 6], 1))],
        &mut std::io::sink(),
    ) {
        Err(f @ Failure::Compile(_)) => {
            let text = s.render(&f);
            assert!(
                text.contains(
                    "max_pool2d: padding (2, 2) must be at most half of the kernel size (3, 3)"
                ) && text.contains("m.py:5:12"),
                "{text}"
            );
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
    // The reference VM raises the same message as a ValueError.
    let mut s = session(&src, Engine::Reference);
    match s.call(
        "main",
        vec![Arg::from(tensor(&[1, 1, 6, 6], 1))],
        &mut std::io::sink(),
    ) {
        Err(Failure::Runtime(e)) => assert_eq!(
            e.headline(),
            "ValueError: max_pool2d: padding (2, 2) must be at most half of the kernel size (3, 3)"
        ),
        other => panic!("expected a ValueError, got {other:?}"),
    }
}

// ---- softmax family ---------------------------------------------------------------------------

#[test]
fn softmax_family_gradients() {
    for call in [
        "ops.softmax(x)",
        "ops.softmax(x, axis=0)",
        "ops.log_softmax(x, axis=1)",
        "ops.log_softmax(x, -1)",
        "ops.logsumexp(x)",
        "ops.logsumexp(x, axis=1)",
        "ops.logsumexp(x, axis=(0, 2), keepdims=True)",
    ] {
        // Weights make every output's sensitivity different.
        let body = format!(
            "def f(x):\n    y = {call}\n    return ops.sum(y * ops.sin(ops.reshape(ops.arange(y.size, dtype=anfora.float64), y.shape)))"
        );
        check(&body, &[tensor(&[2, 3, 4], 31)]);
    }
}

#[test]
fn softmax_family_second_order() {
    for call in [
        "ops.softmax(x, axis=1)",
        "ops.log_softmax(x, axis=0)",
        "ops.logsumexp(x, axis=1)",
    ] {
        let body = format!(
            "def inner(x):\n    y = {call}\n    return ops.sum(y * ops.cos(ops.reshape(ops.arange(y.size, dtype=anfora.float64), y.shape)))\n\ndef f(x):\n    return ops.sum(ops.sin(grad(inner)(x)))"
        );
        check_with(&body, &[tensor(&[3, 4], 32)], 1e-5);
    }
}

#[test]
fn a_small_classifier_with_cross_entropy() {
    // conv -> max pool -> dense -> log_softmax -> negative log-likelihood of fixed labels.
    // (The dense layer is a broadcast product summed: the gradient of `@` is computed by
    // different gemm calls in the two engines, which may round differently in the last bit.)
    let body = "def f(x, w, v):\n    h = ops.tanh(ops.conv2d(x, w, padding='same'))\n    h = ops.max_pool2d(h, 2)\n    h = ops.reshape(h, (2, 12))\n    logits = ops.sum(h[:, :, None] * v[None], axis=1)\n    labels = ops.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], dtype=anfora.float64)\n    return -ops.sum(ops.log_softmax(logits) * labels) + ops.mean(ops.logsumexp(logits, axis=1))";
    check(
        body,
        &[
            tensor(&[2, 1, 4, 4], 41),
            tensor(&[3, 1, 3, 3], 42),
            tensor(&[12, 3], 43),
        ],
    );
}

// ---- hardswish and var ---------------------------------------------------------------------------

/// Values in [-5, 5): over the three pieces of hardswish (none within the step of a kink).
fn wide(shape: &[usize], seed: u64) -> Value {
    let n = shape.iter().product();
    let v = values(n, seed).into_iter().map(|v| 5.0 * v).collect();
    Value::Tensor(Tensor::from_f64(v, shape).unwrap())
}

#[test]
fn hardswish_gradients() {
    let x = wide(&[4, 6], 61);
    check(
        "def f(x):\n    return ops.sum(ops.hardswish(x) * ops.cos(x))",
        std::slice::from_ref(&x),
    );
    let second = "def inner(x):\n    return ops.sum(ops.hardswish(x) * x)\n\ndef f(x):\n    return ops.sum(ops.sin(grad(inner)(x)))";
    check_with(second, &[x], 1e-5);
}

#[test]
fn var_gradients() {
    for call in [
        "ops.var(x)",
        "ops.var(x, axis=1)",
        "ops.var(x, axis=(0, 2), ddof=1, keepdims=True)",
        "ops.var(x, -1, 1.5)",
    ] {
        let body = format!(
            "def f(x):\n    y = {call}\n    return ops.sum(y * ops.sin(ops.reshape(ops.arange(y.size, dtype=anfora.float64), y.shape)))"
        );
        check(&body, &[tensor(&[2, 3, 4], 62)]);
    }
}

#[test]
fn var_second_and_third_order() {
    for call in [
        "ops.var(x, axis=1)",
        "ops.var(x, ddof=1)",
        "ops.var(x, axis=0, keepdims=True)",
    ] {
        let body = format!(
            "def inner(x):\n    y = {call}\n    return ops.sum(y * ops.cos(ops.reshape(ops.arange(y.size, dtype=anfora.float64), y.shape)))\n\ndef f(x):\n    return ops.sum(ops.sin(grad(inner)(x)))"
        );
        check_with(&body, &[tensor(&[3, 4], 63)], 1e-5);
    }
    let third = "def inner(x):\n    return ops.var(x, axis=1)[0] * 3.0\n\ndef middle(x):\n    return ops.sum(ops.sin(grad(inner)(x)))\n\ndef f(x):\n    return ops.sum(ops.cos(grad(middle)(x)))";
    check_with(third, &[tensor(&[2, 3], 64)], 1e-5);
}

// ---- dropout ------------------------------------------------------------------------------------

/// Runs `main(x, d)` of `src` on both engines: they must agree exactly (same seed, same draws).
fn both_engines(src: &str, args: &[Value]) -> Value {
    let c = call(&mut session(src, Engine::Compiled), "main", args);
    let r = call(&mut session(src, Engine::Reference), "main", args);
    assert_eq!(repr(&c), repr(&r), "the engines disagree\n{src}");
    assert_eq!(floats(&c), floats(&r), "the engines disagree\n{src}");
    c
}

#[test]
fn dropout_gradient_uses_the_forward_mask() {
    let src = format!(
        "{HEADER}def drop(x):\n    return ops.dropout(x, 0.3)\n\ndef main(x, d):\n    anfora.set_seed(7)\n    out, back = vjp(drop, x)\n    return out, back(d)[0]\n"
    );
    // No zeros in x: the mask is where the output is not zero.
    let x = Value::Tensor(
        Tensor::from_f64(values(200, 51).iter().map(|v| v + 2.0).collect(), &[10, 20]).unwrap(),
    );
    let d = tensor(&[10, 20], 52);
    let r = both_engines(&src, &[x.clone(), d.clone()]);
    let Value::Tuple(items) = &r else {
        panic!("a tuple")
    };
    let (out, g) = (floats(&items[0]), floats(&items[1]));
    let (xs, ds) = (floats(&x), floats(&d));
    let kept = out.iter().filter(|&&o| o != 0.0).count();
    assert!(kept > 100 && kept < 180, "{kept} of 200 kept at p = 0.3");
    for i in 0..200 {
        let mask = if out[i] != 0.0 { 1.0 } else { 0.0 };
        assert_eq!(out[i], mask * xs[i] / 0.7, "element {i}");
        assert_eq!(g[i], ds[i] * mask / 0.7, "element {i}");
    }
}

#[test]
fn dropout_gradient_keeps_the_mask_where_x_is_zero() {
    // Where x is 0 the output says nothing about the mask; the same seed draws the same mask
    // for a tensor of ones, and the gradient must follow it exactly.
    let src = format!(
        "{HEADER}def drop(x):\n    return ops.dropout(x * 1.0, p=0.5, training=True)\n\ndef main(x, d):\n    anfora.set_seed(3)\n    g = grad(lambda x: ops.sum(drop(x) * d))(x)\n    anfora.set_seed(3)\n    mask = ops.dropout(ops.ones_like(x), 0.5) != 0.0\n    return g, ops.where(mask, d / 0.5, 0.0)\n"
    );
    let x = Value::Tensor(Tensor::zeros(&[64], DType::F64).unwrap());
    let d = tensor(&[64], 53);
    let r = both_engines(&src, &[x, d]);
    let Value::Tuple(items) = &r else {
        panic!("a tuple")
    };
    let (g, want) = (floats(&items[0]), floats(&items[1]));
    assert_eq!(g, want);
    assert!(g.contains(&0.0) && g.iter().any(|&v| v != 0.0));
}

#[test]
fn dropout_gradient_when_not_training_and_through_a_network() {
    // Not training: the identity, and its gradient the sensitivity.
    let src = format!(
        "{HEADER}def main(x, d):\n    out, back = vjp(lambda x: ops.dropout(x, 0.5, training=False), x)\n    return back(d)[0] - d\n"
    );
    let r = both_engines(&src, &[tensor(&[3, 4], 54), tensor(&[3, 4], 55)]);
    assert!(floats(&r).iter().all(|&v| v == 0.0));
    // Second order: the gradient of a gradient through dropout, and dropout inside a loss
    // with Parameters, agree on both engines under a seed.
    let src = format!(
        "{HEADER}W = anfora.Parameter(ops.ones((4, 4), dtype=anfora.float64) * 0.3, name='W')\n\ndef loss(x):\n    h = ops.dropout(ops.tanh(x * W), 0.25)\n    return ops.sum(h * h)\n\ndef main(x, d):\n    anfora.set_seed(11)\n    g1 = grad(loss)(x)\n    g2 = grad(lambda x: ops.sum(grad(loss)(x) * d))(x)\n    gw = grad(loss, argnums=None, weights=(W,))(x)\n    return g1, g2, gw\n"
    );
    both_engines(&src, &[tensor(&[4, 4], 56), tensor(&[4, 4], 57)]);
}

// ---- elementwise activation and special functions ---------------------------------------------

#[test]
fn activation_gradients() {
    for call in [
        "ops.log1p(x * x)",
        "ops.expm1(x)",
        "ops.erf(x * 1.5)",
        "ops.gelu(x * 2.0)",
        "ops.gelu(x * 2.0, approximate=True)",
        "ops.gelu(x * 2.0, True)",
        "ops.silu(x * 2.0)",
        "ops.softplus(x * 3.0)",
        "ops.rsqrt(x * x + 0.5)",
        "ops.sign(x) * x * x",
        "ops.clip(x, -0.3, 0.4)",
        "ops.clip(x, min=-0.3)",
        "ops.clip(x, max=0.2) * x",
        "ops.clip(x, None, None) * x",
    ] {
        let body = format!("def f(x):\n    return ops.sum(ops.sin({call} * 1.3))");
        check(&body, &[tensor(&[3, 4], 61)]);
    }
}

#[test]
fn clip_gradients_of_tensor_bounds() {
    // Bounds that are tensors broadcast against x, and bounds that cross (min > max).
    check(
        "def f(x, lo, hi):\n    return ops.sum(ops.sin(ops.clip(x, lo, hi) * 1.7))",
        &[
            tensor(&[3, 4], 62),
            Value::Tensor(Tensor::from_f64(vec![-0.5, -0.2, 0.1, -0.8], &[4]).unwrap()),
            Value::Tensor(Tensor::from_f64(vec![0.6, 0.3, -0.4], &[3, 1]).unwrap()),
        ],
    );
}

#[test]
fn activation_second_order_and_gelu_with_a_variable_flag() {
    for call in [
        "ops.gelu(x)",
        "ops.gelu(x, approximate=True)",
        "ops.silu(x) + ops.softplus(x) + ops.erf(x) + ops.expm1(x) + ops.log1p(x * x)",
        "ops.rsqrt(x * x + 1.0) + ops.clip(x, -0.2, 0.3) * x",
    ] {
        let body = format!(
            "def inner(x):\n    return ops.sum({call})\n\ndef f(x):\n    return ops.sum(ops.sin(grad(inner)(x)))"
        );
        check_with(&body, &[tensor(&[2, 3], 63)], 1e-5);
    }
    // `approximate` known only at run time: both derivatives, blended by it.
    let src = format!(
        "{HEADER}def g(x, a):\n    return ops.sum(ops.gelu(x, approximate=a))\n\ndef main(x, a):\n    return grad(g)(x, a)\n\ndef fixed(x):\n    return grad(g)(x, True), grad(g)(x, False)\n"
    );
    let x = tensor(&[5], 64);
    let mut s = session(&src, Engine::Compiled);
    let want = floats(&call(&mut s, "fixed", std::slice::from_ref(&x)));
    for (flag, half) in [(true, &want[..5]), (false, &want[5..])] {
        let args = vec![Arg::from(x.clone()), Arg::mutable(Value::Bool(flag))];
        let got = s
            .call("main", args, &mut std::io::sink())
            .unwrap_or_else(|f| panic!("{}", s.render(&f)));
        assert_eq!(floats(&got), half, "approximate={flag}");
    }
}

#[test]
fn activations_of_python_numbers_and_fused_chains() {
    let src = format!(
        "{HEADER}def scalars():\n    return ops.log1p(1.0), ops.expm1(0), ops.erf(1.0), ops.gelu(1.0), ops.sign(-3), ops.sign(2.5), ops.clip(5, 0, 3), ops.rsqrt(4)\n\ndef chain(x):\n    return ops.gelu(ops.softplus(x) * 2.0 - 1.0, approximate=True) + ops.log1p(ops.abs(x)) * ops.sign(x) - ops.silu(ops.erf(x))\n"
    );
    let mut s = session(&src, Engine::Compiled);
    assert_eq!(
        repr(&call(&mut s, "scalars", &[])),
        "(0.6931471805599453, 0.0, 0.8427007929497149, 0.8413447460685429, -1, 1.0, 3, 0.5)"
    );
    // An elementwise chain (fused by the optimizer) agrees with the reference VM bit for bit.
    for dtype in [DType::F32, DType::F64] {
        let t = Tensor::from_f64(values(1000, 65), &[1000]).unwrap();
        let x = Value::Tensor(t.cast(dtype));
        let c = call(
            &mut session(&src, Engine::Compiled),
            "chain",
            std::slice::from_ref(&x),
        );
        let r = call(&mut session(&src, Engine::Reference), "chain", &[x]);
        assert_eq!(floats(&c), floats(&r), "{dtype:?}");
    }
}

// ---- array functions ------------------------------------------------------------------------------

#[test]
fn array_function_gradients() {
    for call in [
        "ops.squeeze(ops.reshape(x, (1, 3, 1, 4)))",
        "ops.squeeze(ops.reshape(x, (1, 3, 1, 4)), axis=2) * x",
        "ops.expand_dims(x, (0, 2)) * ops.reshape(x, (3, 1, 4))",
        "ops.broadcast_to(x, (2, 3, 4)) * ops.reshape(ops.arange(24, dtype=anfora.float64), (2, 3, 4))",
        "ops.broadcast_to(ops.sum(x, axis=1, keepdims=True), (3, 5))",
        // No gradient flows through argmax/one_hot: they only select.
        "x * ops.one_hot(ops.argmax(x, axis=1), 4, dtype=anfora.float64)",
        "x[0] * ops.cast(ops.argmin(x, axis=0), anfora.float64)",
    ] {
        let body = format!("def f(x):\n    return ops.sum(ops.sin({call}))");
        check(&body, &[tensor(&[3, 4], 71)]);
    }
}

#[test]
fn array_function_values_and_errors() {
    let src = format!(
        "{HEADER}def main(x):\n    return ops.argmax(x), ops.argmin(x, axis=1), ops.one_hot(ops.argmax(x, axis=0), 3), ops.squeeze(x[None]).shape, ops.expand_dims(x, -1).shape, ops.broadcast_to(x[0], (2, 4)).shape\n\ndef bad(x):\n    y = x * 2.0\n    return ops.squeeze(y, axis=0)\n"
    );
    let x = Value::Tensor(
        Tensor::from_f64(vec![3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], &[2, 4]).unwrap(),
    );
    let c = both_engines(&src, std::slice::from_ref(&x));
    assert_eq!(
        repr(&c),
        "(Tensor(5), Tensor([1, 2]), Tensor([[0., 1., 0.],\n        [0., 1., 0.],\n        [1., 0., 0.],\n        [0., 1., 0.]], dtype=float32), (2, 4), (2, 4, 1), (2, 4))"
    );
    let mut s = session(&src, Engine::Compiled);
    match s.call("bad", vec![Arg::from(x.clone())], &mut std::io::sink()) {
        Err(f @ Failure::Compile(_)) => {
            let text = s.render(&f);
            assert!(
                text.contains(
                    "squeeze: cannot select an axis to squeeze out which has size not equal to one"
                ) && text.contains("m.py:9:12"),
                "{text}"
            );
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
    let mut s = session(&src, Engine::Reference);
    match s.call("bad", vec![Arg::from(x)], &mut std::io::sink()) {
        Err(Failure::Runtime(e)) => assert_eq!(
            e.headline(),
            "ValueError: cannot select an axis to squeeze out which has size not equal to one"
        ),
        other => panic!("expected a ValueError, got {other:?}"),
    }
}

#[test]
fn concat_stack_and_split_gradients() {
    let two = [tensor(&[2, 3], 81), tensor(&[2, 2], 82)];
    for body in [
        "def f(x, y):\n    return ops.sum(ops.sin(ops.concat((x, y * y), axis=1) * 1.5))",
        "def f(x, y):\n    return ops.sum(ops.sin(ops.concat([x, x, y], axis=-1)))",
        // numpy's axis=None: the tensors flattened (found by tests/python/test_ops_random.py)
        "def f(x, y):\n    return ops.sum(ops.sin(ops.concat((x, y * y), axis=None)) * ops.arange(10, dtype=anfora.float64))",
        "def f(x, y):\n    return ops.sum(ops.sin(ops.stack((x[:, :2], y), axis=1)) * ops.reshape(ops.arange(8, dtype=anfora.float64), (2, 2, 2)))",
        // Unused parts get zero sensitivities; parts used twice add up.
        "def f(x, y):\n    a, b, c = ops.split(x, 3, axis=1)\n    p, q = ops.split(y, [1], axis=0)\n    return ops.sum(ops.sin(a * c) + a) + ops.sum(q * q)",
        "def f(x, y):\n    parts = ops.split(ops.concat((x, y), axis=1), [1, 4], axis=1)\n    return ops.sum(ops.cos(parts[1])) + ops.sum(parts[0] * parts[2][:, :1])",
    ] {
        check(body, &two);
    }
    // Second order through the joins and the split.
    let body = "def inner(x, y):\n    a, b = ops.split(ops.concat((x, y), axis=1), [2], axis=1)\n    return ops.sum(ops.sin(ops.stack((a, b[:, :2]), axis=0)))\n\ndef f(x, y):\n    gx, gy = grad(inner, argnums=(0, 1))(x, y)\n    return ops.sum(gx * gx) + ops.sum(ops.sin(gy))";
    check_with(body, &two, 1e-5);
    let body = "def inner(x, y):\n    return ops.sum(ops.sin(ops.concat([y, x], axis=None) * ops.arange(10, dtype=anfora.float64)))\n\ndef f(x, y):\n    gx, gy = grad(inner, argnums=(0, 1))(x, y)\n    return ops.sum(gx * gx) + ops.sum(ops.sin(gy))";
    check_with(body, &two, 1e-5);
}

#[test]
fn take_and_pad_gradients() {
    for call in [
        "ops.take(x, ops.tensor([2, 0, 2, -1]), axis=1)",
        "ops.take(x, [[5, 0], [5, 11]])",
        "ops.gather(x, ops.tensor([1, 1]), axis=0) * 2.0",
        "ops.take(x, 3) * x",
        "ops.pad(x, 1)",
        "ops.pad(x, ((0, 2), (1, 0)), constant_values=0.5) * ops.pad(x, ((2, 0), (0, 1)))",
    ] {
        let body = format!("def f(x):\n    return ops.sum(ops.sin({call} * 1.3))");
        check(&body, &[tensor(&[3, 4], 91)]);
    }
    // The padding value gets the sensitivity of the border.
    check(
        "def f(x, v):\n    return ops.sum(ops.sin(ops.pad(x, (1, 2), constant_values=v[0])))",
        &[tensor(&[2, 3], 92), tensor(&[1], 93)],
    );
    // Second order.
    let body = "def inner(x):\n    return ops.sum(ops.sin(ops.take(ops.pad(x, 1), ops.tensor([0, 2, 2]), axis=1)))\n\ndef f(x):\n    return ops.sum(ops.cos(grad(inner)(x)))";
    check_with(body, &[tensor(&[3, 4], 94)], 1e-5);
}

/// Pads of every mode, widths within and beyond the axis (x is 3 x 4), a single-element axis
/// reflected, and a non-uniform sensitivity (sin of the padded tensor times a ramp).
const PAD_CALLS: &[&str] = &[
    "ops.pad(x, ((1, 2), (3, 1)), 'reflect')",
    "ops.pad(x, ((2, 5), (7, 4)), 'reflect')",
    "ops.pad(x[:, :1], ((1, 1), (3, 2)), 'reflect')",
    "ops.pad(x, ((2, 1), (0, 3)), 'symmetric')",
    "ops.pad(x, ((4, 6), (9, 5)), mode='symmetric')",
    "ops.pad(x, 2, 'edge')",
    "ops.pad(x, ((0, 3), (5, 1)), mode='edge')",
    "ops.pad(x, ((1, 2), (3, 1)), 'constant')",
    "ops.pad(ops.pad(x, 1, 'reflect'), (0, 2), 'edge')",
];

fn ramp(call: &str) -> String {
    format!(
        "def f(x):\n    y = {call}\n    w = ops.reshape(ops.arange(y.size, dtype=anfora.float64), y.shape)\n    return ops.sum(ops.sin(y * 1.3) * w)"
    )
}

#[test]
fn pad_mode_gradients() {
    for call in PAD_CALLS {
        check(&ramp(call), &[tensor(&[3, 4], 95)]);
    }
}

#[test]
fn pad_mode_second_order() {
    // The gradient of the gradient goes through PadGrad's own rule: pad in the same mode.
    for call in PAD_CALLS {
        let body = format!(
            "def inner(x):\n    y = {call}\n    return ops.sum(ops.sin(y) * ops.reshape(ops.arange(y.size, dtype=anfora.float64), y.shape))\n\ndef f(x):\n    return ops.sum(ops.cos(grad(inner)(x)))"
        );
        check_with(&body, &[tensor(&[3, 4], 96)], 1e-5);
    }
}

#[test]
fn pad2d_gradients_first_and_second_order() {
    for call in [
        "ops.reflection_pad2d(x, (1, 2, 2, 1))",
        "ops.reflection_pad2d(x, 1)",
        "ops.replication_pad2d(x, (3, 0, 1, 4))",
        "ops.replication_pad2d(x, [2, 2, 0, 1])",
        "ops.zero_pad2d(x, (1, 0, 2, 1))",
        "ops.zero_pad2d(x[0], 2)",
        "ops.reflection_pad2d(x[0], (2, 0, 0, 2))",
    ] {
        check(&ramp(call), &[tensor(&[2, 2, 3, 4], 97)]);
        let body = format!(
            "def inner(x):\n    y = {call}\n    return ops.sum(ops.sin(y) * ops.reshape(ops.arange(y.size, dtype=anfora.float64), y.shape))\n\ndef f(x):\n    return ops.sum(ops.cos(grad(inner)(x)))"
        );
        check_with(&body, &[tensor(&[2, 2, 3, 4], 98)], 1e-5);
    }
}

#[test]
fn alias_gradients() {
    for call in [
        "ops.permute(x, (1, 0))",
        "ops.permute(ops.unsqueeze(x, 1), (2, 0, 1))",
        "ops.unsqueeze(x, -1) * ops.unsqueeze(x, 1)",
        "ops.index_select(x, 1, ops.tensor([3, 0, 3, 1]))",
        "ops.index_select(x, 0, ops.tensor([2, 2], dtype='int32'))",
        "ops.index_select(x, -1, ops.tensor([-1, 0]))",
    ] {
        check(&ramp(call), &[tensor(&[3, 4], 99)]);
    }
    let body = "def inner(x):\n    return ops.sum(ops.sin(ops.index_select(ops.permute(x, (1, 0)), 0, ops.tensor([1, 1, 3]))))\n\ndef f(x):\n    return ops.sum(ops.cos(grad(inner)(x)))";
    check_with(body, &[tensor(&[3, 4], 100)], 1e-5);
}

#[test]
fn pad_mode_errors_at_compile_and_run_time() {
    let src = format!(
        "{HEADER}def unknown(x):\n    return ops.pad(x, 1, 'wrapped')\n\ndef numpy_only(x):\n    return ops.pad(x, 1, mode='wrap')\n\ndef values(x):\n    return ops.pad(x, 1, 'edge', 0)\n\ndef empty(x):\n    return ops.pad(x[:0], (1, 0), 'reflect')\n\ndef too_wide(x):\n    return ops.reflection_pad2d(x, (0, 4, 0, 0))\n\ndef index(x):\n    return ops.index_select(x, 0, ops.tensor([[0, 1]]))\n"
    );
    let x = tensor(&[1, 3, 4], 3);
    let args = std::slice::from_ref(&x);
    for (entry, op, msg) in [
        (
            "unknown",
            "pad",
            "mode 'wrapped' is not supported".to_string(),
        ),
        (
            "numpy_only",
            "pad",
            "mode 'wrap' is not supported by ops.pad (its modes are 'constant', 'edge', \
             'reflect' and 'symmetric')"
                .to_string(),
        ),
        (
            "values",
            "pad",
            "unsupported keyword arguments for mode 'edge': {'constant_values'}".to_string(),
        ),
        (
            "empty",
            "pad",
            "can't extend empty axis 0 using modes other than 'constant' or 'empty'".to_string(),
        ),
        (
            "index",
            "index_select",
            "ops.index_select() expects a 1-D index, got shape (1, 2)".to_string(),
        ),
    ] {
        assert_eq!(
            compile_errors(&src, entry, args),
            vec![format!("{op}: {msg}")],
            "{entry}"
        );
        assert_eq!(
            runtime_error(&src, entry, args),
            format!("ValueError: {msg}"),
            "{entry}"
        );
    }
    let msg = "reflection_pad2d: padding (0, 4) of the width must be less than its size 4 \
               (axis 2 of shape (1, 3, 4))";
    assert_eq!(
        compile_errors(&src, "too_wide", args),
        vec![msg.to_string()]
    );
    assert_eq!(
        runtime_error(&src, "too_wide", args),
        format!("ValueError: {msg}")
    );
}

#[test]
fn pad_mode_known_only_at_run_time_is_refused() {
    // E0304: the mode must be a constant when compiling; the reference VM runs it.
    let src = format!(
        "{HEADER}def choose(x):\n    m = 'edge'\n    if ops.sum(x) > 0:\n        m = 'reflect'\n    return ops.pad(x, 1, m)\n"
    );
    let x = tensor(&[2, 3], 4);
    let mut s = session(&src, Engine::Compiled);
    match s.call("choose", vec![Arg::from(x.clone())], &mut std::io::sink()) {
        Err(Failure::Compile(ds)) => {
            assert_eq!(ds.len(), 1, "{ds:?}");
            assert_eq!(ds[0].code, "E0304");
            assert_eq!(
                ds[0].message,
                "pad: the mode must be known at compile time (a constant such as 'reflect'), \
                 got a str computed at run time"
            );
        }
        other => panic!("expected E0304, got {other:?}"),
    }
    let mut r = session(&src, Engine::Reference);
    let v = call(&mut r, "choose", std::slice::from_ref(&x));
    assert_eq!(floats(&v).len(), 20);
    // A str argument is a constant: each mode compiles its own version, on both engines.
    let given = format!("{HEADER}def main(x, m):\n    return ops.pad(x, ((1, 2), (2, 0)), m)\n");
    let mut seen = Vec::new();
    for mode in ["reflect", "symmetric", "edge", "constant"] {
        let v = floats(&both_engines(&given, &[x.clone(), Value::str(mode)]));
        assert!(!seen.contains(&v), "{mode}");
        seen.push(v);
    }
    let mut s = session(&given, Engine::Compiled);
    let a = call(&mut s, "main", &[x.clone(), Value::str("reflect")]);
    let b = call(&mut s, "main", &[x.clone(), Value::str("edge")]);
    assert_eq!(floats(&a), seen[0]);
    assert_eq!(floats(&b), seen[2]);
}

#[test]
fn take_errors_at_run_time() {
    let src = format!("{HEADER}def main(x, i):\n    return ops.take(x, i, axis=0)\n");
    for engine in [Engine::Compiled, Engine::Reference] {
        let mut s = session(&src, engine);
        let args = vec![
            Arg::from(tensor(&[3, 2], 1)),
            Arg::from(Value::Tensor(Tensor::from_i64(vec![0, 3], &[2]).unwrap())),
        ];
        match s.call("main", args, &mut std::io::sink()) {
            Err(Failure::Runtime(e)) => assert_eq!(
                e.headline(),
                "IndexError: index 3 is out of bounds for axis 0 with size 3",
                "{engine:?}"
            ),
            other => panic!("{engine:?}: expected an IndexError, got {other:?}"),
        }
    }
}

/// The messages of the compile errors (E0301) of every diagnostic of `entry`.
fn compile_errors(src: &str, entry: &str, args: &[Value]) -> Vec<String> {
    let mut s = session(src, Engine::Compiled);
    let args = args.iter().cloned().map(Arg::from).collect();
    match s.call(entry, args, &mut std::io::sink()) {
        Err(Failure::Compile(ds)) => ds.into_iter().map(|d| d.message).collect(),
        other => panic!("{entry}: expected a compile error, got {other:?}"),
    }
}

/// The exception line of `entry` on the reference VM.
fn runtime_error(src: &str, entry: &str, args: &[Value]) -> String {
    let mut s = session(src, Engine::Reference);
    let args = args.iter().cloned().map(Arg::from).collect();
    match s.call(entry, args, &mut std::io::sink()) {
        Err(Failure::Runtime(e)) => e.headline(),
        other => panic!("{entry}: expected a runtime error, got {other:?}"),
    }
}

#[test]
fn concat_errors_read_the_same_at_compile_and_run_time() {
    let src = format!(
        "{HEADER}def ranks(x):\n    return ops.concat([x, x[0]])\n\ndef sizes(x):\n    return ops.concat((x, x.T), axis=1)\n"
    );
    let x = tensor(&[2, 3], 7);
    for (entry, msg) in [
        (
            "ranks",
            "all the input arrays must have same number of dimensions, but the array at index 0 \
             has 2 dimension(s) and the array at index 1 has 1 dimension(s)",
        ),
        (
            "sizes",
            "all the input array dimensions except for the concatenation axis must match \
             exactly, but along dimension 0, the array at index 0 has size 2 and the array at \
             index 1 has size 3",
        ),
    ] {
        let args = std::slice::from_ref(&x);
        assert_eq!(
            compile_errors(&src, entry, args),
            vec![format!("concat: {msg}")]
        );
        assert_eq!(
            runtime_error(&src, entry, args),
            format!("ValueError: {msg}")
        );
    }
}

#[test]
fn split_by_a_negative_number_of_sections_is_numpy_s_value_error() {
    let src = format!(
        "{HEADER}def neg(x):\n    return ops.split(x, -2, axis=1)\n\ndef uneven(x):\n    return ops.split(x, -4, axis=1)\n\ndef zero(x):\n    return ops.split(x, 0, axis=1)\n"
    );
    let x = tensor(&[2, 6], 3);
    let args = std::slice::from_ref(&x);
    assert_eq!(
        compile_errors(&src, "neg", args),
        vec!["split: number sections must be larger than 0.".to_string()]
    );
    assert_eq!(
        runtime_error(&src, "neg", args),
        "ValueError: number sections must be larger than 0."
    );
    assert_eq!(
        runtime_error(&src, "uneven", args),
        "ValueError: array split does not result in an equal division"
    );
    // Zero sections stay a ZeroDivisionError, raised at run time by both engines.
    for engine in [Engine::Compiled, Engine::Reference] {
        let mut s = session(&src, engine);
        match s.call("zero", vec![Arg::from(x.clone())], &mut std::io::sink()) {
            Err(Failure::Runtime(e)) => {
                assert_eq!(e.headline(), "ZeroDivisionError: integer modulo by zero")
            }
            other => panic!("{engine:?}: expected a ZeroDivisionError, got {other:?}"),
        }
    }
}

#[test]
fn take_of_an_empty_list_takes_nothing() {
    // numpy: np.take(x, []) is an empty int64-indexed take, not a float index error.
    let src = format!(
        "{HEADER}def main(x):\n    return ops.take(x, []), ops.take(x, [], axis=1), ops.gather(x, [[]], axis=0).shape\n"
    );
    let c = both_engines(&src, &[tensor(&[2, 3], 5)]);
    assert_eq!(
        repr(&c),
        "(Tensor([], dtype=float64), Tensor([], shape=(2, 0), dtype=float64), (1, 0, 3))"
    );
}

#[test]
fn concat_of_a_tuple_grown_in_a_loop() {
    // While inference runs, the loop's tuple is first what the exit path gives, `()`: an
    // error of that first round (concat of no arrays) must not be reported.
    let src = format!(
        "{HEADER}def main(n):\n    rows = ()\n    for k in range(n):\n        rows = rows + (ops.full((1, 2), k * 1.0),)\n    return ops.concat(rows), ops.stack(rows, axis=1).shape\n\ndef empty():\n    rows = ()\n    return ops.concat(rows)\n"
    );
    let c = both_engines(&src, &[Value::Int(3)]);
    assert_eq!(
        repr(&c),
        "(Tensor([[0., 0.],\n        [1., 1.],\n        [2., 2.]], dtype=float32), (1, 3, 2))"
    );
    let mut s = session(&src, Engine::Compiled);
    let c = call(&mut s, "main", &[Value::Int(4)]);
    assert_eq!(floats(&c)[6..8], [3.0, 3.0]);
    // A concatenation of what is always the empty tuple is still refused when compiling.
    assert_eq!(
        compile_errors(&src, "empty", &[]),
        vec!["concat: need at least one array to concatenate".to_string()]
    );
}
