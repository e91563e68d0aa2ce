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
mod plan;
mod run;

use crate::element::{AnyVal, Element, Val};
use crate::elementwise::can_raise;
use crate::promote::{binary_types, promote_types, unary_result_dtype, weak_scalar_dtype};
use crate::{BinaryOp, DType, ErrorKind, Result, Scalar, Storage, Tensor, TensorError, UnaryOp};

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
pub enum Const {
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
            Storage::F16(_) | Storage::BF16(_) | Storage::I8(_) | Storage::U8(_) => {
                unreachable!("fused kernels are never built for storage dtypes")
            }
            Storage::View(_) | Storage::Device(_) => unreachable!("data() is dense on the host"),
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
                DType::F16 | DType::BF16 | DType::I8 | DType::U8 => {
                    unreachable!("fused kernels are never built for storage dtypes")
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
pub enum Slot {
    Input(usize),
    Const(Const),
    Inst(usize),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InstKind {
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
pub struct Inst {
    pub kind: InstKind,
    pub args: Vec<Slot>,
    /// The result's dtype.
    pub dtype: DType,
    /// The value (`ValueId`) whose op this instruction belongs to.
    pub value: usize,
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
        if let Some(d) = input_dtypes.iter().find(|d| d.is_narrow()) {
            // Storage-dtype operands compute op by op, each widened.
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

    /// The input dtypes.
    pub fn input_dtypes(&self) -> &[DType] {
        &self.input_dtypes
    }

    /// The program lowered to typed instructions (every cast explicit, scalars typed
    /// constants): what a device's code generator translates.
    pub fn insts(&self) -> &[Inst] {
        &self.insts
    }

    /// Where the result is: an instruction, or an input the ops pass through unchanged.
    pub fn output_slot(&self) -> Slot {
        self.slots
            .last()
            .copied()
            .flatten()
            .expect("checked by new: the output is a tensor")
    }

    /// Whether some instruction can raise an error that depends on the data (an integer
    /// division by zero, a negative integer power): a device that cannot report one does
    /// not take the program.
    pub fn may_raise(&self) -> bool {
        self.may_raise
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
                    Ok((Slot::Const(Const::first(t.try_data()?)), weak, None))
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
