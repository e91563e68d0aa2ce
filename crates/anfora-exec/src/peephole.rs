//! Peephole rewrites after liveness, each saving a dispatch per execution:
//! * a comparison whose only use is the branch right after it is fused into the branch;
//! * a value computed right before a jump and only moved into a label parameter is computed
//!   into the parameter directly;
//! * jumps to the next instruction disappear.

use crate::cfg;
use crate::program::{Instr, Opnd};

pub fn run(unit: &mut crate::Unit) {
    let n = unit.code.len();
    let mut targeted = vec![false; n + 1];
    for i in &unit.code {
        i.targets_mut_free(|t| targeted[t as usize] = true);
    }
    let mut remove = vec![false; n];
    for pc in 0..n.saturating_sub(1) {
        if targeted[pc + 1] {
            continue;
        }
        let (head, tail) = unit.code.split_at_mut(pc + 1);
        let (def, next) = (&mut head[pc], &mut tail[0]);
        match (def, next) {
            (
                Instr::Bin {
                    dst, op, a, b, at, ..
                },
                Instr::Branch {
                    cond,
                    compare: c @ None,
                    ..
                },
            ) if *cond == Opnd::Take(*dst) && op.is_comparison() => {
                *cond = *a;
                *c = Some((*op, *b, *at));
                remove[pc] = true;
            }
            (def, Instr::Jump { moves, .. }) => {
                let Some(dst) = def_reg(def) else { continue };
                let Some(k) = moves.iter().position(|(_, s)| *s == Opnd::Take(dst)) else {
                    continue;
                };
                let param = moves[k].0;
                // Other moves read the parameter's old value: it must not change before them.
                let read_by_others = moves.iter().enumerate().any(|(j, (_, s))| {
                    j != k && matches!(s, Opnd::Reg(r) | Opnd::Take(r) if *r == param)
                });
                if read_by_others {
                    continue;
                }
                set_def_reg(def, param);
                let mut kept = moves.to_vec();
                kept.remove(k);
                *moves = kept.into();
            }
            _ => {}
        }
    }
    // Jumps to the next instruction.
    for (pc, i) in unit.code.iter().enumerate() {
        if let Instr::Jump { target, moves } = i
            && *target as usize == pc + 1
            && moves.is_empty()
        {
            remove[pc] = true;
        }
    }
    cfg::remove(unit, &remove);
}

fn def_reg(i: &Instr) -> Option<u32> {
    match i {
        Instr::Bin { dst, .. } | Instr::Prim { dst, .. } | Instr::Fused { dst, .. } => Some(*dst),
        _ => None,
    }
}

fn set_def_reg(i: &mut Instr, r: u32) {
    if let Instr::Bin { dst, .. } | Instr::Prim { dst, .. } | Instr::Fused { dst, .. } = i {
        *dst = r;
    }
}
