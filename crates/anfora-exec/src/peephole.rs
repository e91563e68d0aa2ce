//! Peephole rewrites after liveness, each saving a dispatch per execution:
//! * a comparison whose only use is the branch right after it is fused into the branch;
//! * a value computed right before a jump and only moved into a label parameter is computed
//!   into the parameter directly;
//! * jumps to the next instruction disappear;
//! * a product (`Gemm`) whose only use is the SGD update right after it, as its gradient, is
//!   marked to run into it (`WithNext::IntoUpdate`): a training step's last weight gradient,
//!   `xᵀ @ d`, is applied to the weights by parts as they are computed;
//! * a product whose only use is the ReLU right after it is marked to run into it
//!   (`WithNext::IntoRelu`): a linear layer's activation is applied as the sums are stored;
//! * two adjacent products where the second does not read the first's result are marked to
//!   run side by side (`WithNext::SideBySide`): a backward pass through a linear layer
//!   computes `d @ Wᵀ` and `hᵀ @ d` from the same `d`, one after the other.

use crate::cfg;
use crate::program::{Instr, Opnd, WithNext};
use anfora_ir::Prim;

pub fn run(unit: &mut crate::Unit) {
    let n = unit.code.len();
    let mut targeted = vec![false; n + 1];
    for i in &unit.code {
        i.targets(|t| targeted[t as usize] = true);
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
                Instr::Branch(branch),
            ) if branch.compare.is_none()
                && branch.cond == Opnd::Take(*dst)
                && op.is_comparison() =>
            {
                branch.cond = *a;
                branch.compare = Some((*op, *b, *at));
                remove[pc] = true;
            }
            (def, Instr::Jump { moves, .. }) => {
                let Some(dst) = def_reg(def) else { continue };
                let Some(k) = moves.iter().position(|(_, s)| *s == Opnd::Take(dst)) else {
                    continue;
                };
                let param = moves[k].0;
                // Other moves read the parameter's old value: it must not change before them.
                // Nor may another move read the value itself (passed to two parameters).
                let read_by_others = moves.iter().enumerate().any(|(j, (_, s))| {
                    j != k && matches!(s, Opnd::Reg(r) | Opnd::Take(r) if *r == param || *r == dst)
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
        if let Instr::Jump {
            target,
            moves,
            call: None,
        } = i
            && *target as usize == pc + 1
            && moves.is_empty()
        {
            remove[pc] = true;
        }
    }
    cfg::remove(unit, &remove);
    products_into_updates(unit);
    products_into_relus(unit);
    pair_products(unit);
}

/// The register a product defines, for a product on the CPU backend's kernel.
fn product(i: &Instr) -> Option<u32> {
    match i {
        Instr::Prim {
            prim: Prim::Gemm,
            kernel: None,
            dst,
            ..
        } => Some(*dst),
        _ => None,
    }
}

/// Which instructions are jump targets (one more entry, for the end).
fn targets(unit: &crate::Unit) -> Vec<bool> {
    let mut targeted = vec![false; unit.code.len() + 1];
    for i in &unit.code {
        i.targets(|t| targeted[t as usize] = true);
    }
    targeted
}

/// Marks each product whose result is only the gradient operand of the SGD update right
/// after it to run into that update (see the module doc).
fn products_into_updates(unit: &mut crate::Unit) {
    let gradient = |args: &[Opnd], d: u32| args.get(1) == Some(&Opnd::Take(d));
    products_into(unit, Prim::Sgd, gradient, WithNext::IntoUpdate);
}

/// Marks each product whose result is only the operand of the ReLU right after it to run
/// into that ReLU (see the module doc).
fn products_into_relus(unit: &mut crate::Unit) {
    let alone = |args: &[Opnd], d: u32| args[..] == [Opnd::Take(d)];
    products_into(unit, Prim::Relu, alone, WithNext::IntoRelu);
}

/// Marks each product (not already joined to its neighbour) whose result is used once, by
/// the call of `prim` right after it where `takes` says where, to run `into` that call. The
/// call must not be a jump target, so that it only ever runs right after the product.
fn products_into(
    unit: &mut crate::Unit,
    prim: Prim,
    takes: fn(&[Opnd], u32) -> bool,
    into: WithNext,
) {
    let targeted = targets(unit);
    for pc in 0..unit.code.len().saturating_sub(1) {
        let (head, tail) = unit.code.split_at_mut(pc + 1);
        let (first, next) = (&mut head[pc], &tail[0]);
        let Some(d) = product(first) else { continue };
        let Instr::Prim {
            prim: p,
            kernel: None,
            args,
            ..
        } = next
        else {
            continue;
        };
        let mut uses = 0;
        next.uses(|r| uses += usize::from(r == d));
        if *p != prim || targeted[pc + 1] || uses != 1 || !takes(args, d) {
            continue;
        }
        if let Instr::Prim {
            with_next: with_next @ WithNext::Alone,
            ..
        } = first
        {
            *with_next = into;
        }
    }
}

/// Marks each `Gemm` followed by an independent `Gemm` to run with it (see the module doc).
/// The second must not be a jump target, so that it only ever runs right after the first,
/// and neither may run into an update already.
fn pair_products(unit: &mut crate::Unit) {
    let alone = |i: &Instr| {
        matches!(
            i,
            Instr::Prim {
                with_next: WithNext::Alone,
                ..
            }
        )
    };
    let n = unit.code.len();
    let targeted = targets(unit);
    let mut pc = 0;
    while pc + 1 < n {
        let (head, tail) = unit.code.split_at_mut(pc + 1);
        let (first, second) = (&mut head[pc], &tail[0]);
        let (Some(d1), Some(d2)) = (product(first), product(second)) else {
            pc += 1;
            continue;
        };
        let mut reads_first = false;
        second.uses(|r| reads_first |= r == d1);
        if reads_first || d1 == d2 || targeted[pc + 1] || !alone(first) || !alone(second) {
            pc += 1;
            continue;
        }
        if let Instr::Prim { with_next, .. } = first {
            *with_next = WithNext::SideBySide;
        }
        pc += 2;
    }
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
