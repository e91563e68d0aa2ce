//! Gradients checked against central finite differences in float64, on both engines, for the
//! primitives with backward rules and for programs with control flow, recursion, closures,
//! higher-order functions, tuples and Parameters. The finite differences evaluate the same
//! function through the compiled engine.

use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Failure, Session, repr};

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
fn indexing_products_and_builtins() {
    let m = "def m(x):\n    return ops.reshape(ops.arange(6, dtype=anfora.float64), (2, 3)) * x + 1.0\n";
    for (expr, at) in [
        ("m(x)[1] * m(x)[0, 2]", 0.3),
        (
            "m(x)[:, 1:] * m(x)[..., None][0, 0] + m(x)[-1, ::2][0]",
            0.3,
        ),
        ("ops.prod(m(x), axis=1)", 0.3),
        ("ops.prod(m(x) * m(x), axis=(0, 1), keepdims=True)", 0.7),
    ] {
        check(
            &format!("{m}\ndef f(x):\n    return ops.sum({expr})"),
            &[at],
        );
    }
    // A product through an exact zero: d/dx (x - 0.3)(x + 1)(2x) at 0.3 is 1.3 * 0.6.
    let v = "def v(x):\n    i = ops.arange(3, dtype=anfora.float64)\n    return (i == 0) * (x - 0.3) + (i == 1) * (x + 1.0) + (i == 2) * (2.0 * x)\n";
    check(
        &format!("{v}\ndef f(x):\n    return ops.prod(v(x))"),
        &[0.3],
    );
    check(
        &format!("{v}\ndef f(x):\n    return ops.prod(v(x) * (x - 0.3))"),
        &[0.3],
    );
    check(
        "def f(x, y):\n    return max(x, y) * min(x, 2.0 * y) + float(x) * max(y, 0.5)",
        &[0.8, 1.1],
    );
    check(
        "def f(x, y):\n    return max(x, y) * min(x, 2.0 * y)",
        &[1.7, 0.6],
    );
}

#[test]
fn second_order_of_matmul_reductions_and_transposes() {
    // The gradient of f is checked against finite differences of f, itself a gradient.
    let m = "def m(x):\n    return ops.reshape(ops.arange(6, dtype=anfora.float64), (2, 3)) * x + 1.0\n";
    for (expr, at) in [
        ("ops.sum(ops.transpose(m(x)) @ m(x) * x)", 0.3),
        (
            "ops.sum(m(x) @ ops.arange(3, dtype=anfora.float64) * x) * x",
            0.3,
        ),
        ("ops.mean(ops.max(m(x) * m(x), axis=1) * x)", 0.4),
        ("ops.sum(ops.prod(m(x), axis=0)) * x", 0.6),
        ("ops.sum(ops.transpose(m(x) * m(x), (1, 0))[0] * x)", 0.6),
    ] {
        check(
            &format!("{m}\ndef g(x):\n    return {expr}\n\ndef f(x):\n    return grad(g)(x)"),
            &[at],
        );
    }
}

/// The second derivative of a product is exact at zeros too (one, two or three zeros in a
/// group): the gradient of a combination of first derivatives against finite differences.
#[test]
fn second_order_of_prod_through_exact_zeros() {
    let src = "def v(a, b, c):
    i = ops.arange(4, dtype=anfora.float64)
    return (i == 0) * a + (i == 1) * b + (i == 2) * c + (i == 3) * 2.0

def g(a, b, c):
    m = ops.reshape(ops.concat((v(a, b, c), v(b, c, a) * c), 0), (2, 4))
    return ops.sum(ops.prod(m, axis=1)) + ops.prod(v(a, b, c), keepdims=True)[0]

def f(a, b, c):
    ga, gb, gc = grad(g, argnums=(0, 1, 2))(a, b, c)
    return ga + 2.0 * gb + 3.0 * gc";
    for at in [
        [0.4, 0.7, 1.3],
        [0.0, 0.7, 1.3],
        [0.0, 0.0, 1.3],
        [0.7, 0.0, 0.0],
        [0.0, 0.0, 0.0],
    ] {
        check(src, &at);
    }
}

/// A third derivative of a product has no rule: a compile error, not a wrong number.
#[test]
fn third_order_of_prod_is_refused() {
    let src = "import anfora\nfrom anfora import ops, grad\n\ndef g(x):\n    return ops.prod(ops.arange(3, dtype=anfora.float64) * x + x)\n\ndef main(x):\n    return grad(grad(grad(g)))(x)\n";
    let mut s = session(src, Engine::Compiled);
    let err = s
        .call(
            "main",
            vec![Arg::from(Value::Float(0.5))],
            &mut std::io::sink(),
        )
        .map(|v| repr(&v))
        .map_err(|f| s.render(&f));
    let message = err.expect_err("a third derivative of prod has no rule");
    assert!(message.contains("E0502"), "{message}");
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

/// Loops longer than the recursion limit (10,000 nested calls): their J graphs pass
/// continuations, so neither pass nests a call per iteration.
#[test]
fn long_loops_with_continue_and_break() {
    check(
        "def f(x, y):\n    acc = y\n    for i in range(20000):\n        acc = acc + 0.0001 * ops.sin(acc * x)\n    return acc",
        &[0.7, 0.3],
    );
    let f = "def f(x, y):\n    acc = y\n    i = 0\n    while True:\n        i += 1\n        if i % 3 == 0:\n            continue\n        acc = acc + 0.0001 * ops.sin(acc * x)\n        if acc > 1.5 or i >= 30000:\n            break\n    return acc * x";
    check(f, &[0.7, 0.3]);
    check(f, &[2.5, 1.2]);
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
fn a_function_passed_to_a_differentiating_function_is_inlined_into_its_callers() {
    // `g` differentiates its argument: each call of it is replaced by its body, where the
    // argument is known (two levels deep here).
    let src = "from anfora import grad\n\ndef g(f, x):\n    return grad(f)(x)\n\ndef h(f, x):\n    return g(f, x) + 1.0\n\ndef main(x):\n    return g(lambda z: z * z, x), h(lambda z: z * z * z, x)\n";
    for engine in [Engine::Compiled, Engine::Reference] {
        assert_eq!(floats(&call(src, engine, "main", &[1.5])), vec![3.0, 7.75]);
    }
}

#[test]
fn sens_param_takes_the_output_sensitivity_and_checks_its_shape() {
    let src = "import anfora\nfrom anfora import ops, grad\n\ndef f(x):\n    return x * ops.arange(3, dtype=anfora.float64)\n\ndef main(x):\n    s = ops.ones((3,), dtype=anfora.float64) * 10.0\n    return grad(f, argnums=..., sens_param=True)(x, s)\n";
    for engine in [Engine::Compiled, Engine::Reference] {
        // d/dx sum(s * x * [0, 1, 2]) = 30
        assert_eq!(floats(&call(src, engine, "main", &[1.5])), vec![30.0]);
    }
    let e = flat(compile_error(
        &src.replace("ops.ones((3,)", "ops.ones((2,)"),
    ));
    assert!(
        e.contains(
            "the output sensitivity: expected a float64 tensor of shape (3,) like the output, got a float64 tensor of shape (2,)"
        ),
        "{e}"
    );
    let e = compile_error(
        "import anfora\nfrom anfora import ops, vjp\n\ndef main(x):\n    out, back = vjp(lambda y: y * ops.ones((3,)), x)\n    return back(ops.ones((4,)))\n",
    );
    assert!(e.contains("shape (3,) like the output"), "{e}");
}

/// A function passed to the gradient function by name (the same constant at every call) is
/// differentiated with the function that calls it; one known only at run time is refused
/// (E0501), where it used to reach J(f) as a primal function.
#[test]
fn functions_passed_to_a_gradient_function_by_name_are_differentiated() {
    let src = "from anfora import grad\n\ndef apply(f, x, k):\n    return f(x) * k + f(k)\n\ndef sq(v):\n    return v * v\n\ndef main(x):\n    return grad(apply, argnums=(1, 2))(sq, x, 3.0), grad(apply, argnums=1)((lambda v: v * v * v), x, 1.0)\n";
    for engine in [Engine::Compiled, Engine::Reference] {
        // d/dx (x^2 k + k^2) = 2xk = 9, d/dk = x^2 + 2k = 8.25; d/dx x^3 = 3x^2 = 6.75.
        assert_eq!(
            floats(&call(src, engine, "main", &[1.5])),
            vec![9.0, 8.25, 6.75]
        );
    }
    let runtime = "from anfora import grad\n\ndef apply(f, x):\n    return f(x)\n\ndef sq(v):\n    return v * v\n\ndef use(gf, x):\n    return gf(sq, x)\n\ndef main(x):\n    gf = grad(apply, argnums=1)\n    return use(gf, x)\n";
    let e = flat(compile_error(runtime));
    assert!(
        e.contains("error[E0501]: argument 0 of the differentiated function holds a function known only when the program runs")
            && e.contains("passed to the gradient function here"),
        "{e}"
    );
    let e = reference_error(runtime);
    assert!(
        e.contains("TypeError: argument 0 of the differentiated function holds a function"),
        "{e}"
    );
}

/// Closures taken from a list grown in a loop, sharing a `nonlocal` accumulator: the
/// reference VM differentiates them to any order (a second derivative reads first-order
/// sensitivities that may be the symbolic zero `None`, whose own is `None`); the compiled
/// engine cannot tell which variable such a closure shares once the list has lost its
/// identity, and refuses (E0202).
#[test]
fn closures_from_a_list_grown_in_a_loop_on_the_reference_vm() {
    let src = "from anfora import grad\n\ndef f(x):\n    acc = x\n    fs = []\n    for i in range(3):\n        def step(v):\n            nonlocal acc\n            acc = acc * v + i\n        fs = fs + [step]\n    for s in fs:\n        s(x)\n    return acc\n\ndef main(x):\n    return f(x), grad(f)(x), grad(grad(f))(x)\n";
    // Late binding: every step adds i = 2, so f = x^4 + 2x^2 + 2x + 2.
    let x: f64 = 1.5;
    let want = vec![
        x.powi(4) + 2.0 * x * x + 2.0 * x + 2.0,
        4.0 * x.powi(3) + 4.0 * x + 2.0,
        12.0 * x * x + 4.0,
    ];
    assert_eq!(floats(&call(src, Engine::Reference, "main", &[x])), want);
    let e = flat(compile_error(src));
    assert!(e.contains("error[E0202]"), "{e}");
}

/// `has_aux=True` (JAX's rule): `f` returns `(value, aux)`; `grad` gives `(gradients, aux)`,
/// `value_and_grad` `((value, aux), gradients)`, and aux takes no part in the gradient. A
/// result that is not a pair is refused with its shape, when compiling and when running.
#[test]
fn has_aux_differentiates_the_value_and_passes_the_aux_on() {
    let src = "from anfora import grad, value_and_grad\n\ndef f(x, y):\n    return x * x * y, (x * 100.0, 'tag')\n\ndef main(x):\n    g, aux = grad(f, argnums=(0, 1), has_aux=True)(x, 3.0)\n    (v, aux2), dx = value_and_grad(f, has_aux=True)(x, 3.0)\n    return g, aux, v, aux2[0], dx, grad(f, 1, None, False, 'zero', True)(x, 3.0)[0]\n";
    for engine in [Engine::Compiled, Engine::Reference] {
        let v = call(src, engine, "main", &[1.5]);
        // d(x^2 y)/dx = 2xy = 9, d/dy = x^2 = 2.25; the aux is x * 100 untouched.
        assert_eq!(
            repr(&v),
            "((9.0, 2.25), (150.0, 'tag'), 6.75, 150.0, 9.0, 2.25)",
            "{engine:?}"
        );
    }
    let bad = "from anfora import grad\n\ndef f(x):\n    return x * x, 1.0, 2.0\n\ndef main(x):\n    return grad(f, has_aux=True)(x)\n";
    let e = flat(compile_error(bad));
    assert!(
        e.contains("has_aux=True: the function must return a pair (value, aux), got a tuple of 3"),
        "{e}"
    );
    let e = reference_error(bad);
    assert!(
        e.contains("TypeError: has_aux=True: the function must return a pair (value, aux), got a tuple of 3"),
        "{e}"
    );
    let e = flat(compile_error(
        &bad.replace("has_aux=True", "has_aux=x > 0.0"),
    ));
    assert!(e.contains("has_aux must be a constant bool"), "{e}");
}

#[test]
fn integer_inputs_get_zero_gradients() {
    let src = "from anfora import grad\n\ndef f(x, n):\n    return x * n\n\ndef main(x):\n    return grad(f, argnums=(0, 1))(x, 3)\n";
    let v = call(src, Engine::Compiled, "main", &[2.0]);
    assert_eq!(repr(&v), "(3.0, 0)");
}

/// `integers='cast'` (MindSpore's rule, which its compatibility layer asks for): each integer
/// value's sensitivity is the float one cast (truncated) to its dtype: `x * x` gets 2.5 cast
/// to 2, so `x` gets `2 * 2x`. The default rule gives zeros. Both engines.
#[test]
fn integer_values_take_mindspores_sensitivities_when_asked() {
    let src = "from anfora import grad\n\ndef f(x):\n    return x * x * 2.5\n\ndef main(x):\n    return grad(f, 0, None, False, 'cast')(x), grad(f)(x), grad(f, integers='cast')(x)\n";
    let x = anfora_tensor::Tensor::from_i64(vec![3, -2, 5], &[3])
        .unwrap()
        .try_cast(anfora_tensor::DType::I32)
        .unwrap();
    for engine in [Engine::Compiled, Engine::Reference] {
        let mut s = session(src, engine);
        let v = s
            .call(
                "main",
                vec![Arg::from(Value::Tensor(x.clone()))],
                &mut std::io::sink(),
            )
            .unwrap_or_else(|f| panic!("{}", s.render(&f)));
        let text = repr(&v);
        assert_eq!(
            text.matches("[12, -8, 20]").count(),
            2,
            "{engine:?}: {text}"
        );
        assert!(text.contains("[0, 0, 0]"), "{engine:?}: {text}");
    }
    let e = flat(compile_error(
        "from anfora import grad\n\ndef f(x):\n    return x * 2.0\n\ndef main(x):\n    return grad(f, 0, None, False, 'mindspore')(x)\n",
    ));
    assert!(
        e.contains("integers must be the constant 'zero' or 'cast'"),
        "{e}"
    );
}

// ---- errors -------------------------------------------------------------------------------

/// A message on one line (messages wrap at the terminal's width).
fn flat(e: String) -> String {
    e.replace('│', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The error the reference VM raises running `main(1.0)` of `src`.
fn reference_error(src: &str) -> String {
    let mut s = session(src, Engine::Reference);
    let args = vec![Arg::from(Value::Float(1.0))];
    match s.call("main", args, &mut std::io::sink()) {
        Err(f) => s.render(&f),
        Ok(v) => panic!("expected an error, got {}", repr(&v)),
    }
}

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
fn star_calls_of_function_values_are_refused_in_differentiated_code() {
    // A star or `**` call of a function named in the program differentiates (its binding is
    // made at compile time); one of a function value (chosen by a condition here) binds only
    // when it runs.
    let value_call = |call: &str, forward: &str| {
        format!(
            "from anfora import ops, grad\n\ndef g(x, k=1.0):\n    return x * k\n\ndef apply(fn, *args, **kw):\n    return {call}\n\ndef f(x):\n    return ops.sum(apply(g if x > 0.0 else ops.exp, {forward}))\n\ndef main(x):\n    return grad(f)(x)\n"
        )
    };
    let e = flat(compile_error(&value_call("fn(*args, **kw)", "x, k=2.0")));
    assert!(
        e.contains("E0502") && e.contains("CallDict has no backward rule"),
        "{e}"
    );
    assert!(e.contains("m.py:7:12"), "{e}");
    assert!(e.contains("call the function by its name"), "{e}");
    let e = flat(compile_error(&value_call("fn(*args)", "x")));
    assert!(
        e.contains("E0502") && e.contains("CallStar has no backward rule"),
        "{e}"
    );
    assert!(e.contains("m.py:7:12"), "{e}");
    assert!(e.contains("call the function by its name"), "{e}");
}

#[test]
fn unsupported_gradients_are_compile_errors() {
    let e = compile_error(
        "from anfora import ops, grad\n\ndef f(x):\n    return ops.sum(divmod(ops.ones((3,)) * x, 2.0)[0])\n\ndef main(x):\n    return grad(f)(x)\n",
    );
    assert!(
        e.contains("E0502") && e.contains("divmod has no backward rule"),
        "{e}"
    );
    assert!(e.contains("m.py:4:20"), "{e}");
    let e = compile_error(
        "from anfora import grad\n\ndef main(x):\n    f = (lambda z: z * z) if x > 0 else (lambda z: z)\n    return grad(f)(x)\n",
    );
    assert!(
        e.contains("E0501") && e.contains("grad() needs a function known at compile time"),
        "{e}"
    );
    assert!(e.contains("m.py:5:12"), "{e}");
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

// ---- forward mode ---------------------------------------------------------------------------

/// Checks `jvp(f, primals, tangents)` at `at` with tangent `dir` against the central difference
/// of `f` along `dir`, on both engines; `f` returns a scalar.
fn check_jvp(body: &str, at: &[f64], dir: &[f64]) {
    let n = at.len();
    let params: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    let p = params.join(", ");
    let tangents: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
    let t = tangents.join(", ");
    let src = format!(
        "import anfora\nfrom anfora import ops, jvp\n\n{body}\n\ndef value({p}):\n    return f({p})\n\ndef tangent({p}, {t}):\n    return jvp(f, ({p},), ({t},))\n"
    );
    let args: Vec<f64> = at.iter().chain(dir).copied().collect();
    let compiled = floats(&call(&src, Engine::Compiled, "tangent", &args));
    let reference = floats(&call(&src, Engine::Reference, "tangent", &args));
    assert_eq!(compiled, reference, "the engines disagree\n{src}");
    let h = 1e-6;
    let shifted = |s: f64| -> Vec<f64> { at.iter().zip(dir).map(|(a, d)| a + s * d).collect() };
    let fp = floats(&call(&src, Engine::Compiled, "value", &shifted(h)))[0];
    let fm = floats(&call(&src, Engine::Compiled, "value", &shifted(-h)))[0];
    let f0 = floats(&call(&src, Engine::Compiled, "value", at))[0];
    let fd = (fp - fm) / (2.0 * h);
    assert_eq!(compiled[0], f0, "jvp's primal output\n{src}");
    assert!(
        (compiled[1] - fd).abs() <= 1e-6 * fd.abs().max(1.0),
        "jvp {} vs finite difference {fd}\n{src}",
        compiled[1]
    );
}

#[test]
fn forward_mode_matches_directional_differences() {
    check_jvp(
        "def f(x, y):\n    return ops.sin(x) * y + x * x / (y + 2.0)",
        &[0.7, 0.4],
        &[1.0, -0.5],
    );
    check_jvp(
        "def f(x):\n    m = ops.reshape(ops.arange(6, dtype=anfora.float64), (2, 3)) * x\n    return ops.sum(ops.tanh(m) @ ops.transpose(m))",
        &[0.3],
        &[2.0],
    );
    // Control flow with a data-dependent trip count, and recursion.
    check_jvp(
        "def f(x, y):\n    acc = x\n    while acc < 10.0:\n        acc = acc * x + y\n    if acc > 12.0:\n        return acc * y\n    return acc - y",
        &[1.5, 0.25],
        &[0.5, 1.0],
    );
    check_jvp(
        "def p(x, n):\n    if n == 0:\n        return 1.0\n    return x * p(x, n - 1)\n\ndef f(x):\n    return p(x, 5)",
        &[1.1],
        &[1.0],
    );
}

#[test]
fn forward_mode_needs_a_tuple_of_primals() {
    let e = compile_error(
        "from anfora import jvp\n\ndef f(x):\n    return x * x\n\ndef g(p):\n    return jvp(f, p, (1.0,))\n\ndef main(x):\n    return g((x,))\n",
    );
    assert!(
        e.contains("E0503") && e.contains("jvp() needs its primals as a tuple"),
        "{e}"
    );
    assert!(e.contains("m.py:7:12"), "{e}");
}

// ---- a corpus of control flow, recursion and closures ----------------------------------------

/// Each program defines `f`, whose gradient (all arguments) is checked against finite
/// differences on both engines at two points: one on each side of its branches where that
/// matters.
const CORPUS: &[(&str, &[f64], &[f64])] = &[
    // for over range with a data-dependent break
    (
        "def f(x, y):\n    acc = y\n    for i in range(10):\n        acc = acc * x + 1.0\n        if acc > 5.0:\n            break\n    return acc",
        &[1.3, 0.2],
        &[0.9, 0.5],
    ),
    // for with continue on a data condition
    (
        "def f(x):\n    acc = 0.0\n    for i in range(6):\n        if x * i > 2.0:\n            continue\n        acc = acc + ops.sin(x * i)\n    return acc",
        &[0.45],
        &[0.9],
    ),
    // while with an early return inside a nested if
    (
        "def f(x, y):\n    while x < 4.0:\n        if x * y > 3.0:\n            if y > 1.0:\n                return x * y * y\n            return x - y\n        x = x * 1.5 + y\n    return x",
        &[0.5, 1.2],
        &[0.5, 0.7],
    ),
    // nested loops: a while inside a for
    (
        "def f(x):\n    total = 0.0\n    for i in range(3):\n        z = x\n        while z < 2.0 + i:\n            z = z * 1.7\n        total = total + z * i\n    return total",
        &[0.6],
        &[1.1],
    ),
    // elif chain inside a loop
    (
        "def f(x, y):\n    acc = 0.0\n    i = 0\n    while i < 5:\n        if x > i:\n            acc = acc + x * y\n        elif y > 0.5 * i:\n            acc = acc - y * y\n        else:\n            acc = acc * 0.5\n        i = i + 1\n    return acc",
        &[2.5, 1.2],
        &[0.5, 0.3],
    ),
    // a loop carrying a tuple
    (
        "def f(x):\n    a, b = x, 1.0\n    for _ in range(4):\n        a, b = a * b + 0.5, a - b * 0.25\n    return a * b",
        &[0.7],
        &[1.4],
    ),
    // a closure created in a loop, called after it
    (
        "def make(k):\n    return lambda z: z * k + 1.0\n\ndef f(x):\n    g = make(0.0)\n    for i in range(3):\n        g = make(x * i)\n    return g(x)",
        &[0.8],
        &[1.9],
    ),
    // a function chosen by a data condition and returned
    (
        "def pick(x):\n    if x > 1.0:\n        return lambda z: z * z * x\n    return lambda z: ops.exp(z) - x\n\ndef f(x, y):\n    return pick(x)(y)",
        &[1.5, 0.3],
        &[0.5, 0.3],
    ),
    // a function applied n times by recursion
    (
        "def times(g, n, z):\n    if n == 0:\n        return z\n    return times(g, n - 1, g(z))\n\ndef f(x, y):\n    return times(lambda z: ops.sin(z) * y + z, 4, x)",
        &[0.4, 0.8],
        &[1.2, -0.3],
    ),
    // mutual recursion on a data condition
    (
        "def even(x, acc):\n    if x < 0.5:\n        return acc\n    return odd(x - 0.5, acc * x)\n\ndef odd(x, acc):\n    if x < 0.5:\n        return -acc\n    return even(x - 0.5, acc + x)\n\ndef f(x):\n    return even(x, 1.0)",
        &[1.3],
        &[2.4],
    ),
    // recursion returning a tuple
    (
        "def fib(n, x):\n    if n < 2:\n        return (x, 1.0)\n    a, b = fib(n - 1, x)\n    return (a * x + b, a)\n\ndef f(x):\n    a, b = fib(5, x)\n    return a * b",
        &[0.7],
        &[1.3],
    ),
    // a loop never entered, on tensors
    (
        "def f(x):\n    t = ops.arange(3, dtype=anfora.float64) * x\n    while ops.sum(t) > 100.0:\n        t = t * 0.5\n    return ops.sum(t * t)",
        &[1.5],
        &[2.5],
    ),
    // early return from a for over a tuple of floats
    (
        "def f(x):\n    for c in (0.5, 1.5, 2.5):\n        if x * c > 2.0:\n            return x * c\n    return -x",
        &[1.0],
        &[0.5],
    ),
    // enumerate and zip in a loop
    (
        "def f(x, y):\n    acc = 0.0\n    for i, a in enumerate((x, y, x * y)):\n        for b in zip((y, x, 1.0), (x, x, y)):\n            acc = acc + a * b[0] * b[1] * (i + 1)\n    return acc",
        &[0.7, 1.3],
        &[-0.4, 0.2],
    ),
    // a closure over a closure
    (
        "def outer(a):\n    def mid(b):\n        def inner(c):\n            return a * b * c + a\n        return inner\n    return mid\n\ndef f(x, y):\n    return outer(x)(y)(x + y)",
        &[0.7, 1.3],
        &[1.1, -0.6],
    ),
    // break out of the inner loop only
    (
        "def f(x):\n    acc = 0.0\n    for i in range(3):\n        for j in range(4):\n            if j * x > 1.5:\n                break\n            acc = acc + x * j + i\n    return acc * x",
        &[0.6],
        &[1.4],
    ),
    // a tensor condition
    (
        "def f(x):\n    t = ops.arange(4, dtype=anfora.float64) - x\n    if ops.sum(t) > 0.0:\n        return ops.sum(ops.exp(t))\n    return ops.sum(t * t * x)",
        &[0.5],
        &[2.0],
    ),
    // a loop with a matrix product carried
    (
        "def f(x):\n    m = ops.reshape(ops.arange(4, dtype=anfora.float64), (2, 2)) * 0.1 + x\n    v = ops.ones((2,), dtype=anfora.float64)\n    i = 0\n    while ops.sum(v) < 10.0 and i < 6:\n        v = m @ v + 0.1\n        i = i + 1\n    return ops.sum(v)",
        &[0.9],
        &[1.6],
    ),
    // if after a loop with continue
    (
        "def f(x):\n    acc = x\n    for i in range(5):\n        if i % 2 == 0:\n            continue\n        acc = acc * x\n    if acc > 1.0:\n        acc = acc * 2.0\n    return acc",
        &[1.2],
        &[0.8],
    ),
    // a gradient called inside the differentiated function
    (
        "def g(z, y):\n    return z * z * y\n\ndef f(x, y):\n    return grad(g)(x, y) * x + y",
        &[0.7, 1.3],
        &[-0.4, 2.0],
    ),
    // vjp inside a loop body
    (
        "def g(z):\n    return ops.sin(z) * z\n\ndef f(x):\n    acc = 0.0\n    for i in range(3):\n        y, back = vjp(g, x * i)\n        acc = acc + y + back(1.0)[0] * x\n    return acc",
        &[0.7],
        &[1.9],
    ),
    // a while loop whose body calls a recursive function
    (
        "def pw(z, n):\n    if n == 0:\n        return 1.0\n    return z * pw(z, n - 1)\n\ndef f(x):\n    acc = 0.0\n    n = 0\n    while acc < 3.0:\n        n = n + 1\n        acc = acc + pw(x, n)\n    return acc",
        &[1.1],
        &[1.6],
    ),
];

#[test]
fn corpus_of_control_flow_recursion_and_closures() {
    for (body, a, b) in CORPUS {
        check(body, a);
        check(body, b);
    }
}

#[test]
fn second_order_through_loops_with_break() {
    let body = "def g(x):\n    acc = x\n    for i in range(10):\n        acc = acc * x\n        if acc > 5.0:\n            break\n    return acc\n\ndef f(x):\n    return grad(g)(x)";
    check(body, &[1.3]);
    check(body, &[0.8]);
}

// ---- custom primitives ----------------------------------------------------------------------

/// Registers `ops.wsum(x, w) = x * x * w` with a backward rule, `ops.opaque(x) = x` without
/// one, and `ops.badgrad(x) = x` whose rule misbehaves by the size of `x` (3: an error, 2: no
/// gradients, 4: a gradient of the wrong shape), once per process.
fn register_custom() {
    use anfora_ir::custom::{CustomPrimitive, register};
    use anfora_tensor::{BinaryOp, Tensor};
    static DONE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        let mul =
            |a: &Tensor, b: &Tensor| Tensor::binary(BinaryOp::Mul, a, b).map_err(|e| e.to_string());
        register(CustomPrimitive {
            name: "wsum".into(),
            params: vec!["x".into(), "w".into()],
            effects: anfora_ir::Effects::default(),
            written_refs: 0,
            infer: Box::new(|specs| Ok(specs[0].clone())),
            kernel: Box::new(move |t| Ok(vec![mul(&mul(&t[0], &t[0])?, &t[1])?])),
            // d/dx = 2 x w d, d/dw = x^2 d.
            bprop: Some(Box::new(move |xs, _out, d| {
                let xw = mul(&xs[0], &xs[1])?;
                let two = Tensor::binary(BinaryOp::Add, &xw, &xw).map_err(|e| e.to_string())?;
                Ok(vec![mul(&two, d)?, mul(&mul(&xs[0], &xs[0])?, d)?])
            })),
        })
        .unwrap();
        register(CustomPrimitive {
            name: "opaque".into(),
            params: vec!["x".into()],
            effects: anfora_ir::Effects::default(),
            written_refs: 0,
            infer: Box::new(|specs| Ok(specs[0].clone())),
            kernel: Box::new(|t| Ok(vec![t[0].clone()])),
            bprop: None,
        })
        .unwrap();
        register(CustomPrimitive {
            name: "badgrad".into(),
            params: vec!["x".into()],
            effects: anfora_ir::Effects::default(),
            written_refs: 0,
            infer: Box::new(|specs| Ok(specs[0].clone())),
            kernel: Box::new(|t| Ok(vec![t[0].clone()])),
            bprop: Some(Box::new(|xs, _out, d| match xs[0].numel() {
                3 => Err("refused".into()),
                2 => Ok(vec![]),
                _ => Ok(vec![
                    d.reshape(&[-1])
                        .map_err(|e| e.to_string())?
                        .index(&[anfora_tensor::IndexItem::Int(0)])
                        .map_err(|e| e.to_string())?,
                ]),
            })),
        })
        .unwrap();
    });
}

#[test]
fn custom_primitives_with_a_backward_rule_are_differentiated() {
    register_custom();
    check(
        &format!("{VEC}\ndef f(x, y):\n    return ops.sum(ops.wsum(v(x), v(y) * y) * x)"),
        &[0.7, 1.3],
    );
    let e = compile_error(
        "from anfora import ops, grad\n\ndef f(x):\n    return ops.sum(ops.opaque(ops.ones((2,)) * x))\n\ndef main(x):\n    return grad(f)(x)\n",
    );
    assert!(
        e.contains("E0502") && e.contains("ops.opaque has no backward rule"),
        "{e}"
    );
    assert!(e.contains("m.py:4:20"), "{e}");
    // A backward rule that fails or breaks its contract is a runtime error at the call.
    for (n, message) in [
        (3, "ValueError: ops.badgrad backward: refused"),
        (
            2,
            "ValueError: ops.badgrad backward returned 0 gradients for 1 arguments",
        ),
        (
            4,
            "ValueError: ops.badgrad backward: gradient 0 has shape [], its argument [4]",
        ),
    ] {
        let src = format!(
            "from anfora import ops, grad\n\ndef f(x):\n    return ops.sum(ops.badgrad(ops.ones(({n},)) * x))\n\ndef main(x):\n    return grad(f)(x)\n"
        );
        for engine in [Engine::Compiled, Engine::Reference] {
            let mut s = session(&src, engine);
            match s.call(
                "main",
                vec![Arg::from(Value::Float(1.0))],
                &mut std::io::sink(),
            ) {
                Err(f @ Failure::Runtime(_)) => {
                    let text = s.render(&f);
                    assert!(text.contains(message), "{engine:?}: {text}");
                    assert!(text.contains("line 4"), "{engine:?}: {text}");
                }
                Err(other) => panic!("expected a runtime error, got {}", s.render(&other)),
                Ok(v) => panic!("expected a runtime error, got {}", repr(&v)),
            }
        }
    }
}

// ---- mutable state: in-place updates, item assignment, nonlocal, late binding, *args ------

#[test]
fn in_place_updates_and_item_assignment() {
    // A buffer filled item by item from the inputs; the overwritten parts get no gradient.
    check(
        "def f(x, y):\n    buf = ops.zeros(4, dtype=anfora.float64)\n    for i in range(4):\n        buf[i] = x * i + y * y\n    buf[1] = y\n    buf[2:] *= x\n    return ops.sum(buf * buf)",
        &[0.7, -1.3],
    );
    // Augmented assignment of items, a mask and integer indices, broadcasting of the value.
    check(
        "def f(x, y):\n    m = ops.ones((2, 3), dtype=anfora.float64) * x\n    m[0] += y\n    m[:, 1] = m[:, 1] * y\n    m[m > 1.0] -= x * y\n    m[1, ops.tensor([0, 2])] = ops.tensor([1.0, 2.0], dtype=anfora.float64) * y\n    return ops.sum(m * m) + ops.sum(m)",
        &[0.9, 1.4],
    );
    // x += v keeps x's dtype; the value's gradient flows through the cast.
    check(
        "def f(x):\n    acc = ops.zeros(3, dtype=anfora.float64)\n    for k in range(3):\n        acc += x ** k\n    acc *= x\n    return ops.sum(acc)",
        &[1.1],
    );
}

#[test]
fn nonlocal_accumulators_and_late_binding() {
    check(
        "def f(x, y):\n    total = 0.0\n    def add(v):\n        nonlocal total\n        total = total + v * x\n    for k in range(3):\n        add(y * k)\n    add(x)\n    return total",
        &[0.6, -0.8],
    );
    check(
        "def f(x, y):\n    s = x\n    def scaled(v):\n        return v * s\n    a = scaled(y)\n    s = x * x\n    return a + scaled(y)",
        &[1.2, 0.5],
    );
    check(
        "def f(x):\n    t = 0.0\n    for k in range(4):\n        g = lambda v: v * k + x\n        t = t + g(x)\n    return t",
        &[0.3],
    );
}

#[test]
fn varargs() {
    check(
        "def total(first, *rest, scale=1.0):\n    s = first\n    for r in rest:\n        s = s + r * r\n    return s * scale\n\ndef f(x, y):\n    return total(x, y, x * y) + total(x, x, y, scale=y) + total(y)",
        &[0.4, 1.5],
    );
}
