//! The compile cache: keyed by function and abstract signature, with explanations of every
//! recompilation and a bounded size.

use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Session, repr};
use anfora_tensor::Tensor;

const SRC: &str = "def f(x, n):\n    return x * n\n\ndef g(k):\n    return k + 1\n";

fn call(s: &mut Session, entry: &str, args: Vec<Arg>) -> String {
    let v = s
        .call(entry, args, &mut std::io::sink())
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    repr(&v)
}

fn tensor(n: usize) -> Value {
    Value::Tensor(Tensor::from_f32(vec![1.0; n], &[n]).unwrap())
}

#[test]
fn a_new_signature_compiles_and_says_why() {
    let mut s = Session::load("m.py", SRC, Options::default());
    assert_eq!(
        call(&mut s, "f", vec![tensor(2).into(), Value::Int(3).into()]),
        "Tensor([3., 3.], dtype=float32)"
    );
    assert_eq!(
        s.last_explanation(),
        Some("compiling 'f' for (<Tensor[Float32], (2,)>, <Int64, 3>): first call")
    );
    // Same signature: cached, nothing to explain.
    call(&mut s, "f", vec![tensor(2).into(), Value::Int(3).into()]);
    assert_eq!(s.last_explanation(), None);
    assert!(
        s.last_compiled().is_none(),
        "a cached call compiles nothing"
    );
    // A different Python number is a different constant.
    assert_eq!(
        call(&mut s, "f", vec![tensor(2).into(), Value::Int(4).into()]),
        "Tensor([4., 4.], dtype=float32)"
    );
    assert_eq!(
        s.last_explanation(),
        Some(
            "recompiling 'f': argument 2 ('n') changed from <Int64, 3> to <Int64, 4>; Python numbers are compile-time constants: mark the argument mutable to compile once for any value"
        )
    );
    // A different tensor shape.
    call(&mut s, "f", vec![tensor(5).into(), Value::Int(4).into()]);
    assert_eq!(
        s.last_explanation(),
        Some(
            "recompiling 'f': argument 1 ('x') changed from <Tensor[Float32], (2,)> to <Tensor[Float32], (5,)>"
        )
    );
    // A different type.
    call(
        &mut s,
        "f",
        vec![tensor(5).into(), Value::Float(0.5).into()],
    );
    let why = s.last_explanation().unwrap();
    assert!(
        why.starts_with(
            "recompiling 'f': argument 2 ('n') changed from <Int64, 4> to <Float64, 0.5>"
        ),
        "{why}"
    );
}

#[test]
fn mutable_numbers_compile_once_for_every_value() {
    let mut s = Session::load("m.py", SRC, Options::default());
    for k in 0..20 {
        assert_eq!(
            call(&mut s, "g", vec![Arg::mutable(Value::Int(k))]),
            (k + 1).to_string()
        );
        if k == 0 {
            assert_eq!(
                s.last_explanation(),
                Some("compiling 'g' for (<Int64>): first call")
            );
        } else {
            assert_eq!(
                s.last_explanation(),
                None,
                "value {k} reused the compilation"
            );
        }
    }
    assert!(s.take_warnings().is_empty());
}

#[test]
fn the_cache_is_bounded_and_warns_once() {
    let mut s = Session::load("m.py", SRC, Options::default());
    s.max_signatures = 4;
    for k in 0..4 {
        call(&mut s, "g", vec![Value::Int(k).into()]);
    }
    assert!(s.take_warnings().is_empty(), "within the bound");
    for k in 4..10 {
        call(&mut s, "g", vec![Value::Int(k).into()]);
    }
    let warnings = s.take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(
        warnings[0],
        "warning: 'g' has been compiled for more than 4 different argument signatures; Python numbers are compile-time constants, so a number that changes on every call compiles again each time: mark such arguments mutable"
    );
    // The most recent signatures are kept; the oldest were evicted and compile again.
    call(&mut s, "g", vec![Value::Int(9).into()]);
    assert_eq!(s.last_explanation(), None);
    call(&mut s, "g", vec![Value::Int(0).into()]);
    assert!(s.last_explanation().unwrap().starts_with("recompiling 'g'"));
    // Another function has its own bound.
    call(&mut s, "f", vec![tensor(1).into(), Value::Int(1).into()]);
    assert!(s.take_warnings().is_empty());
}

#[test]
fn timings_cover_every_stage() {
    let mut s = Session::load("m.py", SRC, Options::default());
    call(&mut s, "g", vec![Value::Int(1).into()]);
    assert!(
        s.last_run_time().is_none(),
        "runs are timed only when asked"
    );
    s.time_runs = true;
    call(&mut s, "g", vec![Value::Int(2).into()]);
    let stages: Vec<&str> = s
        .last_compiled()
        .unwrap()
        .timings
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(
        stages,
        [
            "parse",
            "resolve",
            "grad",
            "infer",
            "auto_monad",
            "optimize",
            "lower"
        ]
    );
    assert!(s.last_run_time().is_some());
}
