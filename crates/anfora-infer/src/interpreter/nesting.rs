//! Values that do not exist yet, which is what makes inference terminate on every program, and
//! the recursions whose results would nest without bound (E0305).
//!
//! A tuple, list or partial application holding `Bottom` is never built: Python evaluates its
//! items first, and that item has no value (a recursive call that has not returned in this
//! round of the analysis or never returns, or an operation that always raises). Where the
//! analysis carries values from round to round (a context's result, the arguments of a
//! monovariant context) such a value is stored as `Bottom`. Kept as it is, it would grow:
//! `def f(n): return (f(n),)` would give `(⊥,)`, `((⊥,),)`, ... one level deeper every round,
//! forever, because `⊥` joins with anything. Without `Bottom` inside, a stored value can only
//! rise a finite number of times above its first value, never deepen (constants become types,
//! values of different kinds or lengths join to `Any`, tensor sizes become unknown, sets of
//! functions are kept small), and there are finitely many contexts (polyvariance is bounded
//! and recursive calls are monovariant), so the fixpoint is reached. (`MAX_STEPS`, E0303,
//! stays as a safety net.)
//!
//! A stored value that stays `Bottom` because it only ever held the result of a recursion that
//! leads back to it has no finite type: it would be `((((...),),),)`. Such a function never
//! returns (CPython recurses until RecursionError); `report_unbounded` says so at the
//! recursive call once the analysis is done.

use std::collections::{HashMap, HashSet};

use anfora_ir::NodeId;
use anfora_ir::analysis::breadth_first;
use anfora_ir::codes::UNBOUNDED;
use anfora_ir::diag::Diagnostic;
use anfora_ops::abs::{Abs, CtxId, Func};

use super::Interpreter;

/// Where the analysis carries a value from round to round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Slot {
    /// The result of a context.
    Result(CtxId),
    /// Argument `i` of a monovariant context.
    Arg(CtxId, usize),
}

/// For each slot that was given a value that does not exist yet: the call that last passed
/// one (for arguments).
pub(super) type Dropped = HashMap<Slot, Option<(CtxId, NodeId)>>;

impl Interpreter<'_> {
    /// `a` as the value of `slot`: `Bottom` when it does not exist yet (remembered, for
    /// `report_unbounded`). `from` is the calling context and call node (for arguments).
    pub(super) fn settle(&mut self, slot: Slot, a: Abs, from: Option<(CtxId, NodeId)>) -> Abs {
        let settled = settled(&a);
        if settled.is_bottom() && !a.is_bottom() {
            self.dropped.insert(slot, from);
        }
        settled
    }

    /// E0305 for each slot of a context the program keeps that stays `Bottom` because what it
    /// was given holds the result of a recursion leading back to it; once per recursion.
    pub(super) fn report_unbounded(&mut self, root: CtxId) {
        let live: HashSet<CtxId> = self.live(root).into_iter().collect();
        let producers: Vec<_> = self
            .producers()
            .into_iter()
            .filter(|(_, c, _)| live.contains(c))
            .collect();
        let mut reported: HashSet<CtxId> = HashSet::new();
        for &(slot, c, (x, n)) in &producers {
            if reported.contains(&c) {
                continue;
            }
            let Some((y, call)) = self.recursion_in(x, n, c) else {
                continue;
            };
            // The other slots of the same recursion grow for the same reason: one error, which
            // names every kind of container they nest.
            let recursion: HashSet<CtxId> = self.recursion_of(c).into_iter().collect();
            let what = nesting(producers.iter().filter_map(|(_, c2, (x2, n2))| {
                recursion
                    .contains(c2)
                    .then(|| self.ctx(*x2).values.get(n2))
                    .flatten()
            }));
            reported.extend(recursion);
            self.unbounded_error(slot, what, y, call);
        }
    }

    /// For each slot that stays `Bottom` after being given a value that does not exist: its
    /// context, and the node (with the context it was computed in) that gave the value; in
    /// slot order.
    fn producers(&self) -> Vec<(Slot, CtxId, (CtxId, NodeId))> {
        let mut dropped: Vec<_> = self.dropped.iter().map(|(&s, &f)| (s, f)).collect();
        dropped.sort();
        dropped
            .into_iter()
            .filter_map(|(slot, from)| match slot {
                Slot::Result(c) if self.ctx(c).result.is_bottom() => {
                    let output = self.module.graph(self.ctx(c).graph).output?;
                    Some((slot, c, (c, output)))
                }
                Slot::Arg(t, i) if self.ctx(t).args.get(i).is_some_and(Abs::is_bottom) => {
                    let (x, n) = from?;
                    Some((slot, t, (x, *self.module.inputs(n).get(i + 1)?)))
                }
                _ => None,
            })
            .collect()
    }

    /// The call, among node `n` of context `x` and the operations it is computed from, of a
    /// recursion that never returns and leads back to context `s`.
    fn recursion_in(&self, x: CtxId, n: NodeId, s: CtxId) -> Option<(CtxId, NodeId)> {
        let graph = self.ctx(x).graph;
        if !self.module.is_apply(n) || self.module.node(n).owner != Some(graph) {
            return None;
        }
        if !holds_bottom(self.ctx(x).values.get(&n)?) {
            return None;
        }
        let recursive = self.ctx(x).calls.get(&n).is_some_and(|targets| {
            targets
                .iter()
                .any(|&t| self.ctx(t).result.is_bottom() && self.reaches(t, s))
        });
        if recursive {
            return Some((x, n));
        }
        anfora_ir::deep(|| {
            self.module.inputs(n)[1..]
                .iter()
                .find_map(|&i| self.recursion_in(x, i, s))
        })
    }

    /// Whether the calls made in context `from`, and in the contexts it calls, reach `to`.
    fn reaches(&self, from: CtxId, to: CtxId) -> bool {
        self.called_from(from).contains(&to)
    }

    /// `from` and every context its calls reach.
    fn called_from(&self, from: CtxId) -> Vec<CtxId> {
        breadth_first([from], |x| {
            self.ctx(x)
                .calls
                .values()
                .flatten()
                .copied()
                .collect::<Vec<_>>()
        })
    }

    /// The contexts of the recursion through `c`: those `c` reaches that reach `c` back.
    fn recursion_of(&self, c: CtxId) -> Vec<CtxId> {
        let reached = self.called_from(c);
        reached
            .into_iter()
            .filter(|&x| self.reaches(x, c))
            .collect()
    }

    /// E0305: `slot` nests `what` without bound through the recursive call `call` of context
    /// `at`.
    fn unbounded_error(&mut self, slot: Slot, what: &str, at: CtxId, call: NodeId) {
        let subject = match slot {
            Slot::Result(c) => {
                let function = &self.module.graph(self.ctx(c).graph).function;
                format!("the result of '{function}'")
            }
            Slot::Arg(t, i) => {
                let g = self.ctx(t).graph;
                let graph = self.module.graph(g);
                let var = self.param_label(g, i);
                if graph.kind.is_block() {
                    format!("{var} in '{}'", graph.function)
                } else {
                    format!("the argument {var} of '{}'", graph.function)
                }
            }
        };
        let (Slot::Result(c) | Slot::Arg(c, _)) = slot;
        let function = self.module.graph(self.ctx(c).graph).function.clone();
        let message = format!(
            "{subject} nests {what} without bound: CPython would recurse until RecursionError"
        );
        let d = Diagnostic::error(UNBOUNDED, message, self.module.node(call).span)
            .with_label("a recursive call that never returns")
            .with_hint(format!(
                "give '{function}' a base case, a path that returns without recursing (as \
                 `return 0 if n == 0 else (f(n - 1),)` does)"
            ));
        self.report(at, d);
    }
}

/// `a` if it exists; `Bottom` if it is a tuple or list holding `Bottom`. Of a set of functions,
/// the partial applications holding `Bottom` are dropped (the others may still be the value).
fn settled(a: &Abs) -> Abs {
    match a {
        Abs::Func(fs) if fs.iter().any(func_holds_bottom) => {
            let kept: Vec<Func> = fs
                .iter()
                .filter(|f| !func_holds_bottom(f))
                .cloned()
                .collect();
            if kept.is_empty() {
                Abs::Bottom
            } else {
                Abs::Func(kept.into())
            }
        }
        _ if holds_bottom(a) => Abs::Bottom,
        _ => a.clone(),
    }
}

/// Whether `a` is `Bottom` or holds it in a tuple, a list or the arguments of a partial
/// application (every one of a set of functions).
fn holds_bottom(a: &Abs) -> bool {
    anfora_ir::deep(|| match a {
        Abs::Bottom => true,
        Abs::Tuple(items) | Abs::List(items) => items.iter().any(holds_bottom),
        Abs::Func(fs) => fs.iter().all(func_holds_bottom),
        _ => false,
    })
}

fn func_holds_bottom(f: &Func) -> bool {
    match f {
        Func::Partial(inner, args) => func_holds_bottom(inner) || args.iter().any(holds_bottom),
        _ => false,
    }
}

/// What nests in `values`, following the items that hold `Bottom`: "tuples", "lists",
/// "tuples and lists" or "partial applications" (for the message).
fn nesting<'a>(values: impl Iterator<Item = &'a Abs>) -> &'static str {
    let (mut tuples, mut lists) = (false, false);
    for a in values {
        let mut cur = a;
        while let Abs::Tuple(items) | Abs::List(items) = cur {
            tuples |= matches!(cur, Abs::Tuple(_));
            lists |= matches!(cur, Abs::List(_));
            match items.iter().find(|x| holds_bottom(x)) {
                Some(x) => cur = x,
                None => break,
            }
        }
    }
    match (tuples, lists) {
        (true, true) => "tuples and lists",
        (false, true) => "lists",
        (true, false) => "tuples",
        // Only partial applications hold what does not exist (`settled`).
        (false, false) => "partial applications",
    }
}
