//! Fused elementwise kernels: a chain of elementwise ops evaluated in one pass over memory.
//!
//! A [`FusedKernel`] is a small program over values: the inputs, then one value per
//! [`FusedOp`]. [`FusedKernel::new`] checks it and computes every value's dtype with the rules of
//! the unfused ops; [`FusedKernel::run`] evaluates it over chunks of [`CHUNK`] output elements
//! (operands and temporaries stay in L1/L2, and no full-size temporary is ever allocated), with
//! the same vectorized loops as the unfused ops, split over threads for large outputs.
//!
//! **Exactness.** The result is bitwise the result of evaluating the ops one by one with
//! `Tensor::binary`, `binary_scalar`, `unary`, `try_cast` and `where_` ([`FusedKernel::run_unfused`],
//! which is the reference): each intermediate is rounded to its dtype, and broadcasting, NaN,
//! infinities, signed zeros and integer wrapping follow from running the same element functions.
//! Errors too: before any work, `run` propagates every value's shape with the unfused ops'
//! rules and checks every buffer the unfused evaluation would allocate; if any of that fails, or
//! an integer division by zero or negative power turns up while running, or the output is empty,
//! it evaluates the program unfused instead, so the error (or empty result) is exactly the
//! unfused one. Values the output does not depend on are evaluated only when they can raise such
//! an error.
//!
//! What `new` reports: the dtype errors of the ops (a TypeError for bitwise ops on floats, an
//! OverflowError for a Python int out of an int32 operand's range, ...), which the unfused
//! evaluation raises for every input. When an earlier op would fail on some inputs only (shapes,
//! zero division), the unfused evaluation of those inputs raises that error first, while `new`
//! already refuses the program.

mod generated;

use std::mem::MaybeUninit;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::element::{AnyOut, AnyVal, Element, Val, with_storage, with_type};
use crate::elementwise::{
    DataError, binary_chunk, binary_out_shape, broadcast_out, can_raise, cast_chunk, select_chunk,
    unary_chunk,
};
use crate::loops::{CHUNK, as_uninit, for_parts, parallel, task_len};
use crate::promote::{binary_types, promote_types, unary_result_dtype, weak_scalar_dtype};
use crate::shape::BroadcastRead;
use crate::{
    BinaryOp, DType, ErrorKind, Result, Scalar, Storage, Tensor, TensorError, UnaryOp, alloc,
};

/// A value of a fused program: inputs are `0..n_inputs`, then one value per op, in order.
pub type ValueId = u32;

/// One op of a fused program. Operands are earlier values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FusedOp {
    /// A Python scalar operand, "weak" in numpy's NEP 50 sense, as in `Tensor::binary_scalar`.
    /// It may only be an operand of a `Binary` op whose other operand is not a scalar.
    Scalar(Scalar),
    /// `Tensor::unary`.
    Unary(UnaryOp, ValueId),
    /// `Tensor::binary`, or `Tensor::binary_scalar` when one side is a `Scalar` value.
    Binary(BinaryOp, ValueId, ValueId),
    /// `Tensor::try_cast` (numpy's `astype`).
    Cast(DType, ValueId),
    /// `Tensor::where_(cond, x, y)`.
    Where(ValueId, ValueId, ValueId),
}

/// A typed constant: a weak scalar converted to its dtype, or a broadcast one-element input.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Const {
    Bool(bool),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl Const {
    /// The first element of `s`.
    fn first(s: &Storage) -> Const {
        match s {
            Storage::Bool(v) => Const::Bool(v[0]),
            Storage::I32(v) => Const::I32(v[0]),
            Storage::I64(v) => Const::I64(v[0]),
            Storage::F32(v) => Const::F32(v[0]),
            Storage::F64(v) => Const::F64(v[0]),
            Storage::F16(_) | Storage::BF16(_) => {
                unreachable!("fused kernels are never built for half-precision tensors")
            }
            Storage::View(_) => unreachable!("data() is never a view"),
        }
    }

    fn val(self) -> AnyVal<'static> {
        match self {
            Const::Bool(v) => AnyVal::Bool(Val::Splat(v)),
            Const::I32(v) => AnyVal::I32(Val::Splat(v)),
            Const::I64(v) => AnyVal::I64(Val::Splat(v)),
            Const::F32(v) => AnyVal::F32(Val::Splat(v)),
            Const::F64(v) => AnyVal::F64(Val::Splat(v)),
        }
    }

    /// numpy's `astype`, as `try_cast` does it.
    fn cast(self, to: DType) -> Const {
        fn conv<T: Element>(v: T, to: DType) -> Const {
            match to {
                DType::Bool => Const::Bool(v.cast()),
                DType::I32 => Const::I32(v.cast()),
                DType::I64 => Const::I64(v.cast()),
                DType::F32 => Const::F32(v.cast()),
                DType::F64 => Const::F64(v.cast()),
                DType::F16 | DType::BF16 => {
                    unreachable!("fused kernels are never built for half-precision tensors")
                }
            }
        }
        match self {
            Const::Bool(v) => conv(v, to),
            Const::I32(v) => conv(v, to),
            Const::I64(v) => conv(v, to),
            Const::F32(v) => conv(v, to),
            Const::F64(v) => conv(v, to),
        }
    }
}

/// Where an instruction operand comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Slot {
    Input(usize),
    Const(Const),
    Inst(usize),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum InstKind {
    /// numpy's `astype` of the argument to the instruction's dtype.
    Cast,
    /// A unary op on an argument of the op's dtype (the input's dtype for `LogicalNot`).
    Unary(UnaryOp),
    /// A binary op on arguments of dtype `compute`.
    Binary(BinaryOp, DType),
    /// `where` on a bool condition and two arguments of the instruction's dtype.
    Select,
}

/// A primitive step of the program (an op lowers to casts of its operands and the op).
#[derive(Clone, Debug)]
struct Inst {
    kind: InstKind,
    args: Vec<Slot>,
    /// The result's dtype.
    dtype: DType,
    /// The value (`ValueId`) whose op this instruction belongs to.
    value: usize,
}

/// What shape a buffer the unfused evaluation allocates has.
#[derive(Clone, Copy, Debug)]
enum Alloc {
    /// The op's result.
    Result(DType),
    /// A copy of operand value `v` cast to a dtype.
    Operand(usize, DType),
}

/// How the unfused evaluation computes an op's shape.
#[derive(Clone, Debug)]
enum ShapeRule {
    Input,
    Scalar,
    /// The shape of a value (unary ops, casts).
    Same(usize),
    /// `binary`'s rule for two values (`None`: a scalar, 0-d) with the result dtype.
    Binary(Option<usize>, Option<usize>, DType),
    /// `where_`'s rule.
    Where([usize; 3], DType),
}

/// A checked fused elementwise program, ready to run on tensors of its input dtypes.
#[derive(Clone, Debug)]
pub struct FusedKernel {
    input_dtypes: Vec<DType>,
    ops: Vec<FusedOp>,
    /// Per value: its shape rule, the buffers the unfused evaluation allocates for it, and its
    /// slot (`None` for scalars).
    shape_rules: Vec<ShapeRule>,
    allocs: Vec<Vec<Alloc>>,
    slots: Vec<Option<Slot>>,
    dtypes: Vec<Option<DType>>,
    /// Per value: the scalar, for `Scalar` ops.
    scalars: Vec<Option<Scalar>>,
    insts: Vec<Inst>,
    /// Instructions that must run: those the output depends on, and those that can raise a
    /// data-dependent error (with what they depend on).
    needed: Vec<bool>,
    /// Whether some needed instruction can raise a data-dependent error.
    may_raise: bool,
    /// Generated code for the plans met so far, by `generated::key` (shared by clones).
    generated: generated::Cache,
}

fn invalid(message: impl Into<String>) -> TensorError {
    TensorError::new(ErrorKind::Value, message)
}

impl FusedKernel {
    /// Checks the program and computes every value's dtype with the same promotion rules as
    /// the unfused ops (errors as they would give, e.g. bitwise ops on floats). The output is
    /// the last op's value.
    pub fn new(input_dtypes: &[DType], ops: Vec<FusedOp>) -> Result<FusedKernel> {
        let n_in = input_dtypes.len();
        let mut k = FusedKernel {
            input_dtypes: input_dtypes.to_vec(),
            ops: Vec::new(),
            shape_rules: (0..n_in).map(|_| ShapeRule::Input).collect(),
            allocs: vec![Vec::new(); n_in],
            slots: (0..n_in).map(|i| Some(Slot::Input(i))).collect(),
            dtypes: input_dtypes.iter().map(|&d| Some(d)).collect(),
            scalars: vec![None; n_in],
            insts: Vec::new(),
            needed: Vec::new(),
            may_raise: false,
            generated: generated::Cache::default(),
        };
        if ops.is_empty() {
            return Err(invalid("a fused program needs at least one op"));
        }
        if let Some(d) = input_dtypes.iter().find(|d| d.is_half()) {
            // Half-precision operands compute op by op, each widened to float32.
            return Err(invalid(format!("fused kernels do not take {d} inputs")));
        }
        for (i, &op) in ops.iter().enumerate() {
            k.lower(n_in + i, op)?;
        }
        if k.dtypes.last().copied().flatten().is_none() {
            return Err(invalid("the output of a fused program cannot be a scalar"));
        }
        k.ops = ops;
        k.mark_needed();
        Ok(k)
    }

    /// The dtype of the result.
    pub fn output_dtype(&self) -> DType {
        self.dtypes
            .last()
            .copied()
            .flatten()
            .expect("checked by new")
    }

    /// The number of inputs.
    pub fn n_inputs(&self) -> usize {
        self.input_dtypes.len()
    }

    /// The program's ops.
    pub fn ops(&self) -> &[FusedOp] {
        &self.ops
    }

    /// An operand that must be an earlier tensor value.
    fn tensor(&self, id: usize, v: ValueId) -> Result<usize> {
        let v = v as usize;
        if v >= id {
            return Err(invalid(format!(
                "fused op {id} uses value {v}, which is not defined before it"
            )));
        }
        if self.dtypes[v].is_none() {
            return Err(TensorError::new(
                ErrorKind::Type,
                format!("fused op {id}: a scalar can only be an operand of a binary op"),
            ));
        }
        Ok(v)
    }

    fn emit(&mut self, value: usize, kind: InstKind, args: Vec<Slot>, dtype: DType) -> Slot {
        self.insts.push(Inst {
            kind,
            args,
            dtype,
            value,
        });
        Slot::Inst(self.insts.len() - 1)
    }

    /// `slot` (of dtype `from`) cast to `to`.
    fn cast_slot(&mut self, value: usize, slot: Slot, from: DType, to: DType) -> Slot {
        match slot {
            _ if from == to => slot,
            Slot::Const(c) => Slot::Const(c.cast(to)),
            _ => self.emit(value, InstKind::Cast, vec![slot], to),
        }
    }

    /// Lowers op `op`, the definition of value `id`, to instructions.
    fn lower(&mut self, id: usize, op: FusedOp) -> Result<()> {
        let (slot, dtype, rule, allocs) = match op {
            FusedOp::Scalar(_) => (None, None, ShapeRule::Scalar, Vec::new()),
            FusedOp::Unary(u, a) => {
                let a = self.tensor(id, a)?;
                let da = self.dtypes[a].expect("tensor");
                let dt = unary_result_dtype(u, da)?;
                let sa = self.slots[a].expect("tensor");
                let (slot, allocs) = match u {
                    UnaryOp::Pos => (sa, vec![]),
                    UnaryOp::Abs if dt == DType::Bool => (sa, vec![]),
                    UnaryOp::LogicalNot => (
                        self.emit(id, InstKind::Unary(u), vec![sa], dt),
                        vec![Alloc::Result(dt)],
                    ),
                    _ => {
                        let s = self.cast_slot(id, sa, da, dt);
                        let s = self.emit(id, InstKind::Unary(u), vec![s], dt);
                        (s, vec![Alloc::Operand(a, dt), Alloc::Result(dt)])
                    }
                };
                (Some(slot), Some(dt), ShapeRule::Same(a), allocs)
            }
            FusedOp::Cast(to, a) => {
                let a = self.tensor(id, a)?;
                let da = self.dtypes[a].expect("tensor");
                let sa = self.slots[a].expect("tensor");
                let slot = self.cast_slot(id, sa, da, to);
                let allocs = if da == to {
                    vec![]
                } else {
                    vec![Alloc::Result(to)]
                };
                (Some(slot), Some(to), ShapeRule::Same(a), allocs)
            }
            FusedOp::Binary(b, x, y) => self.lower_binary(id, b, x, y)?,
            FusedOp::Where(c, x, y) => {
                let c = self.tensor(id, c)?;
                let x = self.tensor(id, x)?;
                let y = self.tensor(id, y)?;
                let [dc, dx, dy] = [c, x, y].map(|v| self.dtypes[v].expect("tensor"));
                let [sc, sx, sy] = [c, x, y].map(|v| self.slots[v].expect("tensor"));
                let dt = promote_types(dx, dy);
                let sc = self.cast_slot(id, sc, dc, DType::Bool);
                let sx = self.cast_slot(id, sx, dx, dt);
                let sy = self.cast_slot(id, sy, dy, dt);
                let slot = self.emit(id, InstKind::Select, vec![sc, sx, sy], dt);
                let allocs = vec![
                    Alloc::Result(dt),
                    Alloc::Operand(c, DType::Bool),
                    Alloc::Operand(x, dt),
                    Alloc::Operand(y, dt),
                ];
                (
                    Some(slot),
                    Some(dt),
                    ShapeRule::Where([c, x, y], dt),
                    allocs,
                )
            }
        };
        self.slots.push(slot);
        self.dtypes.push(dtype);
        self.scalars.push(match op {
            FusedOp::Scalar(s) => Some(s),
            _ => None,
        });
        self.shape_rules.push(rule);
        self.allocs.push(allocs);
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    fn lower_binary(
        &mut self,
        id: usize,
        b: BinaryOp,
        x: ValueId,
        y: ValueId,
    ) -> Result<(Option<Slot>, Option<DType>, ShapeRule, Vec<Alloc>)> {
        let operand = |v: ValueId| -> Result<usize> {
            let v = v as usize;
            if v >= id {
                return Err(invalid(format!(
                    "fused op {id} uses value {v}, which is not defined before it"
                )));
            }
            Ok(v)
        };
        let (x, y) = (operand(x)?, operand(y)?);
        // The operands as (slot, dtype, value if a tensor); a scalar becomes a 0-d constant of
        // its weak dtype, as `binary_scalar` makes it.
        let side = |this: &Self, v: usize, other: usize| -> Result<(Slot, DType, Option<usize>)> {
            match this.scalars[v] {
                None => Ok((
                    this.slots[v].expect("tensor"),
                    this.dtypes[v].expect("tensor"),
                    Some(v),
                )),
                Some(s) => {
                    let Some(dt) = this.dtypes[other] else {
                        return Err(TensorError::new(
                            ErrorKind::Type,
                            format!("fused op {id}: a binary op needs a tensor operand"),
                        ));
                    };
                    let weak = weak_scalar_dtype(b, dt, s);
                    let t = Tensor::scalar(s, weak)?;
                    Ok((Slot::Const(Const::first(t.data())), weak, None))
                }
            }
        };
        let (sx, dx, tx) = side(self, x, y)?;
        let (sy, dy, ty) = side(self, y, x)?;
        let (compute, result) = binary_types(b, promote_types(dx, dy))?;
        let sx = self.cast_slot(id, sx, dx, compute);
        let sy = self.cast_slot(id, sy, dy, compute);
        let slot = self.emit(id, InstKind::Binary(b, compute), vec![sx, sy], result);
        let mut allocs = vec![Alloc::Result(result)];
        for t in [tx, ty].into_iter().flatten() {
            allocs.push(Alloc::Operand(t, compute));
        }
        Ok((
            Some(slot),
            Some(result),
            ShapeRule::Binary(tx, ty, result),
            allocs,
        ))
    }

    /// Marks the instructions that must run.
    fn mark_needed(&mut self) {
        let n = self.insts.len();
        let mut needed = vec![false; n];
        let mut stack: Vec<usize> = Vec::new();
        if let Some(Some(Slot::Inst(i))) = self.slots.last() {
            stack.push(*i);
        }
        for (i, inst) in self.insts.iter().enumerate() {
            if let InstKind::Binary(op, compute) = inst.kind
                && can_raise(op, compute)
            {
                stack.push(i);
                self.may_raise = true;
            }
        }
        while let Some(i) = stack.pop() {
            if needed[i] {
                continue;
            }
            needed[i] = true;
            for a in &self.insts[i].args {
                if let Slot::Inst(j) = *a {
                    stack.push(j);
                }
            }
        }
        self.needed = needed;
    }
}

// ----- running -----------------------------------------------------------------------------------

/// How an input is read while running.
#[derive(Clone, Debug)]
enum InputMode {
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
enum Arg {
    Input(usize),
    Reg(usize),
    Const(Const),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Dst {
    Reg(usize),
    Out,
}

#[derive(Clone, Copy, Debug)]
enum StepKind {
    Inst(InstKind),
    /// The output is an input or a constant: copy it.
    Copy,
}

#[derive(Clone, Debug)]
struct Step {
    kind: StepKind,
    args: [Arg; 3],
    n_args: usize,
    dst: Dst,
}

/// A program prepared for particular input shapes.
#[derive(Debug)]
struct Plan {
    shape: Vec<usize>,
    n: usize,
    inputs: Vec<InputMode>,
    steps: Vec<Step>,
    /// The dtype of each chunk register.
    regs: Vec<DType>,
}

impl Plan {
    fn reused_reg(&self) -> Option<usize> {
        self.inputs.iter().find_map(|m| match m {
            InputMode::Reused(r) => Some(*r),
            _ => None,
        })
    }
}

/// The chunk registers of one thread. Their starts sit at the same address modulo 4 KiB, half a
/// page away from the tensors that steps read or write: a load running ahead of a store to an
/// address that agrees with it modulo 4 KiB waits for the store, which would slow the loops
/// several times over.
struct Regs {
    bufs: Vec<Storage>,
    offsets: Vec<usize>,
}

const PAGE: usize = 4096;

impl Regs {
    /// Registers of `len` elements of `dtypes`, starting at `phase` modulo 4 KiB.
    fn new(dtypes: &[DType], len: usize, phase: usize) -> Regs {
        let mut bufs = Vec::with_capacity(dtypes.len());
        let mut offsets = Vec::with_capacity(dtypes.len());
        for &d in dtypes {
            let size = d.size_of();
            let buf =
                with_type!(d, T => T::into_storage(vec![T::from_bool(false); len + PAGE / size]));
            let addr = with_storage!(&buf, v => v.as_ptr() as usize);
            offsets.push((phase + PAGE - addr % PAGE) % PAGE / size);
            bufs.push(buf);
        }
        Regs { bufs, offsets }
    }

    fn val(&self, r: usize, len: usize) -> AnyVal<'_> {
        let o = self.offsets[r];
        with_storage!(&self.bufs[r], v => Element::any_val(Val::Slice(&v[o..o + len])))
    }

    fn typed_mut<T: Element>(&mut self, r: usize, len: usize) -> &mut [T] {
        let o = self.offsets[r];
        &mut T::vec_mut(&mut self.bufs[r]).expect("register of its dtype")[o..o + len]
    }
}

/// The start (modulo 4 KiB) for registers that is farthest from the given addresses.
fn register_phase(addrs: &[usize]) -> usize {
    (0..16)
        .map(|k| k * PAGE / 16)
        .max_by_key(|&p| {
            addrs
                .iter()
                .map(|&a| {
                    let d = (p + PAGE - a % PAGE) % PAGE;
                    d.min(PAGE - d)
                })
                .min()
                .unwrap_or(PAGE)
        })
        .expect("candidates")
}

/// Whether a value of shape `s` broadcasts to `out` (so that its elements all appear there).
fn broadcasts_to(s: &[usize], out: &[usize]) -> bool {
    s.len() <= out.len()
        && s.iter()
            .zip(&out[out.len() - s.len()..])
            .all(|(&d, &o)| d == 1 || d == o)
}

/// Runs one instruction over a chunk.
fn run_inst(kind: StepKind, args: &[AnyVal], dst: AnyOut) -> std::result::Result<(), DataError> {
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

/// A one-element instruction on constants.
fn fold(kind: InstKind, dtype: DType, args: &[Const]) -> std::result::Result<Const, DataError> {
    let mut buf = with_type!(dtype, T => T::into_storage(vec![T::from_bool(false)]));
    let vals: Vec<AnyVal> = args.iter().map(|c| c.val()).collect();
    run_inst(StepKind::Inst(kind), &vals, out_of(&mut buf, 0, 1))?;
    Ok(Const::first(&buf))
}

/// Elements `offset..offset + len` of a register, as a destination.
fn out_of(buf: &mut Storage, offset: usize, len: usize) -> AnyOut<'_> {
    with_storage!(buf, v => Element::any_out(as_uninit(&mut v[offset..offset + len])))
}

fn gather<T: Element>(read: &BroadcastRead, src: &Storage, start: usize, dst: &mut [T]) {
    read.read(T::slice(src).expect("input of its dtype"), start, dst);
}

/// Asks for the `bytes` bytes at `addr` to be brought into the cache (for writing when
/// `write`). Only a hint: nothing is read or written.
#[inline]
fn prefetch(addr: usize, bytes: usize, write: bool) {
    #[cfg(target_arch = "x86_64")]
    for a in (addr..addr + bytes).step_by(64) {
        use std::arch::x86_64::{_MM_HINT_ET1, _MM_HINT_T1, _mm_prefetch};
        let p = a as *const i8;
        // SAFETY: a prefetch never faults, whatever the address, and has no effect on memory
        // (the addresses are within a tensor or the output anyway).
        unsafe {
            if write {
                _mm_prefetch::<_MM_HINT_ET1>(p)
            } else {
                _mm_prefetch::<_MM_HINT_T1>(p)
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (addr, bytes, write);
}

/// Runs `plan` with its generated code into `target`, split over threads for large outputs.
fn run_generated<T: Element>(
    g: &generated::Generated,
    plan: &Plan,
    inputs: &[&Tensor],
    target: Target<'_, T>,
) {
    assert_eq!(T::DTYPE, DType::F32, "generated code writes float32");
    let pool = generated::pool(&g.kernel, plan);
    let dst = match target {
        Target::Fresh(p) => p,
        Target::Reused(p) => as_uninit(p),
    };
    debug_assert_eq!(dst.len(), plan.n);
    // Per stream: the address of an input read in place, or `None` for the output itself.
    let addrs: Vec<Option<usize>> = g
        .streams
        .iter()
        .map(|s| s.map(|i| inputs[i].as_ptr_addr()))
        .collect();
    for_parts(dst, |start, part| {
        let out = part.as_mut_ptr().cast::<f32>();
        let mut streams = [std::ptr::null::<f32>(); crate::codegen::MAX_STREAMS];
        for (p, a) in streams.iter_mut().zip(&addrs) {
            *p = a.map_or(out.cast_const(), |a| (a as *const f32).wrapping_add(start));
        }
        // SAFETY: the streams are inputs read in place (their row-major data has the output's
        // n elements, `Plan`'s Full mode, of which this part reads `start..start + len`) or
        // the part itself (a reused input, each vector read before it is written); `part` is
        // a unique borrow of `len` float32 slots (T is f32). The pool comes from the kernel.
        unsafe {
            g.kernel
                .run(&pool, &streams[..addrs.len()], out, part.len())
        };
    });
}

/// Where a fused kernel writes its result.
enum Target<'a, T> {
    Fresh(&'a mut [MaybeUninit<T>]),
    Reused(&'a mut [T]),
}

impl FusedKernel {
    fn check_inputs(&self, inputs: &[&Tensor]) -> Result<()> {
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
        }
        Ok(())
    }

    /// Every value's shape, by the unfused ops' rules; `None` when the unfused evaluation fails
    /// on a shape or a buffer size (then it must run, to raise exactly its error).
    fn shapes(&self, inputs: &[&Tensor]) -> Option<Vec<Vec<usize>>> {
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
    fn plan(
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

    /// Evaluates the steps over the output positions `start..start + out.len()`.
    fn chunk(
        &self,
        plan: &Plan,
        inputs: &[&Tensor],
        regs: &mut Regs,
        start: usize,
        mut out: AnyOut,
    ) -> std::result::Result<(), DataError> {
        let len = out.len();
        // The next chunk of the inputs read in place, on its way from memory while this one
        // computes (the hardware prefetcher loses the stream between the steps).
        for (i, mode) in plan.inputs.iter().enumerate() {
            if matches!(mode, InputMode::Full) {
                with_storage!(inputs[i].data(), v => {
                    let next = &v[(start + len).min(v.len())..(start + 2 * len).min(v.len())];
                    prefetch(next.as_ptr() as usize, std::mem::size_of_val(next), false)
                });
            }
        }
        for (i, mode) in plan.inputs.iter().enumerate() {
            if let InputMode::Gather(r, read) = mode {
                let o = regs.offsets[*r];
                with_storage!(&mut regs.bufs[*r], v => {
                    gather(read, inputs[i].data(), start, &mut v[o..o + len])
                });
            }
        }
        for step in &plan.steps {
            let mut dbuf = match step.dst {
                Dst::Reg(r) => Some((
                    std::mem::replace(&mut regs.bufs[r], Storage::Bool(Vec::new())),
                    regs.offsets[r],
                )),
                Dst::Out => None,
            };
            let mut args = [Const::Bool(false).val(); 3];
            for (a, arg) in args.iter_mut().zip(&step.args[..step.n_args]) {
                *a = match *arg {
                    Arg::Input(i) => with_storage!(inputs[i].data(), v => {
                        Element::any_val(Val::Slice(&v[start..start + len]))
                    }),
                    Arg::Reg(r) => regs.val(r, len),
                    Arg::Const(c) => c.val(),
                };
            }
            let dst = match &mut dbuf {
                Some((buf, o)) => out_of(buf, *o, len),
                None => out.reborrow(),
            };
            let res = run_inst(step.kind, &args[..step.n_args], dst);
            if let (Dst::Reg(r), Some((buf, _))) = (step.dst, dbuf) {
                regs.bufs[r] = buf;
            }
            res?;
        }
        Ok(())
    }

    /// Runs the plan into `target`, split over threads for large outputs.
    fn execute<T: Element>(
        &self,
        plan: &Plan,
        inputs: &[&Tensor],
        target: Target<'_, T>,
    ) -> std::result::Result<(), DataError> {
        if let Some(g) = self.generated_for(plan) {
            run_generated(&g, plan, inputs, target);
            return Ok(());
        }
        let failed = AtomicBool::new(false);
        let reused = plan.reused_reg();
        let mut addrs: Vec<usize> = match &target {
            Target::Fresh(p) => vec![p.as_ptr() as usize],
            Target::Reused(p) => vec![p.as_ptr() as usize],
        };
        for (t, m) in inputs.iter().zip(&plan.inputs) {
            if matches!(m, InputMode::Full) {
                addrs.push(t.as_ptr_addr());
            }
        }
        let phase = register_phase(&addrs);
        let task = |start: usize, part: Target<'_, T>| {
            let len = match &part {
                Target::Fresh(p) => p.len(),
                Target::Reused(p) => p.len(),
            };
            let mut regs = Regs::new(&plan.regs, len.min(CHUNK), phase);
            match part {
                Target::Fresh(p) => {
                    let (base, n, size) = (p.as_ptr() as usize, p.len(), size_of::<T>());
                    for (k, sub) in p.chunks_mut(CHUNK).enumerate() {
                        let at = start + k * CHUNK;
                        // The next chunk of the output, on its way into the cache.
                        let next = ((k + 1) * CHUNK).min(n);
                        let end = ((k + 2) * CHUNK).min(n);
                        prefetch(base + next * size, (end - next) * size, true);
                        if failed.load(Ordering::Relaxed)
                            || self
                                .chunk(plan, inputs, &mut regs, at, T::any_out(sub))
                                .is_err()
                        {
                            failed.store(true, Ordering::Relaxed);
                            return;
                        }
                    }
                }
                Target::Reused(p) => {
                    let r = reused.expect("a reused input");
                    for (k, sub) in p.chunks_mut(CHUNK).enumerate() {
                        regs.typed_mut::<T>(r, sub.len()).copy_from_slice(sub);
                        let at = start + k * CHUNK;
                        let out = T::any_out(as_uninit(sub));
                        if self.chunk(plan, inputs, &mut regs, at, out).is_err() {
                            failed.store(true, Ordering::Relaxed);
                            return;
                        }
                    }
                }
            }
        };
        if parallel(plan.n) {
            use rayon::prelude::*;
            let len = task_len(plan.n);
            match target {
                Target::Fresh(p) => p
                    .par_chunks_mut(len)
                    .enumerate()
                    .for_each(|(i, c)| task(i * len, Target::Fresh(c))),
                Target::Reused(p) => p
                    .par_chunks_mut(len)
                    .enumerate()
                    .for_each(|(i, c)| task(i * len, Target::Reused(c))),
            }
        } else {
            task(0, target);
        }
        if failed.into_inner() {
            Err(DataError)
        } else {
            Ok(())
        }
    }

    /// The generated code for plans like `plan`, compiled at the first one; `None` when
    /// generated code is off or does not cover the plan.
    fn generated_for(&self, plan: &Plan) -> Option<Arc<generated::Generated>> {
        if !crate::codegen::enabled() {
            return None;
        }
        let key = generated::key(plan)?;
        let mut cache = self
            .generated
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, g)) = cache.iter().find(|(k, _)| *k == key) {
            return g.clone();
        }
        let g = generated::lower(plan, &self.input_dtypes, self.output_dtype()).map(Arc::new);
        cache.push((key, g.clone()));
        g
    }

    /// Whether `run` evaluates these inputs with generated code (one loop over the whole
    /// program) rather than op by op in chunks. For tests and benchmarks.
    #[doc(hidden)]
    pub fn uses_generated_code(&self, inputs: &[&Tensor]) -> bool {
        self.check_inputs(inputs).is_ok()
            && self
                .shapes(inputs)
                .and_then(|shapes| self.plan(inputs, &shapes, None))
                .is_some_and(|plan| self.generated_for(&plan).is_some())
    }

    /// Broadcasts the inputs to their common shape (numpy rules, same errors as
    /// `Tensor::binary`) and evaluates the program in one pass over memory, in chunks that fit in
    /// L1/L2, with no full-size temporaries, vectorized, and split over threads (rayon) above a
    /// size threshold. Allocates the output through the crate's fallible allocator.
    ///
    /// The result, or the error, is exactly [`FusedKernel::run_unfused`]'s.
    pub fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        self.check_inputs(inputs)?;
        let Some(shapes) = self.shapes(inputs) else {
            return self.run_unfused(inputs);
        };
        let Some(plan) = self.plan(inputs, &shapes, None) else {
            return self.run_unfused(inputs);
        };
        with_type!(self.output_dtype(), T => {
            let (mut v, n) = alloc::try_vec_capped::<T>(&plan.shape, alloc::cap())?;
            let target = Target::Fresh(&mut v.spare_capacity_mut()[..n]);
            if self.execute(&plan, inputs, target).is_err() {
                return self.run_unfused(inputs);
            }
            // SAFETY: `execute` succeeded, so every chunk ran its steps, exactly one of which
            // writes the whole chunk of the output; the chunks cover the `n` elements.
            unsafe { v.set_len(n) };
            Ok(Tensor::from_storage(T::into_storage(v), plan.shape))
        })
    }

    /// Like [`FusedKernel::run`], but may write the result into the buffer of an input passed
    /// by value when that input is uniquely owned and has the output's shape and dtype (not when
    /// the program can raise a zero division or negative power, whose check needs the inputs
    /// intact).
    pub fn run_owned(&self, mut inputs: Vec<Tensor>) -> Result<Tensor> {
        let refs: Vec<&Tensor> = inputs.iter().collect();
        self.check_inputs(&refs)?;
        let Some(shapes) = self.shapes(&refs) else {
            return self.run_unfused(&refs);
        };
        let out = shapes.last().expect("at least one value");
        let dtype = self.output_dtype();
        let candidate = (!self.may_raise)
            .then(|| {
                (0..refs.len()).find(|&i| refs[i].dtype() == dtype && refs[i].shape() == &out[..])
            })
            .flatten();
        drop(refs);
        let Some(i) = candidate.filter(|&i| inputs[i].storage_mut().is_some()) else {
            return self.run(&inputs.iter().collect::<Vec<_>>());
        };
        let refs: Vec<&Tensor> = inputs.iter().collect();
        let Some(plan) = self.plan(&refs, &shapes, Some(i)) else {
            return self.run_unfused(&refs);
        };
        drop(refs);
        with_type!(dtype, T => {
            let storage = inputs[i].storage_mut().expect("checked unique");
            let mut v = std::mem::take(T::vec_mut(storage).expect("input of the output dtype"));
            let refs: Vec<&Tensor> = inputs.iter().collect();
            self.execute(&plan, &refs, Target::Reused(&mut v))
                .expect("a program that cannot raise");
            Ok(Tensor::from_storage(T::into_storage(v), plan.shape))
        })
    }

    /// The reference semantics: the ops evaluated one by one with `Tensor::binary`,
    /// `binary_scalar`, `unary`, `try_cast` and `where_`. Intermediates are dropped after their
    /// last use.
    pub fn run_unfused(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        self.check_inputs(inputs)?;
        #[derive(Clone)]
        enum Value {
            Tensor(Tensor),
            Scalar(Scalar),
        }
        let n_in = inputs.len();
        let n_values = n_in + self.ops.len();
        let mut last_use = vec![0usize; n_values];
        for (k, op) in self.ops.iter().enumerate() {
            let used: Vec<ValueId> = match *op {
                FusedOp::Scalar(_) => vec![],
                FusedOp::Unary(_, a) | FusedOp::Cast(_, a) => vec![a],
                FusedOp::Binary(_, a, b) => vec![a, b],
                FusedOp::Where(c, x, y) => vec![c, x, y],
            };
            for u in used {
                last_use[u as usize] = n_in + k;
            }
        }
        let mut values: Vec<Option<Value>> = inputs
            .iter()
            .map(|t| Some(Value::Tensor((*t).clone())))
            .collect();
        for (k, op) in self.ops.iter().enumerate() {
            let id = n_in + k;
            let get = |values: &[Option<Value>], v: ValueId| {
                values[v as usize].clone().expect("live value")
            };
            let tensor = |values: &[Option<Value>], v: ValueId| match get(values, v) {
                Value::Tensor(t) => t,
                Value::Scalar(_) => unreachable!("checked by new"),
            };
            let value = match *op {
                FusedOp::Scalar(s) => Value::Scalar(s),
                FusedOp::Unary(u, a) => Value::Tensor(Tensor::unary(u, &tensor(&values, a))?),
                FusedOp::Cast(d, a) => Value::Tensor(tensor(&values, a).try_cast(d)?),
                FusedOp::Binary(b, x, y) => {
                    Value::Tensor(match (get(&values, x), get(&values, y)) {
                        (Value::Tensor(x), Value::Tensor(y)) => Tensor::binary(b, &x, &y)?,
                        (Value::Tensor(x), Value::Scalar(y)) => {
                            Tensor::binary_scalar(b, &x, y, false)?
                        }
                        (Value::Scalar(x), Value::Tensor(y)) => {
                            Tensor::binary_scalar(b, &y, x, true)?
                        }
                        (Value::Scalar(_), Value::Scalar(_)) => unreachable!("checked by new"),
                    })
                }
                FusedOp::Where(c, x, y) => Value::Tensor(Tensor::where_(
                    &tensor(&values, c),
                    &tensor(&values, x),
                    &tensor(&values, y),
                )?),
            };
            values.push(Some(value));
            for v in 0..id {
                if last_use[v] == id {
                    values[v] = None;
                }
            }
        }
        match values.pop().flatten() {
            Some(Value::Tensor(t)) => Ok(t),
            _ => unreachable!("the output is a tensor"),
        }
    }
}
