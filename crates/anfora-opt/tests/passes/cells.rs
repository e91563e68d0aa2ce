//! Cells back to values: where inlining brings every reader and writer of a cell into one
//! graph, the optimized program holds no cell at all; where a closure still shares it (a
//! loop's graphs, a closure kept as a value), the cell stays. Values against Python's.

use crate::common::*;

fn holds_cells(text: &str) -> bool {
    ["MakeCell", "CellGet", "CellSet"]
        .iter()
        .any(|p| text.contains(&format!("{p}(")))
}

#[test]
fn cells_every_access_of_which_is_inlined_become_values() {
    // The lambda escapes into a tuple, so `k` is a cell; the call through the tuple is
    // inlined, and the reads and writes are then plain values in program order.
    let src = "\
def main(x):
    k = x + 1
    fs = (lambda v: v * k,)
    a = fs[0](10)
    k = k * 3
    b = fs[0](10)
    return a + b
";
    let p = pipeline(src, "main", &[m(int(2))]);
    let ir = p.optimized();
    assert!(!holds_cells(&ir.text), "{}", ir.text);
    // The auto-monad dump still shows them, on the memory chain.
    let monad = &p.first("auto_monad").text;
    assert!(monad.contains("CellSet("), "{monad}");
    // Python: a = 10 * 3, b = 10 * 9.
    expect(src, "main", &[m(int(2))], "120", "");
}

#[test]
fn cells_shared_across_graphs_stay() {
    // Read after the loop by closures collected in it: the loop's graphs write the cell.
    let src = "\
def main(n):
    fs = ()
    for i in range(n):
        fs = fs + (lambda: i,)
    return fs[0]() + fs[-1]()
";
    let p = pipeline(src, "main", &[m(int(3))]);
    assert!(holds_cells(&p.optimized().text), "{}", p.optimized().text);
    expect(src, "main", &[m(int(3))], "4", "");
}
