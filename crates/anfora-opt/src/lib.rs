//! anfora's optimizer: passes over specialized graphs, each a module with one entry point.
//!
//! | pass | does |
//! |---|---|
//! | [`inline`] | replaces calls of small or once-used, non-recursive graphs by their bodies (merging blocks) |
//! | [`cells`] | a closure cell that one graph alone reads and writes (after inlining) becomes plain values |
//! | [`adjoint`] | gradient helpers of the grad stage to plain operations, decided by abstracts |
//! | [`simplify`] | `Switch` on constants, `Partial` calls, tuple plumbing, constant folding, `x*1`-style arithmetic |
//! | [`states`] | `UpdateState`/`Depend`/`Load` chains that order nothing are shortened |
//! | [`cse`] | merges identical pure computations (never random ones) |
//! | [`dce`] | removes pure computations (and partial applications) nobody uses and that cannot raise |
//! | [`gemm`] | a bias added to a product of matrices becomes the product's accumulator |
//! | [`fuse`] | turns chains of elementwise tensor operations into one fused graph |
//! | [`schedule`] | starts each overlapped all-reduce as soon as its operands are computed |
//!
//! Every pass keeps each graph's evaluation order (effects and errors stay where they were)
//! and the abstracts of the nodes it creates. [`optimize`] runs them to a fixpoint.

pub mod adjoint;
pub mod cells;
pub mod cse;
pub mod dce;
pub mod fuse;
pub mod gemm;
pub mod inline;
mod rewrite;
pub mod schedule;
pub mod simplify;
pub mod states;
#[cfg(test)]
mod testing;

use std::collections::HashMap;

use anfora_ir::{GraphId, Module, NodeId};
use anfora_ops::Abs;

/// The specialized graphs being optimized: the module, the entry graph and the abstract of
/// every node.
pub struct Graphs<'a> {
    pub module: &'a mut Module,
    pub entry: GraphId,
    pub abstracts: &'a mut HashMap<NodeId, Abs>,
}

impl Graphs<'_> {
    pub fn abs(&self, n: NodeId) -> Abs {
        if let Some(a) = self.abstracts.get(&n) {
            return a.clone();
        }
        match self.module.constant(n) {
            Some(c) => anfora_ops::abs::from_value(&anfora_ops::value::from_const(c, &mut |_| {
                anfora_ops::Value::None
            })),
            None => Abs::Any,
        }
    }

    /// The graphs reachable from the entry.
    pub fn graphs(&self) -> Vec<GraphId> {
        anfora_ir::analysis::reachable(self.module, &[self.entry])
            .into_iter()
            .map(|(g, _)| g)
            .collect()
    }

    fn check(&self, after: &str) {
        if cfg!(debug_assertions) {
            anfora_ir::verify::assert_valid(self.module, &[self.entry], after);
        }
    }
}

/// Position `i` (negative counts from the end) in a sequence of `len` items, if in range.
pub(crate) fn item_index(i: i64, len: usize) -> Option<usize> {
    let j = if i < 0 { i + len as i64 } else { i };
    usize::try_from(j).ok().filter(|&j| j < len)
}

/// The indices `[start:stop:step]` picks from a sequence of `len` items, as Python's slices do
/// (`None` for a zero step, which raises when the program runs).
pub(crate) fn slice_indices(
    len: usize,
    start: Option<i64>,
    stop: Option<i64>,
    step: Option<i64>,
) -> Option<Vec<usize>> {
    let n = len as i64;
    let step = step.unwrap_or(1);
    if step == 0 {
        return None;
    }
    let bound = |v: Option<i64>, default: i64, lo: i64, hi: i64| match v {
        None => default,
        Some(v) => (if v < 0 { v + n } else { v }).clamp(lo, hi),
    };
    let (mut i, stop) = if step > 0 {
        (bound(start, 0, 0, n), bound(stop, n, 0, n))
    } else {
        (bound(start, n - 1, -1, n - 1), bound(stop, -1, -1, n - 1))
    };
    let mut out = Vec::new();
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(i as usize);
        i += step;
    }
    Some(out)
}

/// How many times each node is used (as an input or a graph's output) in the analyzed graphs.
pub(crate) fn use_counts(p: &Graphs, a: &anfora_ir::analysis::Analysis) -> HashMap<NodeId, usize> {
    let mut users: HashMap<NodeId, usize> = HashMap::new();
    for &g in &a.graphs {
        for &n in &a.nodes[g] {
            for &i in p.module.inputs(n) {
                *users.entry(i).or_insert(0) += 1;
            }
        }
        if let Some(o) = p.module.graph(g).output {
            *users.entry(o).or_insert(0) += 1;
        }
    }
    users
}

/// A pass: its name (for dumps and timings) and entry point.
pub type Pass = (&'static str, fn(&mut Graphs) -> bool);

/// The passes of the main loop, in order.
pub const PASSES: &[Pass] = &[
    ("inline", inline::run),
    ("cells", cells::run),
    ("adjoint", adjoint::run),
    ("simplify", simplify::run),
    ("states", states::run),
    ("cse", cse::run),
    ("dce", dce::run),
];

/// Rounds of [`PASSES`] before fusion: each round exposes more (an inlined bprop's tuples,
/// then its dead states), and a gradient of a gradient needs several.
const MAX_ROUNDS: usize = 16;

/// Runs the passes until nothing changes (at most [`MAX_ROUNDS`] rounds), then bias epilogues
/// and fusion. `after_pass` is
/// called after every pass that changed something (for dumps).
pub fn optimize(p: &mut Graphs, after_pass: &mut dyn FnMut(&str, &Graphs)) {
    for _round in 0..MAX_ROUNDS {
        let mut changed = false;
        for (name, pass) in PASSES {
            if pass(p) {
                changed = true;
                p.check(name);
                after_pass(name, p);
            }
        }
        if !changed {
            break;
        }
    }
    // Lowering-level rewrites on the simplified program: each leaves dead code behind.
    let mut changed = false;
    for (name, pass) in [
        ("gemm", gemm::run as fn(&mut Graphs) -> bool),
        ("fuse", fuse::run),
    ] {
        if pass(p) {
            changed = true;
            p.check(name);
            after_pass(name, p);
        }
    }
    if changed && dce::run(p) {
        p.check("dce");
        after_pass("dce", p);
    }
    // Last, on the final order.
    if schedule::run(p) {
        p.check("schedule");
        after_pass("schedule", p);
    }
}
