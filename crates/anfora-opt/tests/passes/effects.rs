//! Effects survive optimization in their order: prints in inlined functions, effectful calls
//! whose result is unused, identical prints, assertions and raises.

use anfora_ir::Prim;

use crate::common::*;

/// The first argument of each `Print` of the entry, in evaluation order.
fn printed_heads(ir: &Ir) -> Vec<Operand> {
    let main = ir.entry();
    main.calls
        .iter()
        .filter(|c| c.ordered && c.callee == Callee::Prim(Prim::Print))
        .map(|c| c.args[0].clone())
        .collect()
}

fn s(text: &str) -> Operand {
    Operand::Const(format!("\"{text}\""))
}

#[test]
fn prints_in_inlined_functions_keep_their_order() {
    let src = "\
def a(v):
    print('a', v)
    return v + 1

def b(v):
    print('b start')
    w = a(v) * 2
    print('b end', w)
    return w

def main(x):
    print('main start')
    r = b(x) + a(x)
    print('main end')
    return r
";
    let p = pipeline(src, "main", &[m(int(1))]);
    let ir = p.optimized();
    assert_eq!(ir.graphs.len(), 1, "{}", ir.text);
    assert_eq!(
        printed_heads(ir),
        vec![
            s("main start"),
            s("b start"),
            s("a"),
            s("b end"),
            s("a"),
            s("main end")
        ],
        "{}",
        ir.text
    );
    expect(
        src,
        "main",
        &[m(int(1))],
        "6",
        "main start\nb start\na 1\nb end 4\na 1\nmain end\n",
    );
}

#[test]
fn effectful_calls_whose_result_is_unused_stay() {
    let src = "\
def log(v):
    print('log', v)
    return v

def countdown(n):
    if n > 0:
        print(n)
        countdown(n - 1)
    return None

def main(x):
    log(x)
    log(x + 1)
    y = print('direct')
    countdown(x)
    return x
";
    let p = pipeline(src, "main", &[m(int(2))]);
    let ir = p.optimized();
    assert_eq!(ir.entry().count(Prim::Print), 3, "{}", ir.text);
    ir.assert_recursion_kept(&["countdown"]);
    expect(
        src,
        "main",
        &[m(int(2))],
        "2",
        "log 2\nlog 3\ndirect\n2\n1\n",
    );
}

#[test]
fn identical_prints_are_not_merged() {
    let src = "\
def main(x):
    print(x)
    print(x)
    a = print(x)
    b = print(x)
    return a, b
";
    let mut sp = specialize(src, "main", &[m(int(5))]);
    sp.apply(anfora_opt::cse::run);
    sp.apply(anfora_opt::dce::run);
    assert_eq!(sp.ir().entry().count(Prim::Print), 4, "{}", sp.ir().text);
    let p = pipeline(src, "main", &[m(int(5))]);
    assert_eq!(
        p.optimized().entry().count(Prim::Print),
        4,
        "{}",
        p.optimized().text
    );
    expect(src, "main", &[m(int(5))], "(None, None)", "5\n5\n5\n5\n");
}

#[test]
fn assertions_in_inlined_functions_stay_in_place() {
    let src = "\
def check(v):
    assert v > 0, 'must be positive'
    return v

def big(v):
    print('checking', v)
    assert v < 10, 'too big'
    return v

def main(x):
    print('before')
    check(x)
    print('checked')
    if x > 5:
        big(x)
    return x
";
    let p = pipeline(src, "main", &[m(int(1))]);
    let ir = p.optimized();
    assert!(ir.graph_calls().is_empty(), "{}", ir.text);
    assert_eq!(ir.entry().count(Prim::Assert), 1, "{}", ir.text);
    assert_eq!(ir.count(Prim::Assert), 2, "{}", ir.text);
    expect(src, "main", &[m(int(1))], "1", "before\nchecked\n");
    expect(
        src,
        "main",
        &[m(int(7))],
        "7",
        "before\nchecked\nchecking 7\n",
    );
    expect_error(
        src,
        "main",
        &[m(int(-1))],
        "AssertionError: must be positive",
        "before\n",
    );
    expect_error(
        src,
        "main",
        &[m(int(11))],
        "AssertionError: too big",
        "before\nchecked\nchecking 11\n",
    );
}

#[test]
fn effects_in_both_branches_of_a_static_if() {
    let src = "\
def main(x, verbose):
    if verbose:
        print('verbose', x)
    else:
        print('quiet')
    print('done')
    return x
";
    let p = pipeline(src, "main", &[m(int(7)), c(anfora_ops::Value::Bool(true))]);
    let ir = p.optimized();
    ir.assert_static();
    assert_eq!(
        printed_heads(ir),
        vec![s("verbose"), s("done")],
        "{}",
        ir.text
    );
    expect(
        src,
        "main",
        &[m(int(7)), c(anfora_ops::Value::Bool(true))],
        "7",
        "verbose 7\ndone\n",
    );
    expect(
        src,
        "main",
        &[m(int(7)), c(anfora_ops::Value::Bool(false))],
        "7",
        "quiet\ndone\n",
    );
}
