#![allow(dead_code)] // each test file uses part of it
//! Programs exported through the compiler, shared by the runtime's tests.

use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Session, literal_value};
use anfora_tensor::Tensor;

/// A recursive function, a `while` loop, an MLP with an `if`, and a closure, on tensors.
pub const SOURCE: &str = r#"
import anfora
from anfora import ops

W1 = ops.tensor([[0.5, -1.0, 0.25], [1.5, 0.75, -0.5]])
B1 = ops.tensor([0.1, -0.2, 0.3])
W2 = ops.tensor([[1.0, -1.0], [0.5, 2.0], [-1.5, 0.25]])

def fibonacci(n):
    if n < 1:
        return ops.zeros_like(n)
    if n < 2:
        return ops.ones_like(n)
    return fibonacci(n - 1) + fibonacci(n - 2)

def grow(x):
    i = 0
    while ops.sum(x) < 100.0:
        x = x * 2.0 + 1.0
        i += 1
    return x, i

def mlp(x):
    h = ops.relu(x @ W1 + B1)
    y = h @ W2
    if ops.sum(y) > 0.0:
        return ops.softmax(y, axis=-1), True
    return -y, False

def scaled(x):
    k = ops.sum(x)
    f = lambda v: v * k + 1.0
    return f(x), f(x * 2.0)
"#;

/// (entry, example arguments as literals)
pub const CASES: [(&str, &str); 4] = [
    ("fibonacci", "[10.0]"),
    ("grow", "[1.0, 2.0]"),
    ("mlp", "[[1.0, 2.0], [-0.5, 0.25]]"),
    ("scaled", "[1.5, -2.0, 0.5]"),
];

pub fn session() -> Session {
    Session::load("models.py", SOURCE, Options::default())
}

pub fn args(literal: &str) -> Vec<Arg> {
    vec![Arg::from(literal_value(literal).expect("a literal"))]
}

/// The model file of `entry` compiled for `literal`.
pub fn export(s: &mut Session, entry: &str, literal: &str) -> Vec<u8> {
    let c = s.compiled(entry, &args(literal)).expect("compiles");
    let names = Default::default();
    anfora_model::write_model(&s.frontend.module, c.graph, &c.abstracts, "test", &names)
        .expect("exports")
}

/// The leaves of a result, as the runtime returns them.
pub fn leaves(v: &Value, out: &mut Vec<Tensor>) {
    match v {
        Value::Tensor(t) => out.push(t.clone()),
        Value::Tuple(items) | Value::List(items) => items.iter().for_each(|i| leaves(i, out)),
        Value::Int(i) => out.push(Tensor::from_i64(vec![*i], &[]).unwrap()),
        Value::Float(f) => out.push(Tensor::from_f64(vec![*f], &[]).unwrap()),
        Value::Bool(b) => out.push(Tensor::from_bool(vec![*b], &[]).unwrap()),
        Value::None => {}
        other => panic!("unexpected result {}", other.type_name()),
    }
}

/// The input tensor of a case.
pub fn input(literal: &str) -> Tensor {
    match &literal_value(literal).expect("a literal") {
        Value::Tensor(t) => t.clone(),
        _ => panic!("not a tensor"),
    }
}
