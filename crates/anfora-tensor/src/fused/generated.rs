//! A plan as generated code (`crate::codegen`): float32 programs whose inputs are read in place,
//! are one element, or are the reused output buffer, over the ops the code generator expands.
//! Booleans in between (comparisons, their casts to float32, `where`) are float32 lanes
//! holding 1.0 or 0.0. Anything else runs the chunked steps.
//!
//! A plan's steps depend only on the kind of each input's mode (see `FusedKernel::plan`), so the
//! code is compiled once per kind vector ([`key`]) and kept on the kernel; constants (weak
//! scalars, one-element inputs, folded values) are the code's parameters, read from each call's
//! plan by [`pool`] in the order [`lower`] met them.

use std::sync::{Arc, Mutex};

use super::plan::{Arg, Dst, InputMode, Plan, StepKind};
use super::{Const, InstKind};
use crate::codegen::{Cmp, Kernel, V, VectorCode};
use crate::{BinaryOp, DType, UnaryOp};

/// A plan's compiled code and what its streams read.
#[derive(Debug)]
pub(super) struct Generated {
    pub(super) kernel: Kernel,
    /// Per stream: the input read in place, or `None` for the output buffer (a reused input).
    pub(super) streams: Vec<Option<usize>>,
}

/// Compiled code per key; `None` records a plan that has none.
pub(super) type Cache = Arc<Mutex<Vec<(u64, Option<Arc<Generated>>)>>>;

/// What determines a plan's steps: the kind of each input's mode, three bits per input.
/// `None` for more inputs than fit (such plans run the chunked steps).
pub(super) fn key(plan: &Plan) -> Option<u64> {
    if plan.inputs.len() > 21 {
        return None;
    }
    Some(plan.inputs.iter().fold(0u64, |k, m| {
        k << 3
            | match m {
                InputMode::Unused => 0,
                InputMode::Full => 1,
                InputMode::Splat(_) => 2,
                InputMode::Gather(..) => 3,
                InputMode::Reused(_) => 4,
            }
    }))
}

/// The constant pool for a call of `plan`: the constants of its steps, in the order `lower`
/// made them parameters.
pub(super) fn pool(kernel: &Kernel, plan: &Plan) -> Vec<u32> {
    let params = plan.steps.iter().flat_map(|step| {
        step.args[..step.n_args]
            .iter()
            .filter_map(|arg| match *arg {
                Arg::Const(Const::F32(v)) => Some(v.to_bits()),
                Arg::Const(Const::Bool(b)) => Some(f32::from(u8::from(b)).to_bits()),
                _ => None,
            })
    });
    kernel.pool(params)
}

/// The code for `plan`, whose inputs have `input_dtypes` and whose result is `out_dtype`;
/// `None` when some part of it is outside what the generator handles.
pub(super) fn lower(plan: &Plan, input_dtypes: &[DType], out_dtype: DType) -> Option<Generated> {
    if out_dtype != DType::F32
        || plan
            .regs
            .iter()
            .any(|&d| !matches!(d, DType::F32 | DType::Bool))
    {
        return None;
    }
    let mut p = VectorCode::new();
    let mut streams: Vec<Option<usize>> = Vec::new();
    let mut stream_of = vec![None; plan.inputs.len()];
    let mut reg_val: Vec<Option<V>> = vec![None; plan.regs.len()];
    for (i, mode) in plan.inputs.iter().enumerate() {
        match *mode {
            InputMode::Unused | InputMode::Splat(_) => {}
            InputMode::Gather(..) => return None,
            InputMode::Full => {
                if input_dtypes[i] != DType::F32 {
                    return None;
                }
                stream_of[i] = Some(u8::try_from(streams.len()).ok()?);
                streams.push(Some(i));
            }
            InputMode::Reused(r) => {
                let s = u8::try_from(streams.len()).ok()?;
                streams.push(None);
                reg_val[r] = Some(p.load(s));
            }
        }
    }
    let arg_dtype = |arg: &Arg| match *arg {
        Arg::Input(i) => input_dtypes[i],
        Arg::Reg(r) => plan.regs[r],
        Arg::Const(Const::Bool(_)) => DType::Bool,
        Arg::Const(_) => DType::F32,
    };
    let mut out = None;
    for step in &plan.steps {
        let mut args = [0 as V; 3];
        for (v, arg) in args.iter_mut().zip(&step.args[..step.n_args]) {
            *v = match *arg {
                Arg::Input(i) => p.load(stream_of[i]?),
                Arg::Reg(r) => reg_val[r]?,
                Arg::Const(Const::F32(_) | Const::Bool(_)) => p.param(),
                Arg::Const(_) => return None,
            };
        }
        let [a, b, c] = args;
        let from = arg_dtype(&step.args[0]);
        let to = match step.dst {
            Dst::Reg(r) => plan.regs[r],
            Dst::Out => out_dtype,
        };
        let (one, zero) = (1.0f32, 0.0f32);
        let v = match (step.kind, from, to) {
            (StepKind::Copy, ..) => a,
            (StepKind::Inst(InstKind::Unary(op)), DType::F32, DType::F32) => unary(&mut p, op, a)?,
            (StepKind::Inst(InstKind::Binary(op, DType::F32)), _, DType::F32) => {
                binary(&mut p, op, a, b)?
            }
            (StepKind::Inst(InstKind::Binary(op, DType::F32)), _, DType::Bool) => {
                let (one, zero) = (p.c(one), p.c(zero));
                p.select(comparison(op)?, a, b, one, zero)
            }
            (StepKind::Inst(InstKind::Cast), DType::Bool, DType::F32) => a,
            // numpy's `astype(bool)`: nonzero, NaN included.
            (StepKind::Inst(InstKind::Cast), DType::F32, DType::Bool) => {
                let (one, zero) = (p.c(one), p.c(zero));
                p.select(Cmp::Ne, a, zero, one, zero)
            }
            // `where(cond, x, y)`, the condition a 1.0/0.0 lane.
            (StepKind::Inst(InstKind::Select), DType::Bool, DType::F32) => {
                let zero = p.c(zero);
                p.select(Cmp::Ne, a, zero, b, c)
            }
            _ => return None,
        };
        match step.dst {
            Dst::Reg(r) => reg_val[r] = Some(v),
            Dst::Out => out = Some(v),
        }
    }
    p.set_output(out?);
    Some(Generated {
        kernel: Kernel::compile(&p)?,
        streams,
    })
}

fn unary(p: &mut VectorCode, op: UnaryOp, x: V) -> Option<V> {
    Some(match op {
        UnaryOp::Neg => p.neg(x),
        UnaryOp::Abs => p.abs(x),
        UnaryOp::Exp => p.exp(x),
        UnaryOp::Sqrt => p.sqrt(x),
        UnaryOp::Rsqrt => p.rsqrt(x),
        UnaryOp::Tanh => p.tanh(x),
        UnaryOp::Sigmoid => p.sigmoid(x),
        UnaryOp::Silu => p.silu(x),
        UnaryOp::Relu => p.relu(x),
        _ => return None,
    })
}

/// The comparison of a comparison op on float32 (numpy's: false with a NaN, but `!=` true).
fn comparison(op: BinaryOp) -> Option<Cmp> {
    Some(match op {
        BinaryOp::Lt => Cmp::Lt,
        BinaryOp::Le => Cmp::Le,
        BinaryOp::Gt => Cmp::Gt,
        BinaryOp::Ge => Cmp::Ge,
        BinaryOp::Eq => Cmp::Eq,
        BinaryOp::Ne => Cmp::Ne,
        _ => return None,
    })
}

fn binary(p: &mut VectorCode, op: BinaryOp, a: V, b: V) -> Option<V> {
    Some(match op {
        BinaryOp::Add => p.add(a, b),
        BinaryOp::Sub => p.sub(a, b),
        BinaryOp::Mul => p.mul(a, b),
        BinaryOp::Div => p.div(a, b),
        BinaryOp::Maximum => p.maximum(a, b),
        BinaryOp::Minimum => p.minimum(a, b),
        _ => return None,
    })
}
