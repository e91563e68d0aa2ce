//! Control flow decided at compile time leaves no control flow: after the optimize stage, a
//! program whose branches and callees are all known is one graph (plus fused graphs) with no
//! `Switch`, no `Partial` and no closure. Loops stay loops (docs/language.md: "The loop is a
//! loop in the IR, not an unrolled copy"). Control flow that depends on run-time values stays.

use anfora_ir::{GraphKind, Prim};
use anfora_ops::Value;

use crate::common::*;

/// Compiles `entry` for `args`, asserts the optimized IR has no control flow left and that
/// the program gives `value` on both engines.
fn static_program(src: &str, args: &[anfora_session::Arg], value: &str) -> Ir {
    let p = pipeline(src, "main", args);
    let ir = p.optimized().clone();
    ir.assert_static();
    expect(src, "main", args, value, "");
    ir
}

#[test]
fn if_on_a_constant_argument() {
    let src = "\
def main(x, flag):
    if flag:
        y = x * 2
    else:
        y = x - 1
    return y + 1
";
    let ir = static_program(src, &[m(int(5)), c(Value::Bool(true))], "11");
    assert_eq!(
        ir.entry().prims(),
        vec![Prim::Mul, Prim::Add],
        "{}",
        ir.text
    );
    let ir = static_program(src, &[m(int(5)), c(Value::Bool(false))], "5");
    assert_eq!(
        ir.entry().prims(),
        vec![Prim::Sub, Prim::Add],
        "{}",
        ir.text
    );
}

#[test]
fn if_on_isinstance() {
    let src = "\
def scale(v):
    if isinstance(v, float):
        return v * 0.5
    elif isinstance(v, int):
        return v // 2
    return v

def main(a, b, s):
    return scale(a), scale(b), scale(s)
";
    let ir = static_program(
        src,
        &[m(float(3.0)), m(int(7)), m(Value::str("z"))],
        "(1.5, 3, 'z')",
    );
    assert_eq!(
        ir.entry().prims(),
        vec![Prim::Mul, Prim::FloorDiv, Prim::MakeTuple],
        "{}",
        ir.text
    );
}

#[test]
fn if_on_constant_expressions_of_globals() {
    let src = "\
N = 3
MODE = 'fast'

def main(x):
    if N > 2 and MODE == 'fast':
        y = x * N
    else:
        y = x
    if len((1, 2, 3)) == 3:
        y = y + 1
    z = y if MODE == 'slow' else -y
    return z
";
    static_program(src, &[m(int(5))], "-16");
}

#[test]
fn early_returns_on_constants() {
    let src = "\
def sign(v, positive):
    if positive:
        return v
    return -v

def main(x):
    return sign(x, True) - sign(x, False)
";
    let ir = static_program(src, &[m(int(4))], "8");
    assert_eq!(
        ir.entry().prims(),
        vec![Prim::Neg, Prim::Sub],
        "{}",
        ir.text
    );
}

#[test]
fn higher_order_functions_passed_known_functions() {
    let src = "\
def apply(f, v):
    return f(v)

def twice(f, v):
    return f(f(v))

def inc(v):
    return v + 1

def main(x):
    return apply(inc, x) + twice(inc, x) + twice(lambda v: v * 3, x) + apply(abs, x)
";
    let ir = static_program(src, &[m(int(-2))], "-17");
    assert_eq!(ir.entry().count(Prim::Abs), 1, "{}", ir.text);
}

#[test]
fn closures_called_immediately_and_nested_functions() {
    let src = "\
def main(x):
    def inner():
        return x * 3
    r = inner()
    s = (lambda: x + 1)()
    def outer(y):
        def deep(z):
            return x + y + z
        return deep(y * 2)
    return r + s + outer(10)
";
    static_program(src, &[m(int(2))], "41");
}

#[test]
fn lambdas_with_defaults_and_keywords() {
    let src = "\
def main(x):
    f = lambda a, b=2: a * b
    g = lambda a, k=1: a - k
    return f(x) + f(x, b=5) + g(x, k=4) + g(a=x)
";
    static_program(src, &[m(int(3))], "22");
}

#[test]
fn closures_made_by_factories_and_composition() {
    let src = "\
def make_adder(n):
    def add(v):
        return v + n
    return add

def compose(f, g):
    return lambda v: f(g(v))

def main(x):
    h = compose(make_adder(1), make_adder(10))
    k = compose(h, lambda v: v * 2)
    return k(x)
";
    let ir = static_program(src, &[m(int(3))], "17");
    assert_eq!(
        ir.entry().prims(),
        vec![Prim::Mul, Prim::Add, Prim::Add],
        "{}",
        ir.text
    );
}

#[test]
fn closures_over_tensors_fuse_after_inlining() {
    let src = "\
from anfora import ops

def layer(w):
    return lambda v: ops.relu(v * w + 1.0)

def main(x):
    f = layer(2.0)
    g = layer(-1.0)
    return g(f(x))
";
    let ir = static_program(
        src,
        &[m(lit("[1.0, -3.0]"))],
        "Tensor([0., 1.], dtype=float32)",
    );
    assert_eq!(ir.fused().len(), 1, "{}", ir.text);
    assert_eq!(ir.fused()[0].calls.len(), 6, "{}", ir.text);
}

/// Asserts the documented shape of a program whose only control flow is loops: besides the
/// entry, only loop blocks remain; each `Switch` is the test of a loop header and chooses
/// between two graphs; no `Partial`, no call of a computed function other than a `Switch`
/// result.
fn assert_only_loops(ir: &Ir) {
    assert_eq!(ir.count(Prim::Partial), 0, "{}", ir.text);
    for g in &ir.graphs[1..] {
        assert!(
            matches!(
                g.kind,
                GraphKind::LoopHeader | GraphKind::LoopBody | GraphKind::Join | GraphKind::Fused
            ),
            "@{} is a loop block:\n{}",
            g.name,
            ir.text
        );
    }
    for g in &ir.graphs {
        let switches = g.calls_of(Prim::Switch);
        if g.kind != GraphKind::LoopHeader {
            assert!(
                switches.is_empty(),
                "a Switch outside a loop header, in @{}:\n{}",
                g.name,
                ir.text
            );
            assert!(
                g.calls.iter().all(|c| c.callee != Callee::Dynamic),
                "{}",
                ir.text
            );
            continue;
        }
        assert!(g.recursive, "{}", ir.text);
        assert_eq!(switches.len(), 1, "{}", ir.text);
        assert!(
            matches!((&switches[0].args[1], &switches[0].args[2]), (Operand::Const(a), Operand::Const(b)) if a.starts_with('@') && b.starts_with('@')),
            "{}",
            ir.text
        );
    }
    // Graph values are exactly the loops' Switch branches.
    let switch_targets = ir
        .graphs
        .iter()
        .map(|g| g.calls_of(Prim::Switch).len() * 2)
        .sum::<usize>();
    assert_eq!(
        ir.graph_values.len(),
        switch_targets,
        "{:?}:\n{}",
        ir.graph_values,
        ir.text
    );
}

#[test]
fn a_for_over_a_constant_range_stays_a_loop() {
    let src = "\
def step(t, i, x):
    return t + i * x

def main(x):
    t = 0
    for i in range(4):
        t = step(t, i, x)
    return t
";
    let args = [m(int(3))];
    let p = pipeline(src, "main", &args);
    let ir = p.optimized();
    assert_only_loops(ir);
    assert_eq!(ir.of_kind(GraphKind::LoopHeader).len(), 1, "{}", ir.text);
    // `step` is inlined into the loop body.
    assert!(
        ir.graph_calls().iter().all(|g| !g.starts_with("step")),
        "{}",
        ir.text
    );
    expect(src, "main", &args, "18", "");
    let args = [c(int(3))];
    assert_only_loops(pipeline(src, "main", &args).optimized());
    expect(src, "main", &args, "18", "");
}

#[test]
fn a_loop_over_a_constant_tuple_stays_a_loop() {
    let src = "\
def main(x):
    t = x
    for k in (1, 2, 3):
        if k > 1:
            t = t * k
    return t
";
    let args = [m(int(5))];
    let ir = pipeline(src, "main", &args).optimized().clone();
    assert_eq!(ir.of_kind(GraphKind::LoopHeader).len(), 1, "{}", ir.text);
    expect(src, "main", &args, "30", "");
}

#[test]
fn a_condition_on_a_mutable_argument_stays_a_switch() {
    let src = "\
def main(x):
    if x > 0:
        y = x * 2
    else:
        y = -x
    return y + 1
";
    let p = pipeline(src, "main", &[m(int(3))]);
    let ir = p.optimized();
    assert_eq!(ir.entry().count(Prim::Switch), 1, "{}", ir.text);
    assert_eq!(
        ir.dynamic_calls(),
        1,
        "the Switch's result is called:\n{}",
        ir.text
    );
    assert_eq!(ir.of_kind(GraphKind::TrueBranch).len(), 1, "{}", ir.text);
    assert_eq!(ir.of_kind(GraphKind::FalseBranch).len(), 1, "{}", ir.text);
    let outs = run_many(
        src,
        "main",
        &[vec![m(int(3))], vec![m(int(-3))], vec![m(int(0))]],
    );
    assert_eq!(outs, vec![ok("", "7"), ok("", "4"), ok("", "1")]);
}

#[test]
fn a_condition_mixing_constants_and_run_time_values() {
    let src = "\
def main(x, flag):
    if flag and x > 0:
        return x
    return -x
";
    // flag False decides the `if`; flag True leaves x > 0 to decide.
    let ir = pipeline(src, "main", &[m(int(3)), c(Value::Bool(false))])
        .optimized()
        .clone();
    ir.assert_static();
    expect(src, "main", &[m(int(3)), c(Value::Bool(false))], "-3", "");
    let ir = pipeline(src, "main", &[m(int(3)), c(Value::Bool(true))])
        .optimized()
        .clone();
    assert!(ir.count(Prim::Switch) >= 1, "{}", ir.text);
    expect(src, "main", &[m(int(3)), c(Value::Bool(true))], "3", "");
    expect(src, "main", &[m(int(-3)), c(Value::Bool(true))], "3", "");
}

#[test]
fn a_while_loop_on_a_mutable_argument_stays_a_loop() {
    let src = "\
def main(n):
    i = 0
    s = 0
    while i < n:
        if i % 2 == 0:
            s = s + i
        i = i + 1
    return s
";
    let p = pipeline(src, "main", &[m(int(10))]);
    let ir = p.optimized();
    assert_eq!(ir.of_kind(GraphKind::LoopHeader).len(), 1, "{}", ir.text);
    assert!(
        ir.count(Prim::Switch) >= 2,
        "the loop test and the if:\n{}",
        ir.text
    );
    let outs = run_many(
        src,
        "main",
        &[vec![m(int(10))], vec![m(int(0))], vec![m(int(5))]],
    );
    assert_eq!(outs, vec![ok("", "20"), ok("", "0"), ok("", "6")]);
}
