//! Custom primitives registered through the Rust API (`anfora_ir::custom::register`): their
//! inference rules, kernels and effect attributes go through the whole pipeline, and a custom
//! op marked with an effect is ordered, kept and never merged like the built-in ones.

use std::sync::{Mutex, OnceLock};

mod common;

use anfora_ir::Effects;
use anfora_ir::custom::{CustomPrimitive, RegisterError, TensorSpec, register};
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Failure, repr};
use anfora_tensor::{BinaryOp, DType, ReduceOp, Scalar, Tensor};

/// What `ops.record` saw, in order.
static RECORDED: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// How often `ops.tick` ran.
static TICKS: Mutex<i64> = Mutex::new(0);

fn same(specs: &[TensorSpec]) -> Result<TensorSpec, String> {
    let (a, b) = (&specs[0], &specs[1]);
    if a.dtype != b.dtype || a.shape != b.shape {
        return Err(format!(
            "operands must have the same dtype and shape, got {:?}{:?} and {:?}{:?}",
            a.dtype, a.shape, b.dtype, b.shape
        ));
    }
    Ok(a.clone())
}

fn add(a: &Tensor, b: &Tensor) -> Result<Tensor, String> {
    Tensor::binary(BinaryOp::Add, a, b).map_err(|e| e.to_string())
}

/// Registers the test primitives once per process.
fn setup() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let none = Effects::default();
        // Pure: x + 2y.
        register(CustomPrimitive {
            name: "add_twice".into(),
            params: vec!["x".into(), "y".into()],
            effects: none,
            written_refs: 0,
            infer: Box::new(same),
            bprop: None,
            kernel: Box::new(|t| Ok(vec![add(&add(&t[0], &t[1])?, &t[1])?])),
        })
        .unwrap();
        // Memory: p += x, returns the old value of p.
        register(CustomPrimitive {
            name: "fetch_add".into(),
            params: vec!["p".into(), "x".into()],
            effects: Effects { mem: true, ..none },
            written_refs: 1,
            infer: Box::new(same),
            bprop: None,
            kernel: Box::new(|t| Ok(vec![add(&t[0], &t[1])?, t[0].clone()])),
        })
        .unwrap();
        // IO: records the sum of its argument, returns it unchanged.
        register(CustomPrimitive {
            name: "record".into(),
            params: vec!["x".into()],
            effects: Effects { io: true, ..none },
            written_refs: 0,
            infer: Box::new(|s| Ok(s[0].clone())),
            bprop: None,
            kernel: Box::new(|t| {
                let sum =
                    Tensor::reduce(ReduceOp::Sum, &t[0], None, false).map_err(|e| e.to_string())?;
                RECORDED.lock().unwrap().push(sum.to_str());
                Ok(vec![t[0].clone()])
            }),
        })
        .unwrap();
        // Hidden state: x + (number of earlier calls).
        register(CustomPrimitive {
            name: "tick".into(),
            params: vec!["x".into()],
            effects: Effects {
                hidden: true,
                ..none
            },
            written_refs: 0,
            infer: Box::new(|s| Ok(s[0].clone())),
            bprop: None,
            kernel: Box::new(|t| {
                let mut n = TICKS.lock().unwrap();
                let c = Tensor::scalar(Scalar::Int(*n), t[0].dtype()).map_err(|e| e.to_string())?;
                *n += 1;
                Ok(vec![add(&t[0], &c)?])
            }),
        })
        .unwrap();
    });
}

/// A session with the test primitives registered.
fn session(src: &str, engine: Engine) -> anfora_session::Session {
    setup();
    common::session(src, engine)
}

fn run(src: &str, engine: Engine, args: Vec<Value>) -> (String, String) {
    common::run(&mut session(src, engine), args)
}

fn both(src: &str, args: Vec<Value>) -> (String, String) {
    setup();
    common::both(src, args)
}

fn dump(src: &str, stage: &str, args: Vec<Value>) -> String {
    setup();
    common::dump(src, stage, args)
}

fn ones(n: usize) -> Value {
    Value::Tensor(Tensor::ones(&[n], DType::F32).unwrap())
}

#[test]
fn a_pure_custom_op_is_inferred_run_and_bound_by_keyword() {
    let src = "\
from anfora import ops

def main(x):
    y = ops.add_twice(x, y=x * 3)
    return y, ops.add_twice(x, x) + 0
";
    assert_eq!(
        both(src, vec![ones(2)]).1,
        "(Tensor([7., 7.], dtype=float32), Tensor([3., 3.], dtype=float32))"
    );
    // Its rule gives the result's dtype and shape to the rest of the program.
    let ir = dump(src, "infer", vec![ones(2)]);
    assert!(ir.contains("add_twice"), "{ir}");
    assert!(ir.contains("<Tensor[Float32], (2,)>"), "{ir}");
}

#[test]
fn a_custom_rule_error_is_a_compile_error_at_the_call() {
    let src = "\
from anfora import ops

def main(x):
    return ops.add_twice(x, ops.ones((3,)))
";
    let mut s = session(src, Engine::Compiled);
    match s.call("main", vec![Arg::from(ones(2))], &mut std::io::sink()) {
        Err(f @ Failure::Compile(_)) => {
            let text = s.render(&f);
            assert!(
                text.contains("ops.add_twice: operands must have the same"),
                "{text}"
            );
            assert!(text.contains("m.py:4:12"), "{text}");
        }
        Err(other) => panic!("expected a compile error, got {}", s.render(&other)),
        Ok(v) => panic!("expected a compile error, got {}", repr(&v)),
    }
}

#[test]
fn a_custom_memory_op_is_ordered_with_reads_and_writes() {
    let src = "\
import anfora
from anfora import ops

w = anfora.Parameter(ops.zeros((2,)), name='w')

def bump(x):
    return ops.fetch_add(w, x)

def main(x, n):
    a = w + 0
    old = ops.fetch_add(w, x)
    b = w + 0
    ops.fetch_add(w, x)
    ops.fetch_add(w, x)
    i = 0
    while i < n:
        bump(x)
        i = i + 1
    return a, old, b, w + 0
";
    // Both unused identical calls ran (neither merged nor dropped), the loop ran n times, and
    // every read saw the writes before it.
    let (_, out) = both(src, vec![ones(2), Value::Int(3)]);
    assert_eq!(
        out,
        "(Tensor([0., 0.], dtype=float32), Tensor([0., 0.], dtype=float32), Tensor([1., 1.], dtype=float32), Tensor([6., 6.], dtype=float32))"
    );
    let ir = dump(src, "auto_monad", vec![ones(2), Value::Int(3)]);
    assert!(ir.contains("fetch_add(%para.w, %para1_x, "), "{ir}");
    assert!(ir.contains("# SideEffect: { memory"), "{ir}");
}

#[test]
fn a_custom_io_op_sees_the_parameter_at_its_point_and_is_never_dropped() {
    let src = "\
import anfora
from anfora import ops

v = anfora.Parameter(ops.ones((3,)), name='v')

def main(x):
    ops.record(v)
    ops.assign(v, x * 5)
    ops.record(v)
    ops.record(v)
    return 0
";
    for engine in [Engine::Compiled, Engine::Reference] {
        RECORDED.lock().unwrap().clear();
        run(src, engine, vec![ones(3)]);
        assert_eq!(
            *RECORDED.lock().unwrap(),
            ["3.0", "15.0", "15.0"],
            "{engine:?}"
        );
    }
}

#[test]
fn a_custom_hidden_op_is_never_merged() {
    let src = "\
from anfora import ops

def main(x):
    return ops.tick(x) - ops.tick(x)
";
    let ir = dump(src, "optimize", vec![ones(1)]);
    assert_eq!(ir.matches("= tick(").count(), 2, "{ir}");
    // Consecutive calls see consecutive counts, in evaluation order.
    let (_, out) = run(src, Engine::Compiled, vec![ones(1)]);
    assert_eq!(out, "Tensor([-1.], dtype=float32)");
}

#[test]
fn custom_op_arguments_must_be_tensors_and_parameters() {
    let src = "\
from anfora import ops

def main(x):
    return ops.fetch_add(x, x)
";
    let mut s = session(src, Engine::Compiled);
    let f = s
        .call("main", vec![Arg::from(ones(2))], &mut std::io::sink())
        .unwrap_err();
    let text = s.render(&f);
    assert!(
        text.contains("ops.fetch_add() writes a Parameter, but argument 1 is"),
        "{text}"
    );
    let src = "\
from anfora import ops

def main(x):
    return ops.record(3)
";
    let mut s = session(src, Engine::Reference);
    let f = s
        .call("main", vec![Arg::from(ones(2))], &mut std::io::sink())
        .unwrap_err();
    let text = s.render(&f);
    assert!(
        text.contains("ops.record() takes tensors, got int"),
        "{text}"
    );
}

#[test]
fn registration_checks_names_and_attributes() {
    setup();
    let make = |name: &str, effects: Effects, written_refs: usize| CustomPrimitive {
        name: name.into(),
        params: vec!["p".into()],
        effects,
        written_refs,
        infer: Box::new(|s| Ok(s[0].clone())),
        bprop: None,
        kernel: Box::new(|t| Ok(vec![t[0].clone()])),
    };
    let none = Effects::default();
    assert_eq!(
        register(make("add", none, 0)),
        Err(RegisterError::Duplicate("add".into()))
    );
    assert_eq!(
        register(make("record", none, 0)),
        Err(RegisterError::Duplicate("record".into()))
    );
    assert_eq!(
        register(make("not an identifier", none, 0)),
        Err(RegisterError::BadName("not an identifier".into()))
    );
    assert_eq!(
        register(make("writes", none, 1)),
        Err(RegisterError::WritesWithoutMem("writes".into()))
    );
    assert!(matches!(
        register(make("writes2", Effects { mem: true, ..none }, 2)),
        Err(RegisterError::TooFewParams { .. })
    ));
    let mut noisy = make(
        "noisy",
        Effects {
            hidden: true,
            ..none
        },
        0,
    );
    noisy.bprop = Some(Box::new(|xs, _, _| Ok(xs.to_vec())));
    assert_eq!(
        register(noisy),
        Err(RegisterError::BpropWithEffects("noisy".into()))
    );
    let p = anfora_ir::Prim::op("fetch_add").unwrap();
    assert!(p.effects().mem && p.takes_ref(0) && !p.takes_ref(1));
    assert_eq!(p.written_refs(), 1);
    assert_eq!(p.python_name(), "ops.fetch_add");
    assert!(!anfora_ir::Prim::op("tick").unwrap().is_pure());
    assert!(anfora_ir::Prim::op("add_twice").unwrap().is_pure());
}
