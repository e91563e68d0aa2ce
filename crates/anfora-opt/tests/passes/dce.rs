//! Dead-code elimination on real programs: unused pure computations that cannot raise go;
//! effects and operations that may raise stay.

use anfora_ir::Prim;
use anfora_opt::dce;

use crate::common::*;

#[test]
fn unused_pure_computations_go_with_everything_only_they_use() {
    let src = "\
from anfora import ops

def main(f, t):
    a = f * 2.0
    b = a + 1.0
    c = (a, b)
    d = ops.exp(t) * 3.0
    e = -d
    return f
";
    let args = [m(float(1.5)), m(lit("[1.0, 2.0]"))];
    let mut s = specialize(src, "main", &args);
    assert_eq!(s.ir().entry().calls.len(), 6, "{}", s.ir().text);
    assert!(s.apply(dce::run));
    let ir = s.ir();
    assert!(
        ir.entry().calls.is_empty(),
        "one run removes the whole dead chain:\n{}",
        ir.text
    );
    assert_eq!(ir.entry().output, Operand::Param("f".into()));
    assert_eq!(s.eval(), ok("", "1.5"));
    assert!(!s.apply(dce::run));
    expect(src, "main", &args, "1.5", "");
}

#[test]
fn unused_operations_that_may_raise_stay() {
    let src = "\
def main(i, j, t):
    a = i + 1
    b = i // j
    c = t[j]
    return 0
";
    let p = pipeline(src, "main", &[m(int(1)), m(int(1)), m(lit("[1.0, 2.0]"))]);
    let ir = p.optimized();
    assert_eq!(
        ir.entry().prims(),
        vec![Prim::Add, Prim::FloorDiv, Prim::GetItem],
        "{}",
        ir.text
    );
    let t = || m(lit("[1.0, 2.0]"));
    expect(src, "main", &[m(int(1)), m(int(1)), t()], "0", "");
    expect_error(
        src,
        "main",
        &[m(int(1)), m(int(0)), t()],
        "ZeroDivisionError: integer division or modulo by zero",
        "",
    );
    expect_error(
        src,
        "main",
        &[m(int(1)), m(int(5)), t()],
        "IndexError: index 5 is out of bounds for axis 0 with size 2",
        "",
    );
    let o = run_both(src, "main", &[m(int(i64::MAX)), m(int(1)), t()]);
    assert!(
        matches!(&o.result, Err(e) if e.starts_with("OverflowError")),
        "{o:?}"
    );
}

#[test]
fn unused_float_arithmetic_goes_but_int_arithmetic_stays() {
    // Float operations cannot raise; int operations overflow (anfora's ints are 64-bit).
    let src = "\
def main(i, f):
    a = i * 3
    b = f * 3.0
    c = f < 2.0
    return None
";
    let args = [m(int(2)), m(float(2.0))];
    let mut s = specialize(src, "main", &args);
    assert!(s.apply(dce::run));
    let ir = s.ir();
    assert_eq!(ir.entry().prims(), vec![Prim::Mul], "{}", ir.text);
    assert_eq!(
        ir.entry().calls[0].args[0],
        Operand::Param("i".into()),
        "{}",
        ir.text
    );
    assert_eq!(s.eval(), ok("", "None"));
    expect(src, "main", &args, "None", "");
}
