//! Register liveness over a unit's control-flow graph, and what it buys:
//! * the last read of a register becomes a move ([`Opnd::Take`]), so buffers are released
//!   right after their last use and a uniquely owned tensor can be updated in place;
//! * values that are never read, or that die on one edge of a branch, are cleared there;
//! * moves into label parameters that are never read are removed.

use crate::program::{Instr, Opnd, Reg, Unit};

#[derive(Clone, PartialEq, Eq)]
struct Set(Vec<u64>);

impl Set {
    fn new(n: usize) -> Set {
        Set(vec![0; n.div_ceil(64)])
    }
    fn has(&self, r: Reg) -> bool {
        self.0[r as usize / 64] >> (r % 64) & 1 == 1
    }
    fn add(&mut self, r: Reg) {
        self.0[r as usize / 64] |= 1 << (r % 64);
    }
    fn remove(&mut self, r: Reg) {
        self.0[r as usize / 64] &= !(1 << (r % 64));
    }
    fn union(&mut self, o: &Set) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    fn iter(&self) -> impl Iterator<Item = Reg> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64u32)
                .filter(move |b| bits >> b & 1 == 1)
                .map(move |b| w as u32 * 64 + b)
        })
    }
}

/// Live-in and live-out sets of every instruction.
fn liveness(unit: &Unit) -> (Vec<Set>, Vec<Set>) {
    let n = unit.code.len();
    let regs = unit.n_regs as usize;
    let mut live_in = vec![Set::new(regs); n];
    let mut live_out = vec![Set::new(regs); n];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            let instr = &unit.code[pc];
            let mut out = Set::new(regs);
            instr.successors(pc as u32, |s| {
                if (s as usize) < n {
                    out.union(&live_in[s as usize]);
                }
            });
            let mut inn = out.clone();
            instr.defs(|r| inn.remove(r));
            instr.uses(|r| inn.add(r));
            if inn != live_in[pc] || out != live_out[pc] {
                live_in[pc] = inn;
                live_out[pc] = out;
                changed = true;
            }
        }
    }
    (live_in, live_out)
}

/// Rewrites `unit` with moves on last reads and clears of dead values.
pub fn optimize(unit: &mut Unit) {
    let (live_in, _) = liveness(unit);
    // Moves into registers nobody reads afterwards.
    for pc in 0..unit.code.len() {
        if let Instr::Jump { target, moves, .. } = &mut unit.code[pc]
            && let Some(live) = live_in.get(*target as usize)
        {
            let kept: Vec<(Reg, Opnd)> = moves
                .iter()
                .copied()
                .filter(|(d, _)| live.has(*d))
                .collect();
            if kept.len() != moves.len() {
                *moves = kept.into();
            }
        }
    }
    let (live_in, live_out) = liveness(unit);
    let n = unit.code.len();
    let mut drops_after: Vec<Vec<Reg>> = vec![Vec::new(); n];
    for pc in 0..n {
        let out = &live_out[pc];
        let instr = &mut unit.code[pc];
        let mut defs = Vec::new();
        instr.defs(|r| defs.push(r));
        // Last reads: the final occurrence of a register that is dead afterwards.
        let mut ops: Vec<Opnd> = Vec::new();
        instr.operands(|o| ops.push(*o));
        let mut take = vec![false; ops.len()];
        let mut seen: Vec<Reg> = Vec::new();
        for (i, o) in ops.iter().enumerate().rev() {
            if let Opnd::Reg(r) = *o
                && !seen.contains(&r)
            {
                seen.push(r);
                take[i] = !out.has(r) || defs.contains(&r);
            }
        }
        let mut i = 0;
        instr.operands_mut(|o| {
            if let (true, Opnd::Reg(r)) = (take[i], *o) {
                *o = Opnd::Take(r);
            }
            i += 1;
        });
        match instr {
            Instr::Branch(b) => {
                let dead = |target: u32| -> Box<[Reg]> {
                    out.iter()
                        .filter(|&r| !live_in[target as usize].has(r))
                        .collect()
                };
                b.kill_then = dead(b.then_pc);
                b.kill_else = dead(b.else_pc);
            }
            Instr::Jump { .. } | Instr::Drop { .. } => {}
            _ => {
                for d in defs {
                    if !out.has(d) {
                        drops_after[pc].push(d);
                    }
                }
            }
        }
    }
    // Parameters and captures nobody reads are released on entry.
    let entry_dead: Vec<Reg> = (0..unit.n_params + unit.n_captures)
        .filter(|&r| n == 0 || !live_in[0].has(r))
        .collect();
    if entry_dead.is_empty() && drops_after.iter().all(Vec::is_empty) {
        return;
    }
    let prologue = usize::from(!entry_dead.is_empty());
    let mut new_pc = vec![0u32; n + 1];
    let mut next = prologue as u32;
    for pc in 0..n {
        new_pc[pc] = next;
        next += 1 + u32::from(!drops_after[pc].is_empty());
    }
    new_pc[n] = next;
    let old = std::mem::take(&mut unit.code);
    let mut code = Vec::with_capacity(next as usize);
    if prologue == 1 {
        code.push(Instr::Drop {
            regs: entry_dead.into(),
        });
    }
    for (pc, mut instr) in old.into_iter().enumerate() {
        instr.targets_mut(|t| *t = new_pc[*t as usize]);
        code.push(instr);
        if !drops_after[pc].is_empty() {
            code.push(Instr::Drop {
                regs: std::mem::take(&mut drops_after[pc]).into(),
            });
        }
    }
    for (pc, _) in &mut unit.labels {
        *pc = new_pc[*pc as usize];
    }
    unit.code = code;
}
