//! `ops.setitem`, in-place operators (their output rule, `InplaceCast`) and advanced indexing
//! reads end to end: the values on both
//! engines (worked out by hand from numpy's rules), their errors, and gradients against float64
//! central differences.

use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Failure, Session, repr};
use anfora_tensor::Tensor;

const HEADER: &str = "import anfora\nfrom anfora import ops, grad\n\n";

fn session(src: &str, engine: Engine) -> Session {
    let mut s = Session::load("m.py", src, Options::default());
    s.engine = engine;
    s
}

fn call(s: &mut Session, entry: &str, args: &[Value]) -> Result<Value, String> {
    let args = args.iter().cloned().map(Arg::from).collect();
    s.call(entry, args, &mut std::io::sink())
        .map_err(|f: Failure| s.render(&f))
}

/// `main(args)` on both engines: the same repr on each, returned.
fn both(src: &str, args: &[Value]) -> String {
    let src = format!("{HEADER}{src}");
    let results: Vec<String> = [Engine::Compiled, Engine::Reference]
        .into_iter()
        .map(|e| {
            let mut s = session(&src, e);
            match call(&mut s, "main", args) {
                Ok(v) => repr(&v),
                Err(e) => e,
            }
        })
        .collect();
    assert_eq!(results[0], results[1], "the engines disagree\n{src}");
    results[0].clone()
}

fn f64s(v: &[f64], shape: &[usize]) -> Value {
    Value::Tensor(Tensor::from_f64(v.to_vec(), shape).unwrap())
}

fn x34() -> Value {
    f64s(&(0..12).map(f64::from).collect::<Vec<_>>(), &[3, 4])
}

#[test]
fn setitem_values_on_both_engines() {
    let src = "def main(x):\n    y = ops.setitem(x, 1, 0.0)\n    y = ops.setitem(y, (0, -1), 7)\n    y = ops.setitem(y, [0, 2], ops.tensor([1.0, 2.0, 3.0, 4.0]))\n    return y\n";
    assert_eq!(
        both(src, &[x34()]),
        "Tensor([[1., 2., 3., 4.],\n        [0., 0., 0., 0.],\n        [1., 2., 3., 4.]])"
    );
    // Integer tensors, a mask, and float values truncated.
    let src = "def main(x):\n    a = ops.cast(x, anfora.int64)\n    a = ops.setitem(a, a > 8, 2.9)\n    return a, x\n";
    assert_eq!(
        both(src, &[x34()]),
        "(Tensor([[0, 1, 2, 3],\n        [4, 5, 6, 7],\n        [8, 2, 2, 2]]), Tensor([[ 0.,  1.,  2.,  3.],\n        [ 4.,  5.,  6.,  7.],\n        [ 8.,  9., 10., 11.]]))"
    );
    // Lists are Python's.
    let src = "def main():\n    xs = [1, 2, 3]\n    return ops.setitem(xs, -1, 9), xs\n";
    assert_eq!(both(src, &[]), "([1, 2, 9], [1, 2, 3])");
}

#[test]
fn advanced_reads_on_both_engines() {
    let src = "def main(x, i):\n    return x[[2, 0]], x[:, i], x[x > 8.5]\n";
    let i = Value::Tensor(Tensor::from_i64(vec![3, 3, 0], &[3]).unwrap());
    assert_eq!(
        both(src, &[x34(), i]),
        "(Tensor([[ 8.,  9., 10., 11.],\n        [ 0.,  1.,  2.,  3.]]), Tensor([[ 3.,  3.,  0.],\n        [ 7.,  7.,  4.],\n        [11., 11.,  8.]]), Tensor([ 9., 10., 11.]))"
    );
}

#[test]
fn inplace_cast_on_both_engines() {
    let src = "def main(x):\n    a = ops.cast(x, anfora.int32)\n    a += 1\n    b = 1\n    b += 1.5\n    return a, b\n";
    let x = f64s(&[1.0, 2.0], &[2]);
    assert_eq!(both(src, &[x]), "(Tensor([2, 3], dtype=int32), 2.5)");
}

/// The failure of `main(args)` on each engine (the compiled engine may report it when
/// compiling, from the arguments' values, where the reference VM raises it).
fn failures(src: &str, args: &[Value]) -> Vec<String> {
    let src = format!("{HEADER}{src}");
    [Engine::Compiled, Engine::Reference]
        .into_iter()
        .map(|e| {
            let mut s = session(&src, e);
            match call(&mut s, "main", args) {
                Ok(v) => panic!("{e:?}: expected an error, got {}", repr(&v)),
                Err(e) => e,
            }
        })
        .collect()
}

#[test]
fn errors_are_numpys_on_both_engines() {
    let src = "def main(x, k):\n    return ops.setitem(x, k, 0.0)\n";
    for out in failures(src, &[x34(), Value::Int(5)]) {
        assert!(
            out.contains("index 5 is out of bounds for axis 0 with size 3"),
            "{out}"
        );
    }
    let src = "def main(x, v):\n    return ops.setitem(x, 0, v)\n";
    for out in failures(src, &[x34(), f64s(&[1.0, 2.0, 3.0], &[3])]) {
        assert!(
            out.contains("could not broadcast input array from shape (3,) into shape (4,)"),
            "{out}"
        );
    }
    let src = "def main(x):\n    a = ops.cast(x, anfora.int64)\n    a += x * 0.5\n    return a\n";
    for out in failures(src, &[x34()]) {
        assert!(
            out.contains("Cannot cast ufunc output from dtype('float64') to")
                && out.contains("dtype('int64') with casting rule 'same_kind'"),
            "{out}"
        );
    }
    // A run-time index: both engines raise numpy's IndexError.
    let src = "def main(x, i):\n    return ops.setitem(x, i, 0.0)\n";
    let i = Value::Tensor(Tensor::from_i64(vec![0, 3], &[2]).unwrap());
    let outs = failures(src, &[x34(), i]);
    assert_eq!(outs[0], outs[1]);
    assert!(
        outs[0].contains("IndexError: index 3 is out of bounds for axis 0 with size 3"),
        "{}",
        outs[0]
    );
}

// ---- gradients --------------------------------------------------------------------------------

/// Deterministic float64 values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn random(shape: &[usize], seed: u64) -> Value {
    let n = shape.iter().product();
    f64s(&values(n, seed), shape)
}

fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::Float(f) => vec![*f],
        Value::Tensor(t) => t.to_f64_vec(),
        Value::Tuple(xs) => xs.iter().flat_map(floats).collect(),
        other => panic!("not numbers: {}", repr(other)),
    }
}

/// `grad(f, argnums=all)` at `args` (copies of them) against central differences of `f` in
/// every element, and the compiled engine against the reference VM.
fn check(body: &str, args: &[Value]) {
    let n = args.len();
    let p = (0..n)
        .map(|i| format!("a{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let argnums = (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    // f gets copies, which it may update in place (the entry's arguments are the caller's).
    let copies = (0..n)
        .map(|i| format!("a{i} * 1.0"))
        .collect::<Vec<_>>()
        .join(", ");
    let src = format!(
        "{HEADER}{body}\n\ndef value({p}):\n    return f({copies})\n\ndef gradient({p}):\n    return grad(f, argnums=({argnums},))({copies})\n"
    );
    let mut compiled = session(&src, Engine::Compiled);
    let mut reference = session(&src, Engine::Reference);
    let g = floats(&call(&mut compiled, "gradient", args).unwrap());
    let r = floats(&call(&mut reference, "gradient", args).unwrap());
    assert_eq!(g, r, "the engines disagree\n{src}");
    let h = 1e-6;
    let mut k = 0;
    for (i, arg) in args.iter().enumerate() {
        let Value::Tensor(t) = arg else {
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
            let fp = floats(&call(&mut compiled, "value", &at(h)).unwrap())[0];
            let fm = floats(&call(&mut compiled, "value", &at(-h)).unwrap())[0];
            let fd = (fp - fm) / (2.0 * h);
            assert!(
                (g[k] - fd).abs() <= 1e-6 * fd.abs().max(1.0),
                "d/da{i}[{j}]: grad {} vs finite difference {fd}\n{src}",
                g[k]
            );
            k += 1;
        }
    }
    assert_eq!(k, g.len(), "one gradient per element\n{src}");
}

#[test]
fn setitem_gradients_of_the_array_and_the_value() {
    // A broadcast value: its gradient sums over the selection's rows.
    check(
        "def f(x, v):\n    y = ops.setitem(x, [0, 2], v)\n    return ops.sum(y * y * ops.tanh(x))",
        &[random(&[3, 4], 1), random(&[4], 2)],
    );
    // Basic indices and a scalar-shaped value.
    check(
        "def f(x, v):\n    y = ops.setitem(x * 2.0, (1, -1), v)\n    return ops.sum(ops.tanh(y) * x)",
        &[random(&[3, 4], 3), random(&[], 4)],
    );
    // A mask.
    check(
        "def f(x, v):\n    y = ops.setitem(x, x > 0.0, v)\n    return ops.sum(y * y)",
        &[random(&[2, 3], 5), random(&[], 6)],
    );
}

#[test]
fn advanced_read_gradients_accumulate_repeated_positions() {
    check(
        "def f(x):\n    return ops.sum(ops.tanh(x[[0, 0, 2]]) * x[[1, 1, 1]])",
        &[random(&[3, 2], 7)],
    );
    check(
        "def f(x):\n    return ops.sum(x[x > 0.0] * x[x > 0.0])",
        &[random(&[2, 3], 8)],
    );
}

#[test]
fn inplace_cast_gradient_is_the_new_values() {
    check(
        "def f(x, y):\n    z = x * 1.0\n    z *= y\n    return ops.sum(z * z)",
        &[random(&[3], 9), random(&[3], 10)],
    );
}

#[test]
fn setitem_gradient_with_repeated_indices_goes_to_the_stored_element() {
    // v[0] is overwritten by v[2]: its gradient is zero.
    check(
        "def f(x, v):\n    y = ops.setitem(x, [0, 2, 0], v)\n    return ops.sum(y * y * ops.tanh(x))",
        &[random(&[3], 11), random(&[3], 12)],
    );
}

#[test]
fn setitem_second_derivatives() {
    check(
        "def h(x, v):\n    y = ops.setitem(x, [0, 2, 0], v)\n    return ops.sum(y * y * y * x)\n\ndef f(x, v):\n    gx, gv = grad(h, argnums=(0, 1))(x, v)\n    return ops.sum(gx * gx) + ops.sum(gv * gv * gv)",
        &[random(&[3], 13), random(&[3], 14)],
    );
    check(
        "def h(x):\n    return ops.sum(ops.tanh(x[[0, 0, 1]]) * x[x > 0.0])\n\ndef f(x):\n    return ops.sum(grad(h)(x) ** 2)",
        &[random(&[3], 15)],
    );
}

#[test]
fn gradients_through_a_function_that_updates_its_argument_in_place() {
    // `scale_into` writes the product back into the caller's `z`; `halve` gets a float,
    // which it only rebinds, so `k` keeps its value (and no gradient flows through it).
    check(
        "def scale_into(z, w):\n    z *= w\n    z[0] = z[0] + w[1]\n\ndef halve(s):\n    s *= 0.5\n    return s\n\ndef f(x, w):\n    z = x * 1.0\n    k = 3.0\n    scale_into(z, w)\n    halve(k)\n    return ops.sum(ops.tanh(z) * z) * k",
        &[random(&[3], 13), random(&[3], 14)],
    );
}

#[test]
fn gradients_of_a_function_that_updates_its_own_argument_in_place() {
    // `grad(f)(a0, a1)` with `f` writing into `x`: the gradient is that of f on the values
    // passed (the overwritten part's is zero), and the caller's array is updated as numpy
    // updates it.
    check(
        "def f(x, w):\n    x[0] = w[1] * 3.0\n    x *= w\n    x[1:] += ops.tanh(x[:-1])\n    return ops.sum(x * x * w)",
        &[random(&[3], 15), random(&[3], 16)],
    );
}

/// The caller's array after `grad(f)(x, w)` / `value_and_grad(f)(x, w)` where `f` updates `x`
/// in place: numpy's, through every name of it, with the gradients of f on the values passed.
#[test]
fn grad_of_a_function_updating_its_argument_writes_it_back() {
    let src = "def f(x, w):\n    x[0] = x[0] * 2.0\n    x *= w\n    return ops.sum(x * x)\n\ndef main(a, w):\n    x = a + ops.zeros((3,), dtype=anfora.float64)\n    y = x\n    g = grad(f, argnums=(0, 1))(x, w)\n    z = x * 1.0\n    v, gz = anfora.value_and_grad(f)(z, w)\n    return g, y, v, gz, z\n";
    let x = f64s(&[1.0, 2.0, 3.0], &[3]);
    let w = f64s(&[0.5, -1.0, 2.0], &[3]);
    // x is a new tensor, so `y = x` names the same array; x' = [2, 2, 3] * w = [1, -2, 6]; d sum(x'^2)/dx = 2 x' w * [2, 1, 1] = [2, 4, 24],
    // d/dw = 2 x' [2, 2, 3] = [4, -8, 36]. Then z = x' and z'' = [2, -2, 6] * w = [1, 2, 12].
    assert_eq!(
        both(src, &[x, w]),
        "((Tensor([ 2.,  4., 24.]), Tensor([ 4., -8., 36.])), Tensor([ 1., -2.,  6.]), Tensor(149.), Tensor([ 2., -4., 48.]), Tensor([ 1.,  2., 12.]))"
    );
}

#[test]
fn gradients_through_an_item_of_an_item() {
    // `y[1][0:2] = v` writes through the view `y[1]`: v gets the sensitivity of those two
    // positions, x none of them.
    check(
        "def f(x, v):\n    y = x * 1.0\n    y[1][0:2] = v\n    y[0][2] += v[0]\n    return ops.sum(y * y * ops.tanh(x))",
        &[random(&[2, 3], 15), random(&[2], 16)],
    );
}

#[test]
fn gradients_through_starred_targets_and_displays() {
    // `first, *rest, last = ...` of a tuple and of a tensor's rows, and `(*t, x)` displays.
    check(
        "def f(x, w):\n    first, *rest, last = (x, x * w, ops.tanh(w), w * w)\n    t = (*rest, first)\n    total = last * 0.5\n    for r in t:\n        total = total + r * r\n    return ops.sum(total)",
        &[random(&[3], 17), random(&[3], 18)],
    );
    check(
        "def f(m):\n    top, *others = m\n    xs = [*others, top * 2.0]\n    return ops.sum(xs[0] * xs[1] + ops.tanh(xs[2]))",
        &[random(&[3, 2], 19)],
    );
}

#[test]
fn gradients_through_dicts_and_keyword_arguments() {
    // A dict's sensitivity is the tuple of its values' (in key order): through displays,
    // `d[k]`, `d.get(k)` and `d.get(k, default)` (present and missing keys), `**kwargs`
    // collected by a call, and a repeated display key (its last value counts).
    check(
        "def g(v, **kw):\n    return v * kw['scale'] + kw.get('shift', 0.0) + kw.get('missing', v * v)\n\ndef f(x, w):\n    d = {'a': x * w, 'b': ops.tanh(w), 'a': x * x}\n    y = g(d['a'], scale=d.get('b'), shift=w)\n    return ops.sum(y * d.get('b', x))",
        &[random(&[3], 22), random(&[3], 23)],
    );
    // Through `{**d, ...}` (a replaced value gets nothing) and `dict(d, k=v)`.
    check(
        "def f(x, w):\n    d = {'a': x * w, 'b': w * w}\n    e = {**d, 'b': ops.sin(x), 'c': x}\n    g = dict(e, c=w * 3.0)\n    return ops.sum(e['a'] * e['b'] + g['c'] * g['a'] + d['b'])",
        &[random(&[3], 26), random(&[3], 27)],
    );
    // Through the items and values a `for` loop walks.
    check(
        "def f(x, w):\n    d = {'p': x * w, 'q': ops.sin(x)}\n    total = w * 0.0\n    for k, v in d.items():\n        total = total + v * v\n    for v in d.values():\n        total = total + ops.tanh(v)\n    return ops.sum(total + list(d.values())[1])",
        &[random(&[3], 24), random(&[3], 25)],
    );
}

#[test]
fn gradients_through_loops_over_tuples_of_functions() {
    // A `for` loop over functions of different kinds (a graph, a primitive, a closure over an
    // argument): the grad stage's loop is unrolled as inference unrolls the loop, each
    // iteration calling its own function.
    check(
        "def double(v):\n    return v * 2.0\n\ndef f(x, w):\n    scale = lambda v: v * w\n    for g in (double, ops.sin, scale):\n        x = g(x)\n    return ops.sum(x * x)",
        &[random(&[3], 30), random(&[3], 31)],
    );
    // Functions that change the shape, with `enumerate`: (3,) to (3, 3) to (3,).
    check(
        "def outer(v, w):\n    return ops.reshape(v, (3, 1)) * w\n\ndef inner(m, w):\n    return m @ w\n\ndef f(x, w):\n    total = 0.0\n    for i, g in enumerate((outer, inner)):\n        x = g(x, w)\n        total = total + (i + 1.0) * ops.sum(ops.tanh(x))\n    return total",
        &[random(&[3], 32), random(&[3], 33)],
    );
}

#[test]
fn gradients_through_star_and_double_star_calls() {
    // `f(*t)` and `f(**d)` of functions named in the program: each argument gets the
    // sensitivity of the parameter it was bound to, through `*args` and `**kwargs` packing,
    // keyword-only parameters and defaults (which get nothing).
    check(
        "def g(a, *rest, k=2.0, **kw):\n    return a * rest[0] + rest[1] * k + kw['s'] * a\n\ndef f(x, w):\n    t = (x, w, ops.sin(x))\n    d = {'s': w * w}\n    return ops.sum(g(*t, k=x, **d) + g(*t[:2], w, **d))",
        &[random(&[3], 40), random(&[3], 41)],
    );
    // A star call of a `*args` function with a sliced tuple, and one with only `**`.
    check(
        "def loss(*inputs):\n    out = model(*inputs[:-1])\n    return ops.sum((out - inputs[-1]) ** 2)\n\ndef model(x, w, b=1.0):\n    return ops.tanh(x * w + b)\n\ndef scaled(v, *, scale, shift=0.0):\n    return v * scale + shift\n\ndef f(x, w):\n    kw = {'scale': w}\n    return loss(x, w, x * 0.5) + ops.sum(scaled(x, **kw))",
        &[random(&[3], 42), random(&[3], 43)],
    );
}

#[test]
fn gradients_through_closure_cells() {
    // A `nonlocal` accumulator of closures called from a list, after the loop that runs them.
    check(
        "def f(x, w):\n    acc = x * 0.0\n    def add(v):\n        nonlocal acc\n        acc = acc + v * w\n    hooks = [add, add]\n    for h in hooks:\n        h(x)\n    h(ops.sin(x))\n    return ops.sum(acc * acc)",
        &[random(&[3], 50), random(&[3], 51)],
    );
    // A variable reassigned after the closure that reads it is made (late binding), and a
    // getter and adder pair returned by a factory.
    check(
        "def make(x):\n    total = x * 0.0\n    def add(v):\n        nonlocal total\n        total = total + v\n    def get():\n        return total\n    return add, get\n\ndef f(x, w):\n    scale = w\n    g = lambda v: v * scale\n    fs = (g,)\n    scale = w * w\n    add, get = make(x)\n    add(fs[0](x))\n    add(ops.sin(w))\n    return ops.sum(get() * x)",
        &[random(&[3], 52), random(&[3], 53)],
    );
}

#[test]
fn gradients_through_tuple_and_list_concatenation() {
    // Each operand of `+` gets its own items' sensitivities (was: none at all).
    check(
        "def f(x, w):\n    t = (x, x * w) + (ops.tanh(w),)\n    u = [w * w] + [x]\n    return ops.sum(t[1] * t[2] + u[0] * u[1])",
        &[random(&[3], 20), random(&[3], 21)],
    );
}
