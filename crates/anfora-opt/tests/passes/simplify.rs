//! Simplification on real programs: tuple plumbing, arithmetic identities, `Truth` of a bool.
//! (`Switch` on constants, `Partial` calls and constant folding, which inference leaves no
//! occasion for in parsed programs, are tested on hand-built IR in `src/simplify.rs`.)

use anfora_ir::Prim;
use anfora_opt::{dce, inline, simplify};

use crate::common::*;

/// No `GetItem`/`TupleGetItem` reads an item of a `MakeTuple` anywhere.
fn no_item_of_make_tuple(ir: &Ir) {
    for g in &ir.graphs {
        for call in g
            .calls_of(Prim::TupleGetItem)
            .into_iter()
            .chain(g.calls_of(Prim::GetItem))
        {
            if let Operand::Call(i) = call.args[0] {
                assert_ne!(
                    g.calls[i].callee,
                    Callee::Prim(Prim::MakeTuple),
                    "an item of a MakeTuple:\n{}",
                    ir.text
                );
            }
        }
    }
}

#[test]
fn an_item_of_a_tuple_built_in_an_inlined_function_is_the_item_itself() {
    let src = "\
def pair(a, b):
    return (a, b)

def main(x, y):
    p = pair(x, y)
    return p[0] * 10 + p[-1]
";
    let args = [m(int(7)), m(int(2))];
    let mut s = specialize(src, "main", &args);
    assert!(s.apply(inline::run));
    let ir = s.ir();
    assert_eq!(ir.entry().count(Prim::GetItem), 2, "{}", ir.text);
    assert!(s.apply(simplify::run));
    let ir = s.ir();
    no_item_of_make_tuple(&ir);
    assert_eq!(ir.entry().count(Prim::GetItem), 0, "{}", ir.text);
    // x * 10 + y: the operands are the parameters themselves.
    let mul = ir.entry().calls_of(Prim::Mul)[0];
    assert_eq!(
        mul.args,
        vec![Operand::Param("x".into()), Operand::Const("I64(10)".into())],
        "{}",
        ir.text
    );
    assert_eq!(s.eval(), ok("", "72"));
    assert!(s.apply(dce::run));
    assert_eq!(s.ir().count(Prim::MakeTuple), 0, "{}", s.ir().text);
    assert_eq!(s.eval(), ok("", "72"));
    expect(src, "main", &args, "72", "");
}

#[test]
fn unpacking_a_returned_tuple_leaves_no_tuple() {
    let src = "\
def divmod2(a, b):
    return a // b, a % b

def main(x, y):
    q, r = divmod2(x, y)
    return q * 10 + r
";
    let args = [m(int(17)), m(int(5))];
    let p = pipeline(src, "main", &args);
    let infer = p.infer();
    assert_eq!(infer.count(Prim::Unpack), 1, "{}", infer.text);
    let ir = p.optimized();
    for prim in [
        Prim::Unpack,
        Prim::TupleGetItem,
        Prim::GetItem,
        Prim::MakeTuple,
    ] {
        assert_eq!(ir.count(prim), 0, "no {prim:?}:\n{}", ir.text);
    }
    assert_eq!(
        ir.entry().prims(),
        vec![Prim::FloorDiv, Prim::Mod, Prim::Mul, Prim::Add],
        "{}",
        ir.text
    );
    let outs = run_many(src, "main", &[args.to_vec(), vec![m(int(-17)), m(int(5))]]);
    assert_eq!(outs, vec![ok("", "32"), ok("", "-37")]);
    expect_error(
        src,
        "main",
        &[m(int(1)), m(int(0))],
        "ZeroDivisionError: integer division or modulo by zero",
        "",
    );
}

#[test]
fn an_index_out_of_range_still_raises() {
    let src = "\
def pair(a, b):
    return (a, b)

def main(x):
    p = pair(x, x)
    print('before')
    return p[2]
";
    let p = pipeline(src, "main", &[m(int(1))]);
    let ir = p.optimized();
    assert_eq!(
        ir.count(Prim::GetItem) + ir.count(Prim::TupleGetItem),
        1,
        "{}",
        ir.text
    );
    expect_error(
        src,
        "main",
        &[m(int(1))],
        "IndexError: tuple index out of range",
        "before\n",
    );
}

#[test]
fn arithmetic_identities_disappear() {
    // On Python floats they stay: each result is a new object, which a NaN tells apart from
    // its operand (`(f * 1.0,) == (f,)` is False for a NaN f).
    let src = "\
def main(i, f, t):
    a = i * 1
    b = 1 * a
    c = b + 0
    d = 0 + c
    e = d - 0
    g = f * 1.0
    h = g / 1
    k = h - 0.0
    n = -(-k)
    u = t * 1
    v = u / 1.0
    w = -(-v)
    return e, n, w
";
    let args = [m(int(5)), m(float(-0.0)), m(lit("[1.5, -0.0]"))];
    let p = pipeline(src, "main", &args);
    let infer = p.infer();
    assert_eq!(infer.count(Prim::Mul), 4, "{}", infer.text);
    let ir = p.first("simplify");
    for (prim, left) in [
        (Prim::Mul, 1),
        (Prim::Add, 0),
        (Prim::Sub, 1),
        (Prim::Div, 1),
    ] {
        assert_eq!(ir.count(prim), left, "{prim:?}:\n{}", ir.text);
    }
    let ir = p.optimized();
    let floats = vec![Prim::Mul, Prim::Div, Prim::Sub, Prim::Neg, Prim::Neg];
    assert_eq!(
        ir.entry().prims(),
        [floats, vec![Prim::MakeTuple]].concat(),
        "{}",
        ir.text
    );
    let tuple = &ir.entry().calls[5].args;
    assert_eq!(tuple[0], Operand::Param("i".into()), "{}", ir.text);
    assert_eq!(tuple[2], Operand::Param("t".into()), "{}", ir.text);
    expect(
        src,
        "main",
        &args,
        "(5, -0.0, Tensor([ 1.5, -0. ], dtype=float32))",
        "",
    );
}

#[test]
fn identities_that_would_change_the_value_stay() {
    // -0.0 + 0 and -0.0 - (-0.0) are 0.0; an int times 1.0 or divided by 1 is a float;
    // -(-i) may overflow for ints; a float32 tensor times an int tensor of ones is float64.
    let src = "\
import anfora
from anfora import ops

def main(f, i, t):
    a = f + 0
    b = f - (-0.0)
    c = -(-i)
    d = i * 1.0
    e = i / 1
    g = t * ops.ones((2,), anfora.int64)
    return a, b, c, d, e, g
";
    let args = [m(float(-0.0)), m(int(3)), m(lit("[1.5, 2.5]"))];
    let p = pipeline(src, "main", &args);
    let ir = p.optimized();
    assert_eq!(ir.count(Prim::Add), 1, "{}", ir.text);
    assert_eq!(ir.count(Prim::Sub), 1, "{}", ir.text);
    assert_eq!(ir.count(Prim::Neg), 2, "{}", ir.text);
    assert_eq!(ir.count(Prim::Mul), 2, "{}", ir.text);
    assert_eq!(ir.count(Prim::Div), 1, "{}", ir.text);
    expect(
        src,
        "main",
        &args,
        "(0.0, 0.0, 3, 3.0, 3.0, Tensor([1.5, 2.5]))",
        "",
    );
}

#[test]
fn truth_of_a_bool_is_the_bool() {
    let src = "\
def main(x, n):
    r = 0
    if n:
        r = r + 10
    if x > 0:
        r = r + 1
    return r
";
    let args = [m(int(5)), m(int(0))];
    let p = pipeline(src, "main", &args);
    let infer = p.infer();
    assert_eq!(infer.count(Prim::Truth), 2, "{}", infer.text);
    let ir = p.optimized();
    // `x > 0` is a bool already; the truth of an int stays.
    assert_eq!(ir.count(Prim::Truth), 1, "{}", ir.text);
    let truth = ir.entry().calls_of(Prim::Truth)[0];
    assert_eq!(truth.args, vec![Operand::Param("n".into())], "{}", ir.text);
    let outs = run_many(
        src,
        "main",
        &[
            args.to_vec(),
            vec![m(int(-5)), m(int(2))],
            vec![m(int(1)), m(int(-1))],
            vec![m(int(0)), m(int(0))],
        ],
    );
    assert_eq!(
        outs,
        vec![ok("", "1"), ok("", "10"), ok("", "11"), ok("", "0")]
    );
}
