//! Inlining: small or once-used non-recursive graphs are replaced by their bodies; calls in tail
//! position merge the callee into the caller.

use anfora_ir::{GraphKind, Prim};
use anfora_opt::inline;

use crate::common::*;

/// A function of 50 additions: too big to inline at every call site.
fn big() -> String {
    let mut s = String::from("def big(v):\n");
    for k in 1..=50 {
        s += &format!("    v = v + {k}\n");
    }
    s + "    return v\n"
}

#[test]
fn small_functions_are_inlined_at_every_call_site() {
    let src = "def sq(v):\n    return v * v + 1\n\ndef main(x):\n    return sq(x) + sq(x + 1) + sq(2 * x)\n";
    let mut s = specialize(src, "main", &[m(int(3))]);
    let before = s.ir();
    assert_eq!(before.entry().graph_calls().len(), 3, "{}", before.text);
    assert_eq!(s.eval(), ok("", "64"));
    assert!(s.apply(inline::run));
    let after = s.ir();
    assert!(after.entry().graph_calls().is_empty(), "{}", after.text);
    assert_eq!(after.graphs.len(), 1, "{}", after.text);
    // Three copies of `v * v` and `2 * x`; three `+ 1` and the two additions of main.
    assert_eq!(after.entry().count(Prim::Mul), 4, "{}", after.text);
    assert_eq!(after.entry().count(Prim::Add), 6, "{}", after.text);
    assert_eq!(s.eval(), ok("", "64"));
    expect(src, "main", &[m(int(3))], "64", "");
    expect(src, "main", &[c(int(-2))], "24", "");
}

#[test]
fn a_large_function_called_once_is_inlined() {
    let src = big() + "\ndef main(x):\n    return big(x) * 2\n";
    let mut s = specialize(&src, "main", &[m(int(3))]);
    assert_eq!(s.ir().entry().graph_calls(), vec!["big".to_string()]);
    assert!(s.apply(inline::run));
    let ir = s.ir();
    assert!(ir.entry().graph_calls().is_empty(), "{}", ir.text);
    assert_eq!(ir.entry().count(Prim::Add), 50, "{}", ir.text);
    assert_eq!(s.eval(), ok("", "2556"));
    let p = pipeline(&src, "main", &[m(int(3))]);
    assert_eq!(p.optimized().graphs.len(), 1, "{}", p.optimized().text);
    expect(&src, "main", &[m(int(3))], "2556", "");
}

#[test]
fn a_large_function_called_twice_stays_a_call() {
    let src = big() + "\ndef main(x):\n    return big(x) + big(x + 1)\n";
    let p = pipeline(&src, "main", &[m(int(3))]);
    let ir = p.optimized();
    assert_eq!(
        ir.entry().graph_calls(),
        vec!["big".to_string(), "big".to_string()],
        "{}",
        ir.text
    );
    assert_eq!(ir.graph("big").count(Prim::Add), 50, "{}", ir.text);
    expect(&src, "main", &[m(int(3))], "2557", "");
}

#[test]
fn blocks_of_a_static_if_merge_into_one_graph() {
    let src = "\
def main(x, flag):
    y = x * 2
    if flag:
        y = y + 1
    else:
        y = y - 1
    z = y * 3
    return z
";
    let mut s = specialize(src, "main", &[m(int(3)), c(Value::Bool(true))]);
    let infer = s.ir();
    assert!(
        infer.graphs.iter().any(|g| g.kind == GraphKind::TrueBranch)
            && infer.graphs.iter().any(|g| g.kind == GraphKind::Join),
        "the branch and the join are graphs after infer:\n{}",
        infer.text
    );
    assert_eq!(
        infer.entry().output,
        Operand::Call(1),
        "main ends with a tail call:\n{}",
        infer.text
    );
    assert!(!infer.entry().calls[1].ordered);
    s.apply_to_fixpoint(&[inline::run]);
    let ir = s.ir();
    assert_eq!(ir.graphs.len(), 1, "{}", ir.text);
    let main = ir.entry();
    assert_eq!(
        main.prims(),
        vec![Prim::Mul, Prim::Add, Prim::Mul],
        "{}",
        ir.text
    );
    assert!(main.calls.iter().all(|c| c.ordered), "{}", ir.text);
    assert_eq!(main.output, Operand::Call(2), "{}", ir.text);
    assert_eq!(s.eval(), ok("", "21"));
    expect(src, "main", &[m(int(3)), c(Value::Bool(true))], "21", "");
    expect(src, "main", &[m(int(3)), c(Value::Bool(false))], "15", "");
}

#[test]
fn a_closure_returning_a_value_of_its_caller_is_evaluated_once() {
    // `get` returns a node of `main`: inlining must not put that node in main's evaluation
    // order a second time.
    let src = "\
def main(x):
    y = x * 2
    def get():
        return y
    return get() + 1
";
    let mut s = specialize(src, "main", &[m(int(3))]);
    assert!(s.apply(inline::run));
    let ir = s.ir();
    assert_eq!(ir.graphs.len(), 1, "{}", ir.text);
    assert_eq!(
        ir.entry().prims(),
        vec![Prim::Mul, Prim::Add],
        "{}",
        ir.text
    );
    assert_eq!(s.eval(), ok("", "7"));
    expect(src, "main", &[m(int(3))], "7", "");

    let src = "\
def main(x):
    y = print('once')
    def get():
        return y
    get()
    return get() is None
";
    let mut s = specialize(src, "main", &[m(int(3))]);
    assert!(s.apply(inline::run));
    assert_eq!(s.ir().entry().count(Prim::Print), 1);
    assert_eq!(s.eval(), ok("once\n", "True"));
    expect(src, "main", &[m(int(3))], "True", "once\n");
}

#[test]
fn nested_closures_are_copied_with_the_function_inlined() {
    let src = "\
def outer(a):
    def mid(b):
        def inner(c):
            return a + b + c
        return inner(b * 10)
    return mid(a + 1)

def main(x):
    return outer(x) * 100 + outer(x * 2)
";
    let mut s = specialize(src, "main", &[m(int(1))]);
    assert_eq!(s.eval(), ok("", "2335"));
    // One round inlines `outer` twice, with a copy of `mid` and `inner` for each.
    assert!(s.apply(inline::run));
    let ir = s.ir();
    let mids: Vec<&str> = ir
        .graphs
        .iter()
        .filter(|g| g.name.starts_with("mid"))
        .map(|g| g.name.as_str())
        .collect();
    assert_eq!(mids.len(), 2, "{}", ir.text);
    assert_ne!(mids[0], mids[1]);
    assert_eq!(s.eval(), ok("", "2335"));
    s.apply_to_fixpoint(&[inline::run]);
    let ir = s.ir();
    assert_eq!(ir.graphs.len(), 1, "{}", ir.text);
    assert_eq!(ir.entry().count(Prim::Add), 2 * 3 + 1, "{}", ir.text);
    assert_eq!(s.eval(), ok("", "2335"));
    let p = pipeline(src, "main", &[m(int(1))]);
    p.optimized().assert_static();
    expect(src, "main", &[m(int(1))], "2335", "");
}

#[test]
fn functions_with_loops_are_inlined_with_copies_of_their_loop_graphs() {
    let src = "\
def sumto(n):
    t = 0
    i = 0
    while i < n:
        t = t + i
        i = i + 1
    return t

def main(n):
    return sumto(n) * 1000 + sumto(n + 2)
";
    let p = pipeline(src, "main", &[m(int(4))]);
    let ir = p.optimized();
    assert!(
        ir.graphs
            .iter()
            .all(|g| g.kind != GraphKind::Function || g.name == "main"),
        "{}",
        ir.text
    );
    let headers = ir.of_kind(GraphKind::LoopHeader);
    assert_eq!(headers.len(), 2, "one loop per inlined copy:\n{}", ir.text);
    assert_ne!(headers[0].name, headers[1].name);
    assert!(headers.iter().all(|h| h.recursive), "{}", ir.text);
    let outs = run_many(
        src,
        "main",
        &[vec![m(int(4))], vec![m(int(0))], vec![m(int(10))]],
    );
    assert_eq!(outs, vec![ok("", "6015"), ok("", "1"), ok("", "45066")]);
}

#[test]
fn a_function_used_as_a_value_and_called_is_inlined_where_called() {
    let src = "\
def sq(v):
    return v * v

def neg(v):
    return -v

def main(x):
    fs = (sq, neg)
    f = fs[0] if x > 0 else fs[1]
    return f(x) + sq(x + 1)
";
    let p = pipeline(src, "main", &[m(int(3))]);
    let ir = p.optimized();
    // The join after the conditional expression is inlined into each branch, where `f` is
    // known: each branch calls its function directly, and that call is inlined too.
    assert_eq!(ir.entry().count(Prim::Switch), 1, "{}", ir.text);
    assert_eq!(
        ir.dynamic_calls(),
        1,
        "only the call of the Switch's result:\n{}",
        ir.text
    );
    assert!(ir.graph_calls().is_empty(), "{}", ir.text);
    assert_eq!(
        ir.of_kind(GraphKind::TrueBranch)[0].prims(),
        vec![Prim::Mul, Prim::Add, Prim::Mul, Prim::Add],
        "{}",
        ir.text
    );
    assert_eq!(
        ir.of_kind(GraphKind::FalseBranch)[0].prims(),
        vec![Prim::Neg, Prim::Add, Prim::Mul, Prim::Add],
        "{}",
        ir.text
    );
    let outs = run_many(src, "main", &[vec![m(int(3))], vec![m(int(-3))]]);
    assert_eq!(outs, vec![ok("", "25"), ok("", "7")]);
}

#[test]
fn inlining_preserves_tracebacks_errors_and_their_place() {
    let src = "\
def check(v):
    print('check', v)
    return 10 // v

def main(x):
    print('start')
    r = check(x)
    print('end')
    return r
";
    let p = pipeline(src, "main", &[m(int(0))]);
    assert_eq!(p.optimized().graphs.len(), 1, "{}", p.optimized().text);
    expect_error(
        src,
        "main",
        &[m(int(0))],
        "ZeroDivisionError: integer division or modulo by zero",
        "start\ncheck 0\n",
    );
    expect(src, "main", &[m(int(3))], "3", "start\ncheck 3\nend\n");
}

use anfora_ops::Value;
