//! Common-subexpression elimination on real programs. (Primitives with hidden effects, which
//! no parsed program has yet, are tested on hand-built IR in `src/cse.rs`.)

use anfora_ir::Prim;
use anfora_ops::Value;
use anfora_opt::cse;

use crate::common::*;

#[test]
fn two_identical_additions_become_one() {
    let src = "\
def main(x, y):
    a = x * y + 1
    b = x * y + 1
    return a - b + a
";
    let args = [m(int(3)), m(int(4))];
    let mut s = specialize(src, "main", &args);
    let ir = s.ir();
    assert_eq!(
        (ir.count(Prim::Mul), ir.count(Prim::Add)),
        (2, 3),
        "{}",
        ir.text
    );
    assert!(s.apply(cse::run));
    let ir = s.ir();
    assert_eq!(
        (
            ir.count(Prim::Mul),
            ir.count(Prim::Add),
            ir.count(Prim::Sub)
        ),
        (1, 2, 1),
        "{}",
        ir.text
    );
    // a - b is a - a.
    let sub = ir.entry().calls_of(Prim::Sub)[0];
    assert_eq!(sub.args[0], sub.args[1], "{}", ir.text);
    assert_eq!(s.eval(), ok("", "13"));
    assert!(!s.apply(cse::run), "a second run finds nothing");
    expect(src, "main", &args, "13", "");
}

#[test]
fn operations_on_different_constants_are_not_merged() {
    // 0.0 and -0.0, 1 and 1.0 and True are different constants (and give different results).
    // On Python floats nothing merges at all: each result is a new object, which a NaN tells
    // apart from the other (see the unit tests for constants on tensors).
    let src = "\
def main(f):
    return f * 0.0, f * -0.0, f + 1, f + 1.0, f + True, f * 0.0
";
    let args = [m(float(-2.0))];
    let mut s = specialize(src, "main", &args);
    assert!(!s.apply(cse::run));
    let ir = s.ir();
    assert_eq!(ir.count(Prim::Mul), 3, "{}", ir.text);
    assert_eq!(ir.count(Prim::Add), 3, "{}", ir.text);
    assert_eq!(s.eval(), ok("", "(-0.0, 0.0, -1.0, -1.0, -1.0, -0.0)"));
    expect(
        src,
        "main",
        &args,
        "(-0.0, 0.0, -1.0, -1.0, -1.0, -0.0)",
        "",
    );
}

#[test]
fn equal_constants_in_different_value_nodes_are_the_same_input() {
    let src = "\
def main(t):
    return t + (1, 2.5), t + (1, 2.5)
";
    let args = [m(Value::tuple(vec![int(0)]))];
    let p = pipeline(src, "main", &args);
    assert_eq!(p.infer().count(Prim::Add), 2, "{}", p.infer().text);
    assert_eq!(p.optimized().count(Prim::Add), 1, "{}", p.optimized().text);
    expect(src, "main", &args, "((0, 1, 2.5), (0, 1, 2.5))", "");
}

#[test]
fn constants_holding_tensors_are_compared_by_value_not_by_their_text() {
    // The two tuples print alike (numpy rounds to 8 digits) but hold different tensors.
    let src = "\
import anfora
from anfora import ops

P = (ops.full((2,), 0.1, anfora.float64),)
Q = (ops.full((2,), 0.1000000001, anfora.float64),)

def main(x):
    a = x + P
    b = x + Q
    return a, b
";
    let args = [m(Value::tuple(vec![int(1)]))];
    let p = pipeline(src, "main", &args);
    assert_eq!(p.optimized().count(Prim::Add), 2, "{}", p.optimized().text);
    let (o, v) = run_values(src, "main", &args);
    assert_eq!(
        o,
        ok("", "((1, Tensor([0.1, 0.1])), (1, Tensor([0.1, 0.1])))")
    );
    let tensor_of = |v: &Value, i: usize| -> Vec<f64> {
        let Value::Tuple(outer) = v else {
            panic!("a tuple")
        };
        let Value::Tuple(inner) = &outer[i] else {
            panic!("a tuple")
        };
        let Value::Tensor(t) = &inner[1] else {
            panic!("a tensor")
        };
        t.to_f64_vec()
    };
    let v = v.unwrap();
    assert_eq!(tensor_of(&v, 0), vec![0.1, 0.1]);
    assert_eq!(tensor_of(&v, 1), vec![0.1000000001, 0.1000000001]);
}

#[test]
fn identical_operations_in_different_graphs_are_not_merged() {
    // The loop body recomputes `x * y` each iteration; main's copy is another node.
    let src = "\
def main(x, y, n):
    a = x * y
    i = 0
    while i < n:
        a = a + x * y
        i = i + 1
    return a
";
    let args = [m(int(2)), m(int(3)), m(int(4))];
    let p = pipeline(src, "main", &args);
    let ir = p.optimized();
    assert_eq!(ir.entry().count(Prim::Mul), 1, "{}", ir.text);
    assert_eq!(ir.count(Prim::Mul), 2, "{}", ir.text);
    expect(src, "main", &args, "30", "");
}
