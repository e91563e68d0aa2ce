//! Programs that could break the passes: recursion, mutual recursion, long call chains,
//! functions used as values and called, tuples returned from inlined functions, keyword and
//! default arguments, functions returning their parameter or nothing.

use anfora_ir::Prim;

use crate::common::*;

#[test]
fn recursive_functions_are_not_inlined() {
    let src = "\
def helper(v):
    return v - 1

def fact(n):
    if n <= 1:
        return 1
    return n * fact(helper(n))

def main(x):
    return fact(x) + 1
";
    let p = pipeline(src, "main", &[m(int(5))]);
    let ir = p.optimized();
    // Inference may give the outermost call its own (non-recursive, so inlined)
    // specialization; the recursive one stays a graph, called from the code.
    ir.assert_recursion_kept(&["fact"]);
    // helper is inlined into fact's recursive branch.
    assert!(
        ir.graph_calls().iter().all(|g| !g.starts_with("helper")),
        "{}",
        ir.text
    );
    let outs = run_many(
        src,
        "main",
        &[vec![m(int(5))], vec![m(int(1))], vec![m(int(10))]],
    );
    assert_eq!(outs, vec![ok("", "121"), ok("", "2"), ok("", "3628801")]);
    // With a constant argument, inference may specialize `fact` for each value (5, 4, ..., 1),
    // leaving no recursive graph: then inlining unrolls the recursion completely. Whatever
    // recursion inference leaves, the optimizer keeps.
    let p = pipeline(src, "main", &[c(int(5))]);
    let ir = p.optimized();
    if p.infer().graphs.iter().any(|g| g.recursive) {
        ir.assert_recursion_kept(&["fact"]);
    } else {
        assert_eq!(ir.graphs.len(), 1, "{}", ir.text);
        assert_eq!(
            ir.entry().prims(),
            vec![Prim::Mul, Prim::Add],
            "{}",
            ir.text
        );
    }
    expect(src, "main", &[c(int(5))], "121", "");
}

#[test]
fn mutually_recursive_functions_are_not_inlined() {
    let src = "\
def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)

def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)

def main(x):
    return is_even(x), is_odd(x)
";
    let p = pipeline(src, "main", &[m(int(7))]);
    let ir = p.optimized();
    ir.assert_recursion_kept(&["is_even", "is_odd"]);
    let outs = run_many(
        src,
        "main",
        &[vec![m(int(7))], vec![m(int(0))], vec![m(int(10))]],
    );
    assert_eq!(
        outs,
        vec![
            ok("", "(False, True)"),
            ok("", "(True, False)"),
            ok("", "(True, False)")
        ]
    );
}

/// `f0(v) = f1(v) + 1`, ..., `f{depth}(v) = v`.
fn chain(depth: usize) -> String {
    let mut src = String::new();
    for k in 0..depth {
        src += &format!("def f{k}(v):\n    return f{}(v) + 1\n\n", k + 1);
    }
    src += &format!("def f{depth}(v):\n    return v\n\ndef main(x):\n    return f0(x)\n");
    src
}

#[test]
fn a_chain_of_thirty_calls_is_inlined_completely() {
    let src = chain(30);
    let p = pipeline(&src, "main", &[m(int(1))]);
    let ir = p.optimized();
    assert_eq!(ir.graphs.len(), 1, "{}", ir.text);
    assert_eq!(ir.entry().count(Prim::Add), 30, "{}", ir.text);
    expect(&src, "main", &[m(int(1))], "31", "");
}

#[test]
fn a_chain_of_five_hundred_calls_compiles_and_runs() {
    let src = chain(500);
    let p = pipeline(&src, "main", &[m(int(1))]);
    let ir = p.optimized();
    // The optimizer stops after a few rounds; each round halves the chain.
    assert!(ir.graph_calls().len() < 500 / 16, "{}", ir.text);
    expect(&src, "main", &[m(int(1))], "501", "");
}

#[test]
fn a_function_passed_as_a_value_and_called_directly() {
    let src = "\
def sq(v):
    return v * v

def apply(f, v):
    return f(v)

def main(x):
    return apply(sq, x) + sq(x)
";
    let p = pipeline(src, "main", &[m(int(3))]);
    let ir = p.optimized();
    ir.assert_static();
    // Both inlined copies of `sq` compute x * x: CSE keeps one.
    assert_eq!(
        ir.entry().prims(),
        vec![Prim::Mul, Prim::Add],
        "{}",
        ir.text
    );
    expect(src, "main", &[m(int(3))], "18", "");
}

#[test]
fn tuples_returned_from_inlined_functions() {
    let src = "\
def stats(a, b):
    return (a + b, a - b), a * b

def main(x, y):
    (s, d), p = stats(x, y)
    t = stats(y, x)
    return s * d + p, t[0][1], t
";
    let args = [m(int(5)), m(int(3))];
    let p = pipeline(src, "main", &args);
    let ir = p.optimized();
    ir.assert_static();
    for prim in [Prim::Unpack, Prim::TupleGetItem, Prim::GetItem] {
        assert_eq!(ir.count(prim), 0, "no {prim:?}:\n{}", ir.text);
    }
    // Left: the tuples of t and the returned tuple.
    assert_eq!(ir.count(Prim::MakeTuple), 3, "{}", ir.text);
    expect(src, "main", &args, "(31, -2, ((8, -2), 15))", "");
}

#[test]
fn keyword_and_default_arguments() {
    let src = "\
def scale(v, factor=2, *, offset=0):
    return v * factor + offset

def main(x):
    return scale(x), scale(x, 3), scale(x, offset=1), scale(factor=4, v=x, offset=-1)
";
    let p = pipeline(src, "main", &[m(int(5))]);
    let ir = p.optimized();
    ir.assert_static();
    expect(src, "main", &[m(int(5))], "(10, 15, 11, 19)", "");
}

#[test]
fn functions_returning_a_parameter_a_constant_or_nothing() {
    let src = "\
def ident(v):
    return v

def nothing():
    pass

def seven():
    return 7

def main(x):
    nothing()
    return ident(ident(x)) + seven(), nothing() is None
";
    let p = pipeline(src, "main", &[m(int(5))]);
    let ir = p.optimized();
    ir.assert_static();
    assert_eq!(
        ir.entry().prims(),
        vec![Prim::Add, Prim::MakeTuple],
        "{}",
        ir.text
    );
    assert_eq!(
        ir.entry().calls[0].args,
        vec![Operand::Param("x".into()), Operand::Const("I64(7)".into())],
        "{}",
        ir.text
    );
    expect(src, "main", &[m(int(5))], "(12, True)", "");
}

#[test]
fn a_lambda_made_and_called_inside_a_loop() {
    let src = "\
def main(n):
    t = 0
    i = 0
    while i < n:
        j = i * 2
        f = lambda v, d: v + d
        t = f(t, j)
        i = i + 1
    return t
";
    let p = pipeline(src, "main", &[m(int(4))]);
    let ir = p.optimized();
    // The lambda is inlined into the loop body.
    assert!(
        ir.graphs
            .iter()
            .all(|g| g.kind != anfora_ir::GraphKind::Lambda),
        "{}",
        ir.text
    );
    let outs = run_many(src, "main", &[vec![m(int(4))], vec![m(int(0))]]);
    assert_eq!(outs, vec![ok("", "12"), ok("", "0")]);
}
