//! Parse-to-IR latency: source text to verified graphs (ruff parse, SSA lowering, resolution).

use anfora_benches::{loop_with_branches, straight_line_50};
use anfora_ir::Options;
use anfora_session::Session;

fn main() {
    divan::main();
}

fn parse_to_ir(src: &str) {
    let mut s = Session::load("bench.py", src, Options::default());
    let g = s.compile("f").expect("compiles");
    divan::black_box(g);
}

#[divan::bench]
fn straight_line_50_statements(b: divan::Bencher) {
    let src = straight_line_50();
    b.bench(|| parse_to_ir(&src));
}

#[divan::bench]
fn while_loop_if_else_20_ops(b: divan::Bencher) {
    let src = loop_with_branches();
    b.bench(|| parse_to_ir(&src));
}
