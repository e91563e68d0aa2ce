//! Indexes behind the recursion checks of calls, so that a check costs about the logarithm of
//! the depth of the call chain instead of the depth: a chain of n functions, each calling the
//! previous, is evaluated (and re-evaluated once each) in near-linear time instead of
//! quadratic time.

use std::collections::HashMap;

use anfora_ir::GraphId;
use anfora_ops::abs::CtxId;

/// A graph and the context its free variables are read from: what a recursive call repeats.
pub(super) type Instance = (GraphId, Option<CtxId>);

#[derive(Default)]
pub(super) struct Ancestry {
    /// For each context, jump pointers up its chain of first calls (`origin`): `jumps[x][j]`
    /// is the context 2^j calls up. An origin points to an older context and never changes
    /// once set, so a pointer stays valid; a chain that grows later at its root end (a
    /// context evaluated before any call reached it) leaves shorter tables below, and the
    /// walk takes single steps there.
    jumps: Vec<Vec<CtxId>>,
    /// The contexts of each instance, oldest first.
    by_instance: HashMap<Instance, Vec<CtxId>>,
    /// How many times each context, and each instance, is being evaluated now.
    running: HashMap<CtxId, usize>,
    running_instances: HashMap<Instance, usize>,
}

impl Ancestry {
    /// Records context `c` (just created) of `instance`.
    pub(super) fn created(&mut self, c: CtxId, instance: Instance) {
        debug_assert_eq!(
            c.0 as usize,
            self.jumps.len(),
            "contexts are numbered in order"
        );
        self.jumps.push(Vec::new());
        self.by_instance.entry(instance).or_default().push(c);
    }

    /// Records that the first call reaching `c` came from `origin` (an older context).
    pub(super) fn set_origin(&mut self, c: CtxId, origin: CtxId) {
        let mut table = vec![origin];
        // jumps[c][j + 1] = jumps[jumps[c][j]][j], as far as the tables above reach now.
        while let Some(&up) = self.jumps[table[table.len() - 1].0 as usize].get(table.len() - 1) {
            table.push(up);
        }
        self.jumps[c.0 as usize] = table;
    }

    pub(super) fn enter(&mut self, c: CtxId, instance: Instance) {
        *self.running.entry(c).or_insert(0) += 1;
        *self.running_instances.entry(instance).or_insert(0) += 1;
    }

    pub(super) fn leave(&mut self, c: CtxId, instance: Instance) {
        decrement(&mut self.running, c);
        decrement(&mut self.running_instances, instance);
    }

    /// Whether context `c` is being evaluated.
    pub(super) fn is_running(&self, c: CtxId) -> bool {
        self.running.contains_key(&c)
    }

    /// Whether some context of `instance` is being evaluated.
    pub(super) fn instance_running(&self, instance: Instance) -> bool {
        self.running_instances.contains_key(&instance)
    }

    /// Whether `c` or a context on its chain of first calls is a context of `instance`.
    pub(super) fn on_chain(&self, c: CtxId, instance: Instance) -> bool {
        self.by_instance
            .get(&instance)
            .is_some_and(|ctxs| ctxs.iter().any(|&y| y <= c && self.reaches(c, y)))
    }

    /// Whether `y` is `c` or on its chain of first calls. Contexts on a chain get older
    /// (smaller) at each step, so the walk takes the farthest jump that does not pass `y`.
    fn reaches(&self, c: CtxId, y: CtxId) -> bool {
        let mut cur = c;
        loop {
            if cur == y {
                return true;
            }
            if cur < y {
                return false;
            }
            match self.jumps[cur.0 as usize].iter().rev().find(|&&u| u >= y) {
                Some(&u) => cur = u,
                None => return false,
            }
        }
    }
}

fn decrement<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, usize>, k: K) {
    if let Some(n) = counts.get_mut(&k) {
        *n -= 1;
        if *n == 0 {
            counts.remove(&k);
        }
    }
}
