//! Control-flow cleanups on a unit's code: branches and jumps that lead to a plain jump go to
//! its target directly (the stubs a `Switch` lowers to), and code no path reaches is removed.

use crate::program::{Instr, Unit};

/// Where control ends up from `pc` after following plain jumps (no moves).
fn final_target(code: &[Instr], mut pc: u32) -> u32 {
    for _ in 0..code.len() {
        match code.get(pc as usize) {
            Some(Instr::Jump {
                target,
                moves,
                call: None,
            }) if moves.is_empty() && *target != pc => pc = *target,
            _ => break,
        }
    }
    pc
}

pub fn simplify(unit: &mut Unit) {
    let n = unit.code.len();
    for pc in 0..n {
        let mut targets = Vec::new();
        unit.code[pc].targets(|t| targets.push(t));
        let threaded: Vec<u32> = targets
            .iter()
            .map(|&t| final_target(&unit.code, t))
            .collect();
        let mut k = 0;
        unit.code[pc].targets_mut(|t| {
            *t = threaded[k];
            k += 1;
        });
    }
    // Reachability from the entry.
    let mut reached = vec![false; n];
    let mut stack = vec![0u32];
    while let Some(pc) = stack.pop() {
        let Some(seen) = reached.get_mut(pc as usize) else {
            continue;
        };
        if *seen {
            continue;
        }
        *seen = true;
        unit.code[pc as usize].successors(pc, |s| stack.push(s));
    }
    if reached.iter().all(|&r| r) {
        return;
    }
    unit.labels.retain(|(pc, _)| reached[*pc as usize]);
    let unreached: Vec<bool> = reached.iter().map(|r| !r).collect();
    remove(unit, &unreached);
}

/// Deletes the instructions marked in `drop` (no remaining jump may target one), fixing
/// jump targets and labels.
pub fn remove(unit: &mut Unit, drop: &[bool]) {
    let n = unit.code.len();
    if !drop.iter().any(|&d| d) {
        return;
    }
    let mut new_pc = vec![0u32; n + 1];
    let mut next = 0;
    for pc in 0..n {
        new_pc[pc] = next;
        next += u32::from(!drop[pc]);
    }
    new_pc[n] = next;
    let old = std::mem::take(&mut unit.code);
    unit.code = old
        .into_iter()
        .zip(drop)
        .filter(|(_, d)| !**d)
        .map(|(mut i, _)| {
            i.targets_mut(|t| *t = new_pc[*t as usize]);
            i
        })
        .collect();
    // A label whose first instruction was removed names the next one that remains.
    for (pc, _) in &mut unit.labels {
        *pc = new_pc[*pc as usize];
    }
}
