//! Preparing a fused program for particular inputs: every value's shape, how each input is
//! read, and the steps over chunk registers, with constants folded.

use super::{Alloc, Const, FusedKernel, InstKind, ShapeRule, Slot, invalid};
use crate::element::{AnyOut, AnyVal, Element, with_storage, with_type};
use crate::elementwise::{
    DataError, binary_chunk, binary_out_shape, broadcast_out, cast_chunk, select_chunk, unary_chunk,
};
use crate::loops::as_uninit;
use crate::shape::BroadcastRead;
use crate::{DType, ErrorKind, Result, Storage, Tensor, TensorError, alloc};

/// How an input is read while running.
#[derive(Clone, Debug)]
pub(super) enum InputMode {
    Unused,
    /// As many elements as the output: read in place.
    Full,
    /// One element, broadcast.
    Splat(Const),
    /// Broadcast otherwise: gathered into a register for each chunk.
    Gather(usize, BroadcastRead),
    /// Its buffer becomes the output: each chunk is copied into a register first.
    Reused(usize),
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Arg {
    Input(usize),
    Reg(usize),
    Const(Const),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Dst {
    Reg(usize),
    Out,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum StepKind {
    Inst(InstKind),
    /// The output is an input or a constant: copy it.
    Copy,
}

#[derive(Clone, Debug)]
pub(super) struct Step {
    pub(super) kind: StepKind,
    pub(super) args: [Arg; 3],
    pub(super) n_args: usize,
    pub(super) dst: Dst,
}

/// A program prepared for particular input shapes.
#[derive(Debug)]
pub(super) struct Plan {
    pub(super) shape: Vec<usize>,
    pub(super) n: usize,
    pub(super) inputs: Vec<InputMode>,
    pub(super) steps: Vec<Step>,
    /// The dtype of each chunk register.
    pub(super) regs: Vec<DType>,
}

impl Plan {
    pub(super) fn reused_reg(&self) -> Option<usize> {
        self.inputs.iter().find_map(|m| match m {
            InputMode::Reused(r) => Some(*r),
            _ => None,
        })
    }
}

/// Whether a value of shape `s` broadcasts to `out` (so that its elements all appear there).
fn broadcasts_to(s: &[usize], out: &[usize]) -> bool {
    s.len() <= out.len()
        && s.iter()
            .zip(&out[out.len() - s.len()..])
            .all(|(&d, &o)| d == 1 || d == o)
}

/// A one-element instruction on constants.
fn fold(kind: InstKind, dtype: DType, args: &[Const]) -> std::result::Result<Const, DataError> {
    let mut buf = with_type!(dtype, T => T::into_storage(vec![T::from_bool(false)]));
    let vals: Vec<AnyVal> = args.iter().map(|c| c.val()).collect();
    run_inst(StepKind::Inst(kind), &vals, out_of(&mut buf, 0, 1))?;
    Ok(Const::first(&buf))
}

impl FusedKernel {
    pub(super) fn check_inputs(&self, inputs: &[&Tensor]) -> Result<()> {
        if inputs.len() != self.input_dtypes.len() {
            return Err(invalid(format!(
                "the fused kernel takes {} inputs, got {}",
                self.input_dtypes.len(),
                inputs.len()
            )));
        }
        for (i, (t, &d)) in inputs.iter().zip(&self.input_dtypes).enumerate() {
            if t.dtype() != d {
                return Err(TensorError::new(
                    ErrorKind::Type,
                    format!(
                        "input {i} of the fused kernel has dtype {}, expected {d}",
                        t.dtype()
                    ),
                ));
            }
            // The chunks read inputs in row-major order: a view's elements are gathered here,
            // where a copy too large for memory can still be a MemoryError.
            t.try_data()?;
        }
        Ok(())
    }

    /// Every value's shape, by the unfused ops' rules; `None` when the unfused evaluation fails
    /// on a shape or a buffer size (then it must run, to raise exactly its error).
    pub(super) fn shapes(&self, inputs: &[&Tensor]) -> Option<Vec<Vec<usize>>> {
        let mut shapes: Vec<Vec<usize>> = Vec::with_capacity(self.shape_rules.len());
        for (v, rule) in self.shape_rules.iter().enumerate() {
            let shape = match *rule {
                ShapeRule::Input => inputs[v].shape().to_vec(),
                ShapeRule::Scalar => Vec::new(),
                ShapeRule::Same(a) => shapes[a].clone(),
                ShapeRule::Binary(x, y, result) => {
                    let get = |o: Option<usize>| o.map_or(&[][..], |o| &shapes[o][..]);
                    binary_out_shape(get(x), get(y), result).ok()?
                }
                ShapeRule::Where([c, x, y], dtype) => {
                    let out = broadcast_out(&[&shapes[c], &shapes[x], &shapes[y]]).ok()?;
                    alloc::check_size(&out, dtype).ok()?;
                    out
                }
            };
            for a in &self.allocs[v] {
                match *a {
                    Alloc::Result(d) => alloc::check_size(&shape, d).ok()?,
                    Alloc::Operand(o, d) if self.dtypes[o] != Some(d) => {
                        alloc::check_size(&shapes[o], d).ok()?
                    }
                    Alloc::Operand(..) => 0,
                };
            }
            shapes.push(shape);
        }
        Some(shapes)
    }

    /// Prepares the program for these inputs, with input `reuse` (of the output's shape and
    /// dtype) becoming the output buffer. `None` when the unfused evaluation must run instead.
    pub(super) fn plan(
        &self,
        inputs: &[&Tensor],
        shapes: &[Vec<usize>],
        reuse: Option<usize>,
    ) -> Option<Plan> {
        let shape = shapes.last().expect("at least one value").clone();
        let n: usize = shape.iter().product();
        if n == 0 {
            return None;
        }
        let insts = &self.insts;
        for (inst, _) in insts.iter().zip(&self.needed).filter(|(_, n)| **n) {
            if !broadcasts_to(&shapes[inst.value], &shape) {
                return None;
            }
        }
        let out_slot = self.slots.last().copied().flatten().expect("tensor output");

        // Inputs.
        let mut used = vec![false; inputs.len()];
        for (inst, _) in insts.iter().zip(&self.needed).filter(|(_, n)| **n) {
            for a in &inst.args {
                if let Slot::Input(i) = *a {
                    used[i] = true;
                }
            }
        }
        if let Slot::Input(i) = out_slot {
            used[i] = true;
        }
        let mut regs: Vec<DType> = Vec::new();
        let modes: Vec<InputMode> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if reuse == Some(i) {
                    regs.push(t.dtype());
                    InputMode::Reused(regs.len() - 1)
                } else if !used[i] {
                    InputMode::Unused
                } else if t.numel() == n {
                    InputMode::Full
                } else if t.numel() == 1 {
                    InputMode::Splat(Const::first(t.data()))
                } else {
                    regs.push(t.dtype());
                    InputMode::Gather(regs.len() - 1, BroadcastRead::new(t.shape(), &shape))
                }
            })
            .collect();
        let fixed_regs = regs.len();

        // Constant folding of instructions on constants and one-element inputs.
        let mut folded: Vec<Option<Const>> = vec![None; insts.len()];
        for (i, inst) in insts.iter().enumerate() {
            if !self.needed[i] {
                continue;
            }
            let consts: Option<Vec<Const>> = inst
                .args
                .iter()
                .map(|a| match *a {
                    Slot::Const(c) => Some(c),
                    Slot::Input(j) => match modes[j] {
                        InputMode::Splat(c) => Some(c),
                        _ => None,
                    },
                    Slot::Inst(j) => folded[j],
                })
                .collect();
            if let Some(consts) = consts {
                folded[i] = Some(fold(inst.kind, inst.dtype, &consts).ok()?);
            }
        }

        // Steps, with instruction results in virtual registers (instruction indices).
        #[derive(Clone, Copy)]
        enum V {
            Fixed(Arg),
            Inst(usize),
        }
        let to_v = |slot: Slot| match slot {
            Slot::Const(c) => V::Fixed(Arg::Const(c)),
            Slot::Input(i) => V::Fixed(match modes[i] {
                InputMode::Full => Arg::Input(i),
                InputMode::Splat(c) => Arg::Const(c),
                InputMode::Gather(r, _) | InputMode::Reused(r) => Arg::Reg(r),
                InputMode::Unused => unreachable!("input {i} is used"),
            }),
            Slot::Inst(j) => match folded[j] {
                Some(c) => V::Fixed(Arg::Const(c)),
                None => V::Inst(j),
            },
        };
        let mut vsteps: Vec<(StepKind, Vec<V>, Option<usize>)> = Vec::new();
        for (i, inst) in insts.iter().enumerate() {
            if self.needed[i] && folded[i].is_none() {
                let args = inst.args.iter().map(|&a| to_v(a)).collect();
                vsteps.push((StepKind::Inst(inst.kind), args, Some(i)));
            }
        }
        let mut last_use = vec![None; insts.len()];
        for (k, (_, args, _)) in vsteps.iter().enumerate() {
            for a in args {
                if let V::Inst(j) = *a {
                    last_use[j] = Some(k);
                }
            }
        }
        // The output: written by its instruction when nothing reads it later, else copied.
        let direct = match to_v(out_slot) {
            V::Inst(o) => {
                let at = vsteps.iter().position(|s| s.2 == Some(o)).expect("step");
                last_use[o].is_none_or(|u| u < at).then_some(o)
            }
            V::Fixed(_) => None,
        };
        if direct.is_none() {
            vsteps.push((StepKind::Copy, vec![to_v(out_slot)], None));
            if let V::Inst(o) = to_v(out_slot) {
                last_use[o] = Some(vsteps.len() - 1);
            }
        }

        // Register allocation by linear scan, reusing dead registers of the same dtype.
        let mut reg_of: Vec<Option<usize>> = vec![None; insts.len()];
        let mut free: Vec<usize> = Vec::new();
        let mut steps = Vec::with_capacity(vsteps.len());
        for (k, (kind, args, inst)) in vsteps.iter().enumerate() {
            let mut a = [Arg::Const(Const::Bool(false)); 3];
            for (slot, v) in a.iter_mut().zip(args) {
                *slot = match *v {
                    V::Fixed(arg) => arg,
                    V::Inst(j) => Arg::Reg(reg_of[j].expect("defined before use")),
                };
            }
            let dst = match *inst {
                Some(i) if direct == Some(i) => Dst::Out,
                None => Dst::Out,
                Some(i) => {
                    let d = insts[i].dtype;
                    let r = match free.iter().position(|&r| regs[r] == d) {
                        Some(p) => free.swap_remove(p),
                        None => {
                            regs.push(d);
                            regs.len() - 1
                        }
                    };
                    reg_of[i] = Some(r);
                    Dst::Reg(r)
                }
            };
            // Registers whose value is not read after this step are free for later steps.
            for v in args {
                if let V::Inst(j) = *v
                    && last_use[j] == Some(k)
                    && let Some(r) = reg_of[j]
                    && !free.contains(&r)
                {
                    free.push(r);
                }
            }
            if let (Dst::Reg(r), Some(i)) = (dst, *inst)
                && last_use[i].is_none()
            {
                free.push(r);
            }
            steps.push(Step {
                kind: *kind,
                args: a,
                n_args: args.len(),
                dst,
            });
        }
        debug_assert_eq!(steps.iter().filter(|s| s.dst == Dst::Out).count(), 1);
        debug_assert!(regs[fixed_regs..].len() <= insts.len());
        Some(Plan {
            shape,
            n,
            inputs: modes,
            steps,
            regs,
        })
    }
}

/// Runs one instruction over a chunk.
pub(super) fn run_inst(
    kind: StepKind,
    args: &[AnyVal],
    dst: AnyOut,
) -> std::result::Result<(), DataError> {
    match kind {
        StepKind::Copy | StepKind::Inst(InstKind::Cast) => cast_chunk(args[0], dst),
        StepKind::Inst(InstKind::Unary(op)) => unary_chunk(op, args[0], dst),
        StepKind::Inst(InstKind::Binary(op, compute)) => {
            binary_chunk(op, compute, args[0], args[1], dst)?
        }
        StepKind::Inst(InstKind::Select) => select_chunk(args[0], args[1], args[2], dst),
    }
    Ok(())
}

/// Elements `offset..offset + len` of a register, as a destination.
pub(super) fn out_of(buf: &mut Storage, offset: usize, len: usize) -> AnyOut<'_> {
    with_storage!(buf, v => Element::any_out(as_uninit(&mut v[offset..offset + len])))
}
