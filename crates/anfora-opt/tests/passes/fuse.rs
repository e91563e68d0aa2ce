//! Elementwise fusion on real programs. (Primitives with hidden effects are tested on
//! hand-built IR in `src/fuse.rs`.)

use anfora_ir::Prim;

use crate::common::*;

fn fused_prims(ir: &Ir) -> Vec<Vec<Prim>> {
    ir.fused().iter().map(|g| g.prims()).collect()
}

#[test]
fn a_chain_of_elementwise_operations_becomes_one_fused_call() {
    let src = "\
from anfora import ops

def main(x, y):
    a = x * 2.0
    b = a + y
    c = ops.abs(b)
    d = ops.maximum(c, 5.5)
    return d
";
    let args = [c(lit("[1.0, -3.0]")), c(lit("[3.0, 0.25]"))];
    let p = pipeline(src, "main", &args);
    let ir = p.first("fuse");
    assert_eq!(
        fused_prims(ir),
        vec![vec![Prim::Mul, Prim::Add, Prim::Abs, Prim::Maximum]],
        "{}",
        ir.text
    );
    let fused = ir.fused()[0];
    assert_eq!(fused.params.len(), 2, "x and y:\n{}", ir.text);
    let main = ir.entry();
    assert_eq!(main.calls.len(), 1, "{}", ir.text);
    assert_eq!(main.calls[0].callee, Callee::Graph(fused.name.clone()));
    assert_eq!(
        main.calls[0].args,
        vec![Operand::Param("x".into()), Operand::Param("y".into())],
        "{}",
        ir.text
    );
    expect(
        src,
        "main",
        &args,
        "Tensor([5.5 , 5.75], dtype=float32)",
        "",
    );
}

#[test]
fn a_value_used_twice_ends_a_chain() {
    let src = "\
from anfora import ops

def main(x, k):
    a = x * 2.0
    b = a + 1.0
    print(b)
    c = b * k
    d = ops.relu(c)
    return d
";
    let args = [m(lit("[1.0, -3.0]")), m(float(0.5))];
    let ir = pipeline(src, "main", &args).optimized().clone();
    let mut chains = fused_prims(&ir);
    chains.sort();
    assert_eq!(
        chains,
        vec![vec![Prim::Mul, Prim::Add], vec![Prim::Mul, Prim::Relu]],
        "{}",
        ir.text
    );
    let main = ir.entry();
    // The IO state's plumbing (UpdateState after print, Depend on the output) aside.
    let calls: Vec<_> = main
        .calls
        .iter()
        .filter(|c| !matches!(c.callee, Callee::Prim(Prim::UpdateState | Prim::Depend)))
        .collect();
    assert_eq!(calls.len(), 3, "{}", ir.text);
    assert!(matches!(calls[0].callee, Callee::Graph(_)));
    assert_eq!(calls[1].callee, Callee::Prim(Prim::Print));
    assert_eq!(
        calls[1].args[0],
        Operand::Call(0),
        "print shows b:\n{}",
        ir.text
    );
    assert!(matches!(calls[2].callee, Callee::Graph(_)));
    // The second chain reads b and the scalar k.
    assert_eq!(
        calls[2].args,
        vec![Operand::Call(0), Operand::Param("k".into())],
        "{}",
        ir.text
    );
    expect(
        src,
        "main",
        &args,
        "Tensor([1.5, 0. ], dtype=float32)",
        "[ 3. -5.]\n",
    );
}

#[test]
fn integer_floor_division_and_modulo_are_not_fused() {
    let src = "\
def main(x, y):
    a = x + 1
    b = a // y
    c = b % 3
    d = c * 2
    return d
";
    let args = [m(lit("[5, 7]")), m(lit("[2, 3]"))];
    let ir = pipeline(src, "main", &args).optimized().clone();
    assert!(
        fused_prims(&ir)
            .iter()
            .flatten()
            .all(|&p| !matches!(p, Prim::FloorDiv | Prim::Mod)),
        "{}",
        ir.text
    );
    assert_eq!(
        ir.entry().prims(),
        vec![Prim::Add, Prim::FloorDiv, Prim::Mod, Prim::Mul],
        "{}",
        ir.text
    );
    expect(src, "main", &args, "Tensor([0, 4])", "");
    expect_error(
        src,
        "main",
        &[m(lit("[5, 7]")), m(lit("[2, 0]"))],
        "ZeroDivisionError: integer division or modulo by zero",
        "",
    );
}

#[test]
fn float_floor_division_and_modulo_are_fused() {
    let src = "\
def main(x, k):
    a = x * 2.0
    b = a // 3.0
    c = b % 2.0
    e = c - k
    return e
";
    let args = [m(lit("[1.0, 2.5, -4.0]")), m(float(0.5))];
    let ir = pipeline(src, "main", &args).optimized().clone();
    assert_eq!(
        fused_prims(&ir),
        vec![vec![Prim::Mul, Prim::FloorDiv, Prim::Mod, Prim::Sub]],
        "{}",
        ir.text
    );
    expect(
        src,
        "main",
        &args,
        "Tensor([-0.5,  0.5,  0.5], dtype=float32)",
        "",
    );
}

#[test]
fn integer_powers_are_not_fused_float_powers_are() {
    let src = "\
def main(x, y):
    a = x + 1
    b = a ** y
    c = b * 2
    return c
";
    let ints = [m(lit("[1, 2]")), m(lit("[2, 3]"))];
    let ir = pipeline(src, "main", &ints).optimized().clone();
    assert!(
        fused_prims(&ir).iter().flatten().all(|&p| p != Prim::Pow),
        "{}",
        ir.text
    );
    assert_eq!(ir.entry().count(Prim::Pow), 1, "{}", ir.text);
    expect(src, "main", &ints, "Tensor([ 8, 54])", "");
    let o = run_both(src, "main", &[m(lit("[1, 2]")), m(lit("[2, -1]"))]);
    assert!(
        matches!(&o.result, Err(e) if e.starts_with("ValueError")),
        "{o:?}"
    );

    let floats = [m(lit("[1.0, 2.0]")), m(lit("[2.0, 3.0]"))];
    let ir = pipeline(src, "main", &floats).optimized().clone();
    assert_eq!(
        fused_prims(&ir),
        vec![vec![Prim::Add, Prim::Pow, Prim::Mul]],
        "{}",
        ir.text
    );
    expect(
        src,
        "main",
        &floats,
        "Tensor([ 8., 54.], dtype=float32)",
        "",
    );
}

#[test]
fn operations_with_several_inputs_fuse_into_one_graph() {
    let src = "\
from anfora import ops

def main(x):
    return ops.where(x > 0.0, x, -x)
";
    let args = [m(lit("[1.0, -3.0]"))];
    let ir = pipeline(src, "main", &args).optimized().clone();
    assert_eq!(
        fused_prims(&ir),
        vec![vec![Prim::Gt, Prim::Neg, Prim::Where]],
        "{}",
        ir.text
    );
    assert_eq!(
        ir.fused()[0].params.len(),
        1,
        "x is passed once:\n{}",
        ir.text
    );
    expect(src, "main", &args, "Tensor([1., 3.], dtype=float32)", "");
}

#[test]
fn a_value_a_branch_reads_is_not_fused_away() {
    let src = "\
def main(x, flag):
    a = x * 2.0
    b = a + 1.0
    c = b * 3.0
    if flag > 0:
        return a
    return c
";
    let args = [m(lit("[1.0, -3.0]")), m(int(1))];
    let ir = pipeline(src, "main", &args).optimized().clone();
    assert_eq!(
        fused_prims(&ir),
        vec![vec![Prim::Add, Prim::Mul]],
        "{}",
        ir.text
    );
    assert_eq!(
        ir.entry().prims()[0],
        Prim::Mul,
        "a stays in main:\n{}",
        ir.text
    );
    let outs = run_many(
        src,
        "main",
        &[args.to_vec(), vec![m(lit("[1.0, -3.0]")), m(int(0))]],
    );
    assert_eq!(
        outs,
        vec![
            ok("", "Tensor([ 2., -6.], dtype=float32)"),
            ok("", "Tensor([  9., -15.], dtype=float32)")
        ]
    );
}

#[test]
fn a_chain_of_squares_fuses_in_linear_time() {
    // Each `x * x` reads its operand twice: a search that followed both edges would visit
    // 2^60 paths here and never finish.
    let mut src = String::from("def main(x):\n");
    for _ in 0..60 {
        src.push_str("    x = x * x\n");
    }
    src.push_str("    return x\n");
    let args = [c(lit("[1.0, -1.0]"))];
    let p = pipeline(&src, "main", &args);
    let ir = p.first("fuse");
    assert_eq!(fused_prims(ir), vec![vec![Prim::Mul; 60]], "{}", ir.text);
    expect(&src, "main", &args, "Tensor([1., 1.], dtype=float32)", "");
}
