//! Gradients through loops of any length. A loop's J graphs pass continuations (see
//! `anfora-ad`'s `loops` module): the forward pass runs as jumps and the backward pass as a
//! chain of tail calls, so neither counts toward the recursion limit. Each gradient is checked
//! against the analytic one, computed here in float64: d/dx of n applications of sin is the
//! product of the cosines of the iterates.

use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Session, repr};

const WHILE_LOOP: &str = "def f(x, n):\n    i = 0\n    while i < n:\n        x = ops.sin(x)\n        i += 1\n    return x\n";
const FOR_LOOP: &str =
    "def f(x, n):\n    for i in range(n):\n        x = ops.sin(x)\n    return x\n";
/// The iteration as a tail-recursive function.
const TAIL_RECURSION: &str =
    "def f(x, n):\n    if n == 0:\n        return x\n    return f(ops.sin(x), n - 1)\n";

/// The float64 tensor the loops start from in `gradient`'s `tensor` entry.
fn tensor_start() -> Vec<f64> {
    (0..4).map(|i| i as f64 * 0.4 + 0.2).collect()
}

/// `grad(f)` at `x` (one float, or [`tensor_start`] as a float64 tensor) for `n` iterations.
fn gradient(f: &str, x: &[f64], n: i64, engine: Engine, options: Options) -> Vec<f64> {
    let src = format!(
        "import anfora\nfrom anfora import grad, ops\n\n{f}\ndef scalar(x, n):\n    return grad(f, argnums=0)(x, n)\n\ndef tensor(n):\n    x = ops.arange(4, dtype=anfora.float64) * 0.4 + 0.2\n    return grad(lambda x, n: ops.sum(f(x, n)), argnums=0)(x, n)\n"
    );
    let mut s = Session::load("m.py", &src, options);
    s.engine = engine;
    let (entry, mut args) = match x {
        [x] => ("scalar", vec![Arg::from(Value::Float(*x))]),
        _ => {
            assert_eq!(x, tensor_start());
            ("tensor", vec![])
        }
    };
    args.push(Arg::from(Value::Int(n)));
    let out = s
        .call(entry, args, &mut std::io::sink())
        .unwrap_or_else(|e| panic!("{entry}({x:?}, {n}) on {engine:?}: {}\n{src}", s.render(&e)));
    match &out {
        Value::Float(g) => vec![*g],
        Value::Tensor(t) => t.to_f64_vec(),
        other => panic!("not a gradient: {}", repr(other)),
    }
}

/// The product of the cosines of the `n` iterates of sin from `x`, newest first (the order
/// in which the backward pass multiplies).
fn analytic(mut x: f64, n: i64) -> f64 {
    let mut cosines = Vec::with_capacity(n as usize);
    for _ in 0..n {
        cosines.push(x.cos());
        x = x.sin();
    }
    cosines.iter().rev().product()
}

fn check(f: &str, x: &[f64], n: i64, engine: Engine, options: Options) {
    let got = gradient(f, x, n, engine, options);
    assert_eq!(got.len(), x.len());
    for (&g, &x) in got.iter().zip(x) {
        let want = analytic(x, n);
        assert!(
            (g - want).abs() <= 1e-12 * want.abs(),
            "{n} iterations from {x} on {engine:?}: {g} vs {want}\n{f}"
        );
    }
}

/// A million iterations: one frame each would pass the default limit (10,000) a hundred
/// times over.
const N: i64 = 1_000_000;

#[test]
fn a_long_while_loop_on_the_compiled_engine() {
    check(WHILE_LOOP, &[0.5], N, Engine::Compiled, Options::default());
}

#[test]
fn a_long_for_loop_on_the_compiled_engine() {
    check(FOR_LOOP, &[0.5], N, Engine::Compiled, Options::default());
}

#[test]
fn a_long_while_loop_on_the_reference_engine() {
    check(WHILE_LOOP, &[0.5], N, Engine::Reference, Options::default());
}

#[test]
fn a_long_for_loop_on_the_reference_engine() {
    check(FOR_LOOP, &[0.5], N, Engine::Reference, Options::default());
}

#[test]
fn a_long_loop_over_a_float64_tensor() {
    let x = tensor_start();
    check(WHILE_LOOP, &x, 50_000, Engine::Compiled, Options::default());
    check(FOR_LOOP, &x, 20_000, Engine::Reference, Options::default());
}

#[test]
fn long_tail_recursion() {
    // Tail calls of a `def` count toward the recursion limit (as CPython's frames would), in
    // the gradient's forward pass as in the function: the limit must admit 50,000 of them.
    let deep = Options { max_depth: 50_010 };
    for engine in [Engine::Compiled, Engine::Reference] {
        check(TAIL_RECURSION, &[0.5], 50_000, engine, deep.clone());
    }
}

/// The depth does not grow with the number of iterations: a limit of a few frames is enough
/// for any.
#[test]
fn the_backward_pass_of_a_loop_runs_in_constant_depth() {
    let shallow = Options { max_depth: 8 };
    // The forward pass of a tail recursion counts its 20,000 levels, as the recursion does;
    // the backward pass adds none.
    let recursion = Options {
        max_depth: 20_000 + 16,
    };
    for engine in [Engine::Compiled, Engine::Reference] {
        for (f, options) in [
            (WHILE_LOOP, &shallow),
            (FOR_LOOP, &shallow),
            (TAIL_RECURSION, &recursion),
        ] {
            check(f, &[0.5], 20_000, engine, options.clone());
        }
    }
}

/// A loop header's continuation is one of a set with a member per way into it (the entry, the
/// end of the body, each `continue`): with three `continue`s inference still knows every
/// member, so the gradient keeps its type (no `Any` after optimization) and its value.
#[test]
fn a_loop_with_several_continues_keeps_typed_gradients() {
    let src = "from anfora import grad, ops\n\ndef f(x):\n    acc = 0.0\n    for i in range(10):\n        if i == 1:\n            continue\n        elif i == 2:\n            acc = acc * x\n            continue\n        elif i == 3:\n            acc = acc + x\n            continue\n        acc = acc + ops.sin(x) * i\n    return acc\n\ndef main(x):\n    return grad(f)(x)\n";
    let args = [Arg::from(Value::Float(0.5))];
    let mut s = Session::load("m.py", src, Options::default());
    let mut optimized = String::new();
    s.compile_pipeline("main", Some(&args), &mut |view| {
        if view.stage == "optimize" {
            optimized = view.ir();
        }
    })
    .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    assert!(!optimized.contains("<Any>"), "{optimized}");
    // acc = (0 * x + x) + sin(x) * (4 + ... + 9): d/dx = 1 + 39 cos(x).
    let want = 1.0 + 39.0 * 0.5f64.cos();
    for engine in [Engine::Compiled, Engine::Reference] {
        let mut s = Session::load("m.py", src, Options::default());
        s.engine = engine;
        let got = s
            .call("main", args.to_vec(), &mut std::io::sink())
            .unwrap_or_else(|f| panic!("{}", s.render(&f)));
        assert!(
            matches!(got, Value::Float(g) if (g - want).abs() < 1e-12),
            "{}",
            repr(&got)
        );
    }
}
