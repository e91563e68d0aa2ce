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

/// The unit's basic blocks and the registers live on entry to each. Sets are kept per block,
/// not per instruction: a function of n straight-line statements has n instructions and n
/// registers, and a set per instruction would take n² bits.
struct Liveness {
    /// The first instruction of each block, in order; a block ends where the next begins.
    starts: Vec<usize>,
    /// The block of each instruction.
    block_at: Vec<u32>,
    live_in: Vec<Set>,
}

impl Liveness {
    fn new(unit: &Unit) -> Liveness {
        let n = unit.code.len();
        let mut leader = vec![false; n + 1];
        leader[0] = true;
        for (pc, instr) in unit.code.iter().enumerate() {
            // Every target of a jump or branch begins a block, even the next instruction,
            // and so does whatever follows an instruction that does not fall through.
            let jumps = matches!(instr, Instr::Jump { .. } | Instr::Branch(_));
            let mut falls_through = !jumps;
            let mut any = false;
            instr.successors(pc as u32, |s| {
                any = true;
                if jumps || s as usize != pc + 1 {
                    falls_through = false;
                    leader[(s as usize).min(n)] = true;
                }
            });
            if !falls_through || !any {
                leader[pc + 1] = true;
            }
        }
        for &(pc, _) in &unit.labels {
            leader[(pc as usize).min(n)] = true;
        }
        let starts: Vec<usize> = (0..n).filter(|&pc| leader[pc]).collect();
        let mut block_at = vec![0u32; n];
        for (b, range) in block_ranges(&starts, n).enumerate() {
            block_at[range].fill(b as u32);
        }
        let mut lv = Liveness {
            live_in: vec![Set::new(unit.n_regs as usize); starts.len()],
            starts,
            block_at,
        };
        lv.solve(unit);
        lv
    }

    fn solve(&mut self, unit: &Unit) {
        let n = unit.code.len();
        let ranges: Vec<_> = block_ranges(&self.starts, n).collect();
        let mut changed = true;
        while changed {
            changed = false;
            for (b, range) in ranges.iter().enumerate().rev() {
                let mut cur = self.out_of(unit, range.end - 1);
                for pc in range.clone().rev() {
                    let instr = &unit.code[pc];
                    instr.defs(|r| cur.remove(r));
                    instr.uses(|r| cur.add(r));
                }
                if cur != self.live_in[b] {
                    self.live_in[b] = cur;
                    changed = true;
                }
            }
        }
    }

    /// The registers live on entry to `pc`, the first instruction of a block (as every jump
    /// target is).
    fn at_entry(&self, pc: u32) -> &Set {
        let b = self.block_at[pc as usize] as usize;
        debug_assert_eq!(self.starts[b], pc as usize, "a block's first instruction");
        &self.live_in[b]
    }

    /// The registers live after `last`, the last instruction of a block.
    fn out_of(&self, unit: &Unit, last: usize) -> Set {
        let mut out = Set::new(unit.n_regs as usize);
        unit.code[last].successors(last as u32, |s| {
            if (s as usize) < unit.code.len() {
                out.union(self.at_entry(s));
            }
        });
        out
    }
}

/// The instructions of each block.
fn block_ranges(starts: &[usize], n: usize) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    starts
        .iter()
        .enumerate()
        .map(move |(b, &s)| s..starts.get(b + 1).copied().unwrap_or(n))
}

/// Rewrites `unit` with moves on last reads and clears of dead values.
pub fn optimize(unit: &mut Unit) {
    let lv = Liveness::new(unit);
    // Moves into registers nobody reads afterwards.
    for pc in 0..unit.code.len() {
        if let Instr::Jump { target, moves, .. } = &mut unit.code[pc]
            && (*target as usize) < lv.block_at.len()
        {
            let live = lv.at_entry(*target);
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
    let lv = Liveness::new(unit);
    let n = unit.code.len();
    let mut drops_after: Vec<Vec<Reg>> = vec![Vec::new(); n];
    let ranges: Vec<_> = block_ranges(&lv.starts, n).collect();
    for range in ranges {
        // Walk the block backward from what is live after it: `cur` is each instruction's
        // live-out in turn.
        let mut cur = lv.out_of(unit, range.end - 1);
        for pc in range.rev() {
            let instr = &mut unit.code[pc];
            let mut uses = Vec::new();
            instr.uses(|r| uses.push(r));
            drops_after[pc] = mark_last_reads(instr, &cur, &lv);
            instr.defs(|r| cur.remove(r));
            for r in uses {
                cur.add(r);
            }
        }
    }
    // Parameters and captures nobody reads are released on entry.
    let entry_dead: Vec<Reg> = (0..unit.n_params + unit.n_captures)
        .filter(|&r| n == 0 || !lv.at_entry(0).has(r))
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

/// Marks the last reads of `instr`, whose live-out is `out`, as moves, and gives branches the
/// registers that die on each edge; returns the registers it defines that nobody reads.
fn mark_last_reads(instr: &mut Instr, out: &Set, lv: &Liveness) -> Vec<Reg> {
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
                    .filter(|&r| !lv.at_entry(target).has(r))
                    .collect()
            };
            b.kill_then = dead(b.then_pc);
            b.kill_else = dead(b.else_pc);
            Vec::new()
        }
        Instr::Jump { .. } | Instr::Drop { .. } => Vec::new(),
        _ => defs.into_iter().filter(|&d| !out.has(d)).collect(),
    }
}
