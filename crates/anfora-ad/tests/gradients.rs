//! Gradients checked against central finite differences in float64, on both engines, for the
//! primitives with backward rules and for programs with control flow, recursion, closures,
//! higher-order functions, tuples and Parameters. The finite differences evaluate the same
//! function through the compiled engine.

use anfora_driver::{Arg, Engine, Failure, Session, repr};
use anfora_vm::{Options, Value};

fn session(src: &str, engine: Engine) -> Session {
    let mut s = Session::load("m.py", src, Options::default());
    s.engine = engine;
    s
}

fn call(src: &str, engine: Engine, entry: &str, args: &[f64]) -> Value {
    let mut s = session(src, engine);
    let args = args.iter().map(|&x| Arg::from(Value::Float(x))).collect();
    s.call(entry, args, &mut std::io::sink())
        .unwrap_or_else(|f| panic!("{entry}: {}\n{src}", s.render(&f)))
}

fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::Float(f) => vec![*f],
        Value::Int(i) => vec![*i as f64],
        Value::Tensor(t) => t
            .to_scalars()
            .iter()
            .map(|s| match s {
                anfora_tensor::Scalar::Float(f) => *f,
                anfora_tensor::Scalar::Int(i) => *i as f64,
                anfora_tensor::Scalar::Bool(b) => *b as i64 as f64,
            })
            .collect(),
        Value::Tuple(xs) => xs.iter().flat_map(floats).collect(),
        other => panic!("not numbers: {}", repr(other)),
    }
}

/// Checks `grad(f, argnums=all)` at `at` against central differences of `f` (whose value must
/// be a scalar), on both engines.
fn check(body: &str, at: &[f64]) {
    let n = at.len();
    let params: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    let p = params.join(", ");
    let argnums: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let src = format!(
        "import anfora\nfrom anfora import ops, grad, value_and_grad, vjp\n\n{body}\n\ndef value({p}):\n    return f({p})\n\ndef gradient({p}):\n    return grad(f, argnums=({},))({p})\n",
        argnums.join(", ")
    );
    let compiled = floats(&call(&src, Engine::Compiled, "gradient", at));
    let reference = floats(&call(&src, Engine::Reference, "gradient", at));
    assert_eq!(compiled, reference, "the engines disagree\n{src}");
    assert_eq!(compiled.len(), n, "{src}");
    let h = 1e-6;
    for i in 0..n {
        let mut plus = at.to_vec();
        let mut minus = at.to_vec();
        plus[i] += h;
        minus[i] -= h;
        let fp = floats(&call(&src, Engine::Compiled, "value", &plus));
        let fm = floats(&call(&src, Engine::Compiled, "value", &minus));
        assert_eq!(fp.len(), 1, "f must return a scalar\n{src}");
        let fd = (fp[0] - fm[0]) / (2.0 * h);
        let tol = 1e-6 * fd.abs().max(1.0);
        assert!(
            (compiled[i] - fd).abs() <= tol,
            "d/da{i}: grad {} vs finite difference {fd}\n{src}",
            compiled[i]
        );
    }
}

// ---- primitives ---------------------------------------------------------------------------

#[test]
fn arithmetic_on_python_floats() {
    check(
        "def f(x, y):\n    return x * y + x / y - y ** 3 + (-x) - 2.0 * y",
        &[1.3, -0.7],
    );
    check("def f(x, y):\n    return x ** y + y % 0.4", &[1.7, 2.3]);
    check("def f(x):\n    return abs(x) * +x - x ** 2", &[-0.6]);
}

const VEC: &str = "def v(x):\n    return ops.arange(4, dtype=anfora.float64) * x + 0.5\n";

#[test]
fn elementwise_math_on_tensors() {
    for (expr, at) in [
        ("ops.exp(v(x))", 0.3),
        ("ops.log(v(x))", 0.9),
        ("ops.sqrt(v(x))", 0.7),
        ("ops.tanh(v(x))", 0.2),
        ("ops.sin(v(x)) * ops.cos(v(x) * x)", 0.4),
        ("ops.sigmoid(v(x) - 1.0)", 0.5),
        ("ops.relu(v(x) - 1.0)", 0.45),
        ("ops.abs(v(x) - 1.0)", 0.45),
        ("ops.maximum(v(x), 1.0) + ops.minimum(v(x), x * 2.0)", 0.7),
        ("ops.where(v(x) > 1.0, v(x) * v(x), -v(x))", 0.7),
        ("v(x) ** 3 / (v(x) + 1.0)", 0.7),
    ] {
        check(
            &format!("{VEC}\ndef f(x):\n    return ops.sum({expr})"),
            &[at],
        );
    }
}

#[test]
fn reductions_and_shapes() {
    let m = "def m(x):\n    return ops.reshape(ops.arange(6, dtype=anfora.float64), (2, 3)) * x + 1.0\n";
    for (expr, at) in [
        ("ops.mean(m(x) * m(x), axis=0)", 0.3),
        ("ops.max(m(x) * ops.cos(m(x)), axis=1)", 0.3),
        (
            "ops.min(m(x) * ops.sin(m(x)), axis=(0, 1), keepdims=True)",
            0.3,
        ),
        ("ops.sum(m(x), axis=-1, keepdims=True) * m(x)", 0.3),
        ("ops.transpose(m(x)) @ m(x)", 0.3),
        ("m(x) @ ops.transpose(m(x) * x)", 0.3),
        ("ops.reshape(m(x), (3, 2)) @ m(x)", 0.3),
        ("ops.arange(2, dtype=anfora.float64) @ m(x)", 0.3),
        ("m(x) @ ops.arange(3, dtype=anfora.float64) * x", 0.3),
        (
            "ops.transpose(ops.reshape(m(x), (1, 2, 3)), (2, 0, 1)) * x",
            0.3,
        ),
    ] {
        check(
            &format!("{m}\ndef f(x):\n    return ops.sum({expr})"),
            &[at],
        );
    }
}

#[test]
fn broadcasting_is_summed_back() {
    check(
        "def f(x, y):\n    col = ops.ones((3, 1), dtype=anfora.float64) * x\n    row = ops.arange(4, dtype=anfora.float64) * y\n    return ops.sum(col * row + col - row)",
        &[0.8, 1.1],
    );
}

// ---- control flow ---------------------------------------------------------------------------

#[test]
fn if_elif_else_with_data_conditions() {
    let f = "def f(x, y):\n    if x > y:\n        z = x * y\n    elif x < 0.0:\n        z = x * x * y\n    else:\n        z = x + y * y\n    return z * 2.0";
    check(f, &[1.5, 0.5]);
    check(f, &[-1.0, 0.5]);
    check(f, &[0.25, 0.5]);
}

#[test]
fn while_loop_with_data_dependent_trip_count() {
    let f = "def f(x):\n    y = x\n    while y < 10.0:\n        y = y * x + 1.0\n    return y";
    check(f, &[1.7]);
    check(f, &[2.5]);
}

#[test]
fn while_loop_never_entered() {
    check(
        "def f(x):\n    y = x * 3.0\n    while x > 100.0:\n        y = y * x\n    return y",
        &[1.5],
    );
}

#[test]
fn for_loop_with_break_continue_and_if_after() {
    let f = "def f(x):\n    acc = 0.0\n    for i in range(6):\n        if i == 1:\n            continue\n        acc = acc + x ** i\n        if acc > 20.0:\n            break\n    if acc > 5.0:\n        acc = acc * x\n    return acc";
    check(f, &[1.3]);
    check(f, &[2.5]);
}

#[test]
fn if_after_a_while_loop_with_break() {
    let f = "def f(x):\n    y = x\n    while True:\n        y = y * x\n        if y > 4.0:\n            break\n    if y > 6.0:\n        y = y - x * x\n    else:\n        y = y * 2.0\n    return y";
    check(f, &[1.5]);
    check(f, &[2.6]);
}

#[test]
fn early_return_in_a_loop() {
    let f = "def f(x):\n    i = 0\n    y = x\n    while i < 10:\n        y = y * x\n        if y > 5.0:\n            return y + x\n        i = i + 1\n    return -y";
    check(f, &[1.4]);
    check(f, &[0.5]);
}

#[test]
fn direct_and_mutual_recursion() {
    check(
        "def f(x):\n    return p(x, 4)\n\ndef p(x, n):\n    if n == 0:\n        return 1.0\n    return x * p(x, n - 1) + ops.sin(x)",
        &[0.7],
    );
    check(
        "def f(x):\n    return even(x, 5)\n\ndef even(x, n):\n    if n == 0:\n        return x\n    return odd(x * 1.1, n - 1) + x\n\ndef odd(x, n):\n    if n == 0:\n        return x * x\n    return even(x * x, n - 1)",
        &[0.9],
    );
}

// ---- closures, higher-order functions, tuples --------------------------------------------

#[test]
fn closures_and_higher_order_functions() {
    check(
        "def f(x, y):\n    k = x * y\n    def inner(z):\n        return z * k + y\n    return inner(x) + inner(y)",
        &[0.6, 1.2],
    );
    check(
        "def scale(a):\n    return lambda z: z * a\n\ndef apply(g, z):\n    return g(z) * g(z)\n\ndef f(x, y):\n    return apply(scale(y), x)",
        &[0.6, 1.2],
    );
    check(
        "def sq(z):\n    return z * z\n\ndef cube(z):\n    return z * z * z\n\ndef f(x):\n    g = sq if x > 1.0 else cube\n    return g(x) + g(x * 2.0)",
        &[1.5],
    );
    check(
        "def sq(z):\n    return z * z\n\ndef f(x):\n    fs = (sq, ops.exp, lambda z: z * 3.0)\n    t = 0.0\n    for g in fs:\n        t = t + g(x)\n    return t",
        &[0.5],
    );
}

#[test]
fn tuples_in_and_out() {
    check(
        "def pair(x, y):\n    return x * y, x + y\n\ndef f(x, y):\n    a, b = pair(x, y)\n    t = (a, (b, x))\n    return t[0] * t[1][0] - t[1][1]",
        &[0.6, 1.7],
    );
}

#[test]
fn casts_pass_the_gradient_back_in_the_input_dtype() {
    let src = "import anfora\nfrom anfora import ops, grad\n\ndef f(x):\n    return ops.sum(ops.cast(ops.arange(4, dtype=anfora.float64) * x, anfora.float32))\n\ndef main(x):\n    return grad(f)(x)\n";
    assert_eq!(
        floats(&call(src, Engine::Compiled, "main", &[0.7])),
        vec![6.0]
    );
}

#[test]
fn stop_gradient_blocks_the_flow() {
    let src = "from anfora import ops, grad\n\ndef f(x):\n    return x * ops.stop_gradient(x * x)\n\ndef main(x):\n    return grad(f)(x)\n";
    assert_eq!(
        floats(&call(src, Engine::Compiled, "main", &[3.0])),
        vec![9.0]
    );
}

// ---- Parameters, value_and_grad, vjp, second order -----------------------------------------

const PARAMS: &str = "\
import anfora
from anfora import ops, grad, value_and_grad

w = anfora.Parameter(ops.arange(3, dtype=anfora.float64) + 1.0, name='w')
steps = anfora.Parameter(ops.zeros((), dtype=anfora.float64), name='steps')

def loss(x):
    acc = 0.0
    i = 0
    while i < 3:
        acc = acc + ops.sum(w * x) * (i + 1)
        i = i + 1
    ops.assign_add(steps, 1.0)
    return acc * x
";

#[test]
fn parameters_get_gradients_and_forward_writes_happen_once() {
    let src = format!(
        "{PARAMS}\ndef main(x):\n    v, (gx, (gw,)) = value_and_grad(loss, argnums=0, weights=(w,))(x)\n    return v, gx, gw, steps + 0.0\n"
    );
    for engine in [Engine::Compiled, Engine::Reference] {
        // loss = 6 * sum(w) * x^2 = 36 x^2; d/dx = 72 x; d/dw = 6 x^2 per element.
        let out = floats(&call(&src, engine, "main", &[0.5]));
        assert_eq!(out, vec![9.0, 36.0, 1.5, 1.5, 1.5, 1.0], "{engine:?}");
    }
    let only_weights =
        format!("{PARAMS}\ndef main(x):\n    return grad(loss, argnums=None, weights=(w,))(x)\n");
    assert_eq!(
        floats(&call(&only_weights, Engine::Compiled, "main", &[2.0])),
        vec![24.0, 24.0, 24.0]
    );
}

#[test]
fn vjp_takes_an_output_cotangent() {
    let src = "import anfora\nfrom anfora import ops, vjp\n\ndef f(x, y):\n    return x * y * ops.arange(3, dtype=anfora.float64)\n\ndef main(x):\n    out, back = vjp(f, x, 2.0)\n    return out, back(ops.ones((3,), dtype=anfora.float64) * 10.0)\n";
    for engine in [Engine::Compiled, Engine::Reference] {
        assert_eq!(
            floats(&call(src, engine, "main", &[1.5])),
            vec![0.0, 3.0, 6.0, 60.0, 45.0],
            "{engine:?}"
        );
    }
}

#[test]
fn integer_inputs_get_zero_gradients() {
    let src = "from anfora import grad\n\ndef f(x, n):\n    return x * n\n\ndef main(x):\n    return grad(f, argnums=(0, 1))(x, 3)\n";
    let v = call(src, Engine::Compiled, "main", &[2.0]);
    assert_eq!(repr(&v), "(3.0, 0)");
}

// ---- errors -------------------------------------------------------------------------------

fn compile_error(src: &str) -> String {
    let mut s = session(src, Engine::Compiled);
    match s.call(
        "main",
        vec![Arg::from(Value::Float(1.0))],
        &mut std::io::sink(),
    ) {
        Err(f @ Failure::Compile(_)) => s.render(&f),
        Err(other) => panic!("expected a compile error, got {}", s.render(&other)),
        Ok(v) => panic!("expected a compile error, got {}", repr(&v)),
    }
}

#[test]
fn unsupported_gradients_are_compile_errors() {
    let e = compile_error(
        "from anfora import ops, grad\n\ndef f(x):\n    return ops.sum(ops.dropout(ops.ones((3,)) * x))\n\ndef main(x):\n    return grad(f)(x)\n",
    );
    assert!(
        e.contains("E0502") && e.contains("ops.dropout has no backward rule"),
        "{e}"
    );
    assert!(e.contains("m.py:4:20"), "{e}");
    let e = compile_error(
        "from anfora import grad\n\ndef g(f, x):\n    return grad(f)(x)\n\ndef main(x):\n    return g(lambda z: z * z, x)\n",
    );
    assert!(
        e.contains("E0501") && e.contains("grad() needs a function known at compile time"),
        "{e}"
    );
    assert!(e.contains("m.py:4:12"), "{e}");
    let e = compile_error(
        "from anfora import grad\n\ndef f(x, y):\n    return x * y\n\ndef main(x):\n    return grad(f, argnums=2)(x, x)\n",
    );
    assert!(
        e.contains("E0503") && e.contains("argnums 2 is out of range"),
        "{e}"
    );
    let e = compile_error(
        "from anfora import grad\n\ndef f(x):\n    return x\n\ndef main(x):\n    return grad(f, weights=(x,))(x)\n",
    );
    assert!(e.contains("E0503") && e.contains("weights"), "{e}");
}

#[test]
fn second_and_third_order() {
    let src = "from anfora import ops, grad\n\ndef h(x):\n    i = 0\n    acc = x\n    while i < 3:\n        acc = acc * x\n        i = i + 1\n    return acc\n\ndef g(x):\n    acc = x\n    while acc < 10.0:\n        acc = acc * x\n    return acc\n\ndef k(x):\n    return x * x * ops.sin(x) * x\n\ndef main(x):\n    return grad(grad(h))(x), grad(grad(grad(k)))(x), grad(grad(grad(h)))(x), grad(grad(grad(g)))(x)\n";
    let x: f64 = 2.0;
    // h = x^4: h'' = 12 x^2, h''' = 24 x; g = x^4 at x = 2 (the loop stops at 16);
    // k = x^3 sin x: k''' = 6 sin x + 18 x cos x - 9 x^2 sin x - x^3 cos x.
    let k3 = 6.0 * x.sin() + 18.0 * x * x.cos() - 9.0 * x * x * x.sin() - x.powi(3) * x.cos();
    for engine in [Engine::Compiled, Engine::Reference] {
        let out = floats(&call(src, engine, "main", &[x]));
        assert_eq!(out[0], 48.0, "{engine:?}");
        assert!((out[1] - k3).abs() < 1e-9, "{engine:?}: {} vs {k3}", out[1]);
        assert_eq!(out[2..], [48.0, 48.0], "{engine:?}");
    }
}
