//! The executor: runs a [`Program`] on one contiguous register stack with an explicit frame
//! stack, so deep recursion raises RecursionError instead of overflowing the Rust stack, and
//! tail calls and loops run in constant space.

use std::io::Write;
use std::ops::ControlFlow;
use std::rc::Rc;

use anfora_ir::Prim;
use anfora_ir::runtime::recursion_error;
use anfora_ir::{RuntimeError, TraceEntry};
use anfora_ops::call::{Called, bind_call};
use anfora_ops::kernels::Kernel;
use anfora_ops::pynum::{self, PyErr};
use anfora_ops::value::{Closure, OpResult, from_const};
use anfora_ops::{Value, call, python};
use anfora_tensor::BinaryOp;
use anfora_tensor::memory::Poll;
use smallvec::SmallVec;

use crate::Program;
use crate::program::{BinOp, Branch, FusedArg, FusedProgram, Instr, Opnd, Reg, WithNext};

/// Registers and frames, kept between calls so a cached call allocates nothing for them.
#[derive(Default)]
pub struct Machine {
    regs: Vec<Value>,
    frames: Vec<Frame>,
    scratch: Vec<Value>,
    /// How long the last call took: after a long one the next keeps the kernel threads awake
    /// (`KeepThreadsAwake`).
    last_run: std::time::Duration,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    unit: u32,
    base: usize,
    /// Where to continue when a callee returns.
    pc: usize,
    /// The caller's register that receives this frame's result.
    ret: Reg,
    /// Site of the instruction running (or waiting for a callee), for tracebacks.
    at: u32,
    /// Tail calls of `def`s this frame ran: each counts a level of recursion until the frame
    /// returns, as the frame CPython would have pushed for it.
    tail: usize,
    /// The unit and site of the first and the last of them: a traceback shows the first, then
    /// the last for the others (exact for a function's recursion on itself).
    tail_sites: [(u32, u32); 2],
}

enum Flow {
    Value(Value),
    /// Enter `unit` with its parameters and captures.
    Enter(u32, Vec<Value>),
}

fn internal(msg: impl Into<String>) -> PyErr {
    (
        "SystemError",
        format!("internal error in compiled code: {}", msg.into()),
    )
}

#[inline]
fn peek<'a>(regs: &'a [Value], consts: &'a [Value], base: usize, o: Opnd) -> &'a Value {
    match o {
        Opnd::Reg(r) | Opnd::Take(r) => &regs[base + r as usize],
        Opnd::Const(k) => &consts[k as usize],
    }
}

#[inline]
fn load(regs: &mut [Value], consts: &[Value], base: usize, o: Opnd) -> Value {
    match o {
        Opnd::Reg(r) => regs[base + r as usize].clone(),
        Opnd::Take(r) => std::mem::replace(&mut regs[base + r as usize], Value::None),
        Opnd::Const(k) => consts[k as usize].clone(),
    }
}

/// Stores `v` in a register; the old value is dropped only if it owns something.
#[inline(always)]
fn set(slot: &mut Value, v: Value) {
    if slot.owns_nothing() {
        // SAFETY: the old value holds no heap data, so skipping its destructor leaks nothing.
        unsafe { std::ptr::write(slot, v) }
    } else {
        *slot = v;
    }
}

/// Python ints and floats without a detour through the generic operators; `None` when the
/// operands are anything else or the result needs the generic path (overflow, errors).
#[inline(always)]
fn fast_bin(op: BinOp, a: &Value, b: &Value) -> Option<Value> {
    use BinaryOp::*;
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            let (x, y) = (*x, *y);
            Some(match op.op {
                Add => Value::Int(x.checked_add(y)?),
                Sub => Value::Int(x.checked_sub(y)?),
                Mul => Value::Int(x.checked_mul(y)?),
                Div => Value::new_float(pynum::int_true_div(x, y).ok()?),
                FloorDiv => Value::Int(pynum::int_floor_div(x, y).ok()?),
                Mod => Value::Int(pynum::int_mod(x, y).ok()?),
                Lt | Le | Gt | Ge | Eq | Ne => Value::Bool(compare(op.op, x, y)),
                _ => return None,
            })
        }
        (Value::Float(x), Value::Float(y)) => {
            let (x, y) = (*x, *y);
            Some(match op.op {
                Add => Value::new_float(x + y),
                Sub => Value::new_float(x - y),
                Mul => Value::new_float(x * y),
                Div => Value::new_float(pynum::float_true_div(x, y).ok()?),
                FloorDiv => Value::new_float(pynum::float_floor_div(x, y).ok()?),
                Mod => Value::new_float(pynum::float_mod(x, y).ok()?),
                Lt | Le | Gt | Ge | Eq | Ne => Value::Bool(compare(op.op, x, y)),
                _ => return None,
            })
        }
        _ => None,
    }
}

/// `x op y` for a comparison `op`, on ints or floats.
#[inline(always)]
fn compare<T: PartialOrd>(op: BinaryOp, x: T, y: T) -> bool {
    match op {
        BinaryOp::Lt => x < y,
        BinaryOp::Le => x <= y,
        BinaryOp::Gt => x > y,
        BinaryOp::Ge => x >= y,
        BinaryOp::Eq => x == y,
        BinaryOp::Ne => x != y,
        _ => unreachable!("{op:?} is not a comparison"),
    }
}

/// Whether `vals` are tensors of `dtypes`, which a one-pass kernel takes.
fn tensors_of(vals: &[Value], dtypes: &[anfora_tensor::DType]) -> bool {
    vals.iter()
        .zip(dtypes)
        .all(|(v, &d)| matches!(v, Value::Tensor(t) if t.dtype() == d))
}

/// Largest input (elements) for which a fused chain runs step by step instead of as a kernel.
const SMALL_KERNEL: usize = 64;

/// Evaluates a fused chain: in one pass when it has a kernel and the inputs are tensors of
/// its dtypes (an input passed by move may receive the result), else step by step, each value
/// moved on its last read.
fn run_kernel(
    k: &FusedProgram,
    vals: &mut Vec<Value>,
    out: &mut dyn Write,
) -> Result<Value, PyErr> {
    let n_inputs = k.n_inputs as usize;
    if vals.len() != n_inputs {
        return Err(internal(format!(
            "kernel {} takes {n_inputs} inputs",
            k.name
        )));
    }
    if let Some((dtypes, device_kernel)) = &k.device_kernel
        && tensors_of(vals, dtypes)
    {
        return device_kernel.call(vals, out);
    }
    if let Some((dtypes, kernel)) = &k.kernel {
        let fits = tensors_of(vals, dtypes);
        // Tiny tensors: planning a kernel costs more than a few in-place steps.
        let tiny = vals
            .iter()
            .all(|v| matches!(v, Value::Tensor(t) if t.numel() <= SMALL_KERNEL));
        if fits && !tiny {
            let tensors = vals
                .drain(..)
                .filter_map(|v| v.into_tensor().ok())
                .collect();
            return kernel
                .run_owned(tensors)
                .map(Value::Tensor)
                .map_err(pynum::tensor_err);
        }
    }
    let mut args: SmallVec<[Value; 3]> = SmallVec::new();
    for step in &k.steps {
        for a in &step.args {
            args.push(match a {
                FusedArg::Value(i) => vals[*i as usize].clone(),
                FusedArg::Last(i) => std::mem::replace(&mut vals[*i as usize], Value::None),
                FusedArg::Const(v) => v.clone(),
            });
        }
        let v = match &step.kernel {
            Some(k) => k.call(&mut args, out)?,
            None => anfora_ops::inplace::prim(step.prim, &mut args, out)?,
        };
        args.clear();
        vals.push(v);
    }
    Ok(std::mem::replace(&mut vals[k.output as usize], Value::None))
}

impl Program {
    /// Runs the entry unit with `args`.
    pub(crate) fn execute(
        &self,
        m: &mut Machine,
        args: Vec<Value>,
        out: &mut dyn Write,
        max_depth: usize,
    ) -> Result<Value, RuntimeError> {
        m.frames.clear();
        m.frames.push(Frame {
            unit: 0,
            base: 0,
            pc: 0,
            ret: 0,
            at: 0,
            tail: 0,
            tail_sites: [(0, 0); 2],
        });
        let bound = self.bind(0, args, None).map_err(|e| self.error(m, e, 0))?;
        self.enter_frame(m, 0, 0, bound)
            .map_err(|e| self.error(m, e, 0))?;
        let started = std::time::Instant::now();
        let awake = (m.last_run >= anfora_tensor::KeepThreadsAwake::WORTH)
            .then(anfora_tensor::KeepThreadsAwake::start)
            .flatten();
        let mut run = Run {
            program: self,
            m,
            out,
            max_depth,
            tail_levels: 0,
            poll: Poll::default(),
            unit: 0,
            base: 0,
            pc: 0,
        };
        let result = run.interpret();
        drop(awake);
        m.last_run = started.elapsed();
        if result.is_err() {
            // Release every value the failed call still holds.
            for r in &mut m.regs {
                *r = Value::None;
            }
        }
        m.frames.clear();
        result
    }

    /// Places `values` (parameters, then captures) in the registers of a frame at `base`. The
    /// register stack grows by a fallible allocation: deep recursion of a function with many
    /// registers is a MemoryError, never an abort.
    fn enter_frame(
        &self,
        m: &mut Machine,
        unit: u32,
        base: usize,
        values: Vec<Value>,
    ) -> Result<(), PyErr> {
        let need = base + self.units[unit as usize].n_regs as usize;
        if m.regs.len() < need {
            let more = need - m.regs.len();
            anfora_tensor::memory::fallibly(|| {
                m.regs
                    .try_reserve(more)
                    .and_then(|()| m.frames.try_reserve(1))
            })
            .map_err(|_| {
                let message = format!("cannot grow the call stack to {need} registers");
                ("MemoryError", message)
            })?;
            m.regs.resize(need, Value::None);
        }
        for (i, v) in values.into_iter().enumerate() {
            m.regs[base + i] = v;
        }
        Ok(())
    }

    fn clear_frame(&self, m: &mut Machine, unit: u32, base: usize) {
        let n = self.units[unit as usize].n_regs as usize;
        for r in &mut m.regs[base..base + n] {
            if !matches!(r, Value::None) {
                *r = Value::None;
            }
        }
    }

    fn error(&self, m: &mut Machine, (kind, message): PyErr, at: u32) -> RuntimeError {
        if let Some(top) = m.frames.last_mut() {
            top.at = at;
        }
        let mut trace = Vec::with_capacity(m.frames.len());
        let mut push_site = |(unit, at): (u32, u32)| {
            let Some(s) = self.units[unit as usize].sites.get(at as usize) else {
                return;
            };
            for (function, span) in s.calls.to_vec() {
                trace.push(TraceEntry { function, span });
            }
            trace.push(TraceEntry {
                function: s.function.clone(),
                span: s.span,
            });
        };
        for f in &m.frames {
            // The frames CPython would have for the tail calls this one ran.
            for k in 0..f.tail {
                push_site(f.tail_sites[usize::from(k > 0)]);
            }
            push_site((f.unit, f.at));
        }
        let span = trace
            .last()
            .map(|t| t.span)
            .unwrap_or(anfora_ir::Span::NONE);
        RuntimeError {
            kind: kind.to_string(),
            message,
            span,
            trace,
        }
    }

    /// Binds a call of `unit` (positional `args`, keyword names and values in `kw`) to its
    /// parameters, as Python does.
    fn bind(
        &self,
        unit: u32,
        args: Vec<Value>,
        kw: Option<(Vec<String>, Vec<Value>)>,
    ) -> Result<Vec<Value>, PyErr> {
        let u = &self.units[unit as usize];
        let n = u.n_params as usize;
        match (&u.signature, kw) {
            (_, None) if args.len() == n => Ok(args),
            (None, _) => Err(internal(format!(
                "@{} takes {n} arguments, got {}",
                u.name,
                args.len()
            ))),
            (Some(sig), kw) => {
                bind_call(sig, &args, kw, |c| from_const(c, &mut |g| self.function(g)))
            }
        }
    }

    /// The closure of a unit that captures nothing.
    fn function(&self, graph: anfora_ir::GraphId) -> Value {
        match self.unit_of_graph.get(&graph) {
            Some(&u) if self.units[u as usize].n_captures == 0 => {
                Value::Closure(Rc::new(Closure {
                    graph,
                    captures: Rc::from(Vec::new()),
                }))
            }
            _ => Value::None,
        }
    }

    /// Calls any callable value.
    fn apply(&self, callee: Value, args: Vec<Value>, out: &mut dyn Write) -> Result<Flow, PyErr> {
        let (c, args, kw) = match call::call_value(&callee, args, None, out)? {
            Called::Done(v) => return Ok(Flow::Value(v)),
            Called::Enter(c, args, kw) => (c, args, kw),
        };
        let Some(&u) = self.unit_of_graph.get(&c.graph) else {
            return Err(internal("a closure of a graph this program does not hold"));
        };
        let unit = &self.units[u as usize];
        let mut values = self.bind(u, args, kw)?;
        values.extend(c.captures.iter().cloned());
        if values.len() != (unit.n_params + unit.n_captures) as usize {
            return Err(internal(format!(
                "closure of @{} has the wrong number of captures",
                unit.name
            )));
        }
        Ok(Flow::Enter(u, values))
    }
}

/// Why the dispatch loop stops: the entry returned, or an instruction raised (the error and
/// the instruction's site).
enum Stop {
    Return(Value),
    Raise(PyErr, u32),
}

/// What an instruction leaves to the dispatch loop: go on, or stop.
type Step = ControlFlow<Stop>;

/// Stops with the error `e` of the instruction at site `at`.
#[inline(always)]
fn raise(e: PyErr, at: u32) -> Step {
    ControlFlow::Break(Stop::Raise(e, at))
}

/// One call of the entry: the program, the machine it runs on, and where it is.
struct Run<'a> {
    program: &'a Program,
    m: &'a mut Machine,
    out: &'a mut dyn Write,
    max_depth: usize,
    /// The sum of the frames' `tail`: with the frames, the depth `max_depth` bounds.
    tail_levels: usize,
    /// Values grown in small steps (calls and loop iterations) are a MemoryError while there
    /// is room to unwind: each call, tail call and jump ticks it.
    poll: Poll,
    /// The running frame's unit and first register.
    unit: u32,
    base: usize,
    /// The next instruction.
    pc: usize,
}

// Every method is inlined into the dispatch loop, and the loop into `execute`, so that the
// running frame's cursor stays in registers as in one function.
impl Run<'_> {
    /// The dispatch loop: one instruction after the other until the entry returns.
    #[inline(always)]
    fn interpret(&mut self) -> Result<Value, RuntimeError> {
        let program = self.program;
        loop {
            let instr = &program.units[self.unit as usize].code[self.pc];
            self.pc += 1;
            let step = match instr {
                Instr::Bin { dst, op, a, b, at } => self.bin(*dst, *op, *a, *b, *at),
                Instr::Prim {
                    dst,
                    args,
                    at,
                    with_next:
                        joint @ (WithNext::SideBySide | WithNext::IntoUpdate | WithNext::IntoRelu),
                    ..
                } => self.joint_product(*dst, args, *at, *joint),
                Instr::Prim {
                    dst,
                    prim,
                    args,
                    kernel,
                    at,
                    ..
                } => self.prim(*dst, *prim, kernel.as_ref(), args, *at),
                Instr::Fused {
                    dst,
                    kernel,
                    args,
                    at,
                } => self.fused(*dst, *kernel, args, *at),
                Instr::Copy { dst, src } => self.copy(*dst, *src),
                Instr::MakeClosure {
                    dst,
                    unit,
                    captures,
                } => self.make_closure(*dst, *unit, captures),
                Instr::Call {
                    dst,
                    unit,
                    args,
                    at,
                } => self.call(*dst, *unit, args, *at),
                Instr::CallValue {
                    dst,
                    callee,
                    args,
                    at,
                } => self.call_value(*dst, *callee, args, *at),
                Instr::Jump {
                    target,
                    moves,
                    call,
                } => match call {
                    Some(at) => self.call_jump(*at, *target, moves),
                    None => self.jump(*target, moves),
                },
                Instr::Branch(b) => self.branch(b),
                Instr::Drop { regs } => self.clear(regs),
                Instr::Return { src } => self.ret(*src),
                Instr::TailCall { unit, args, at } => self.tail_call(*unit, args, *at),
                Instr::TailCallValue { callee, args, at } => {
                    self.tail_call_value(*callee, args, *at)
                }
            };
            if let ControlFlow::Break(stop) = step {
                return match stop {
                    Stop::Return(v) => Ok(v),
                    Stop::Raise(e, at) => Err(self.program.error(self.m, e, at)),
                };
            }
        }
    }

    #[inline(always)]
    fn peek(&self, o: Opnd) -> &Value {
        peek(&self.m.regs, &self.program.consts, self.base, o)
    }

    #[inline(always)]
    fn load(&mut self, o: Opnd) -> Value {
        load(&mut self.m.regs, &self.program.consts, self.base, o)
    }

    #[inline(always)]
    fn set(&mut self, dst: Reg, v: Value) {
        set(&mut self.m.regs[self.base + dst as usize], v)
    }

    /// Stores an instruction's result in `dst`, or raises its error at `at`.
    #[inline(always)]
    fn write(&mut self, dst: Reg, r: OpResult, at: u32) -> Step {
        match r {
            Ok(v) => {
                self.set(dst, v);
                ControlFlow::Continue(())
            }
            Err(e) => raise(e, at),
        }
    }

    /// The values of `ops` in the scratch buffer, which `recycle` takes back.
    #[inline(always)]
    fn scratch_values(&mut self, ops: &[Opnd]) -> Vec<Value> {
        let mut vals = std::mem::take(&mut self.m.scratch);
        for &o in ops {
            vals.push(self.load(o));
        }
        vals
    }

    #[inline(always)]
    fn recycle(&mut self, mut vals: Vec<Value>) {
        vals.clear();
        self.m.scratch = vals;
    }

    /// The values of `ops` in a vector of their own (a callee's frame or a closure keeps it).
    #[inline(always)]
    fn values(&mut self, ops: &[Opnd]) -> Vec<Value> {
        ops.iter().map(|&o| self.load(o)).collect()
    }

    /// `a op b`: ints and floats inline, anything else through the generic operator.
    #[inline(always)]
    fn binary(&mut self, op: BinOp, a: Opnd, b: Opnd) -> OpResult {
        match fast_bin(op, self.peek(a), self.peek(b)) {
            Some(v) => Ok(v),
            None => {
                let x = self.load(a);
                let y = self.load(b);
                anfora_ops::inplace::binary(op.prim, x, y)
            }
        }
    }

    #[inline(always)]
    fn bin(&mut self, dst: Reg, op: BinOp, a: Opnd, b: Opnd, at: u32) -> Step {
        let r = self.binary(op, a, b);
        self.write(dst, r, at)
    }

    /// A product that runs with the next instruction (see [`WithNext`]).
    #[inline(always)]
    fn joint_product(&mut self, dst: Reg, args: &[Opnd], at: u32, joint: WithNext) -> Step {
        let program = self.program;
        let Some(Instr::Prim {
            dst: dst2,
            args: args2,
            at: at2,
            ..
        }) = program.units[self.unit as usize].code.get(self.pc)
        else {
            return raise(internal("a joint product without its partner"), at);
        };
        self.pc += 1;
        let mut vals = self.scratch_values(args);
        // An update's gradient is this product, not computed yet (a product side by side
        // never reads the other).
        let mut vals2: SmallVec<[Value; 5]> = args2
            .iter()
            .map(|&o| match o {
                Opnd::Take(r) if r == dst => Value::None,
                o => self.load(o),
            })
            .collect();
        let (r1, r2) = joint_products(joint, &mut vals, &mut vals2, self.out);
        self.recycle(vals);
        drop(vals2);
        self.write(dst, r1, at)?;
        self.write(*dst2, r2, *at2)
    }

    #[inline(always)]
    fn prim(
        &mut self,
        dst: Reg,
        prim: Prim,
        kernel: Option<&Kernel>,
        args: &[Opnd],
        at: u32,
    ) -> Step {
        let mut vals = self.scratch_values(args);
        let r = match kernel {
            None => anfora_ops::inplace::prim(prim, &mut vals, self.out),
            Some(k) => k.call(&mut vals, self.out),
        };
        self.recycle(vals);
        // All-reduces started by `ops.all_reduce_start` advance between operations.
        anfora_ops::collective::progress();
        self.write(dst, r, at)
    }

    #[inline(always)]
    fn fused(&mut self, dst: Reg, kernel: u32, args: &[Opnd], at: u32) -> Step {
        let mut vals = self.scratch_values(args);
        let r = run_kernel(&self.program.kernels[kernel as usize], &mut vals, self.out);
        self.recycle(vals);
        self.write(dst, r, at)
    }

    #[inline(always)]
    fn copy(&mut self, dst: Reg, src: Opnd) -> Step {
        let v = self.load(src);
        self.set(dst, v);
        ControlFlow::Continue(())
    }

    #[inline(always)]
    fn make_closure(&mut self, dst: Reg, unit: u32, captures: &[Opnd]) -> Step {
        let captures = self.values(captures);
        self.m.regs[self.base + dst as usize] = Value::Closure(Rc::new(Closure {
            graph: self.program.units[unit as usize].graph,
            captures: Rc::from(captures),
        }));
        ControlFlow::Continue(())
    }

    #[inline(always)]
    fn call(&mut self, dst: Reg, unit: u32, args: &[Opnd], at: u32) -> Step {
        let values = self.values(args);
        self.enter(unit, values, dst, at)
    }

    #[inline(always)]
    fn call_value(&mut self, dst: Reg, callee: Opnd, args: &[Opnd], at: u32) -> Step {
        let f = self.load(callee);
        let values = self.values(args);
        match self.program.apply(f, values, self.out) {
            Ok(Flow::Value(v)) => {
                self.set(dst, v);
                ControlFlow::Continue(())
            }
            Ok(Flow::Enter(u, values)) => self.enter(u, values, dst, at),
            Err(e) => raise(e, at),
        }
    }

    /// Pushes a frame for `unit` with `values`, the callee's result going to `dst`.
    #[inline(always)]
    fn enter(&mut self, unit: u32, values: Vec<Value>, dst: Reg, at: u32) -> Step {
        if self.m.frames.len() + self.tail_levels >= self.max_depth {
            return raise(recursion_error(self.max_depth), at);
        }
        self.safe_point(Some(at))?;
        let top = self.m.frames.last_mut().expect("a running frame");
        top.pc = self.pc;
        top.at = at;
        let base = self.base + self.program.units[self.unit as usize].n_regs as usize;
        if let Err(e) = self.program.enter_frame(self.m, unit, base, values) {
            return raise(e, at);
        }
        self.m.frames.push(Frame {
            unit,
            base,
            pc: 0,
            ret: dst,
            at: 0,
            tail: 0,
            tail_sites: [(0, 0); 2],
        });
        self.unit = unit;
        self.base = base;
        self.pc = 0;
        ControlFlow::Continue(())
    }

    /// A tail call of a `def` lowered to a jump: a level deeper, then the jump.
    #[inline(always)]
    fn call_jump(&mut self, at: u32, target: u32, moves: &[(Reg, Opnd)]) -> Step {
        self.deepen(at)?;
        self.jump(target, moves)
    }

    /// Ticks the memory poll; a jump, which has no site, reports the frame's last call.
    #[inline(always)]
    fn safe_point(&mut self, at: Option<u32>) -> Step {
        match self.poll.tick() {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                let at = at.unwrap_or_else(|| self.m.frames.last().map_or(0, |f| f.at));
                raise(pynum::tensor_err(e), at)
            }
        }
    }

    /// Parallel moves, then the jump.
    #[inline(always)]
    fn jump(&mut self, target: u32, moves: &[(Reg, Opnd)]) -> Step {
        self.safe_point(None)?;
        match moves {
            [] => {}
            [(d, s)] => {
                let v = self.load(*s);
                self.set(*d, v);
            }
            [(d1, s1), (d2, s2)] => {
                let v1 = self.load(*s1);
                let v2 = self.load(*s2);
                self.set(*d1, v1);
                self.set(*d2, v2);
            }
            _ => {
                let mut vals = std::mem::take(&mut self.m.scratch);
                for (_, s) in moves {
                    vals.push(self.load(*s));
                }
                for ((d, _), v) in moves.iter().zip(vals.drain(..)) {
                    self.m.regs[self.base + *d as usize] = v;
                }
                self.m.scratch = vals;
            }
        }
        self.pc = target as usize;
        ControlFlow::Continue(())
    }

    /// Tests `cond` (or `cond op b`), clears what dies on the edge taken, and takes it.
    #[inline(always)]
    fn branch(&mut self, b: &Branch) -> Step {
        let (cond, compare) = (b.cond, b.compare.as_ref());
        let truth = match compare {
            None => match self.peek(cond) {
                Value::Bool(b) => Ok(*b),
                v => python::truth(v),
            },
            Some(&(op, x, cmp_at)) => match self.binary(op, cond, x) {
                Ok(Value::Bool(t)) => Ok(t),
                Ok(v) => python::truth(&v),
                Err(e) => return raise(e, cmp_at),
            },
        };
        for o in std::iter::once(cond).chain(compare.map(|c| c.1)) {
            if let Opnd::Take(r) = o {
                self.set(r, Value::None);
            }
        }
        let (target, kill) = match truth {
            Ok(true) => (b.then_pc, &b.kill_then),
            Ok(false) => (b.else_pc, &b.kill_else),
            Err(e) => return raise(e, b.at),
        };
        // A branch backwards closes a loop (jump threading can make a loop's back edge a
        // branch): it is a safe point, as a jump is, so the loop sees its time and memory limits.
        if target as usize <= self.pc {
            self.safe_point(Some(b.at))?;
        }
        self.pc = target as usize;
        self.clear(kill)
    }

    /// Clears registers whose values are dead.
    #[inline(always)]
    fn clear(&mut self, regs: &[Reg]) -> Step {
        for &r in regs {
            self.m.regs[self.base + r as usize] = Value::None;
        }
        ControlFlow::Continue(())
    }

    #[inline(always)]
    fn ret(&mut self, src: Opnd) -> Step {
        let v = self.load(src);
        self.leave(v)
    }

    /// Returns `v` from the running frame.
    #[inline(always)]
    fn leave(&mut self, v: Value) -> Step {
        self.program.clear_frame(self.m, self.unit, self.base);
        let done = self.m.frames.pop().expect("a running frame");
        self.tail_levels -= done.tail;
        let Some(caller) = self.m.frames.last() else {
            return ControlFlow::Break(Stop::Return(v));
        };
        self.unit = caller.unit;
        self.base = caller.base;
        self.pc = caller.pc;
        self.m.regs[self.base + done.ret as usize] = v;
        ControlFlow::Continue(())
    }

    #[inline(always)]
    fn tail_call(&mut self, unit: u32, args: &[Opnd], at: u32) -> Step {
        if self.program.units[unit as usize].deepens {
            self.deepen(at)?;
        }
        let values = self.values(args);
        self.replace(unit, values)
    }

    /// Counts a tail call of a `def` as the level of recursion CPython's frame for it would
    /// be, so that tail recursion stops where CPython's does; the frame releases its levels
    /// when it returns.
    #[inline(always)]
    fn deepen(&mut self, at: u32) -> Step {
        if self.m.frames.len() + self.tail_levels >= self.max_depth {
            return raise(recursion_error(self.max_depth), at);
        }
        let top = self.m.frames.last_mut().expect("a running frame");
        if top.tail == 0 {
            top.tail_sites[0] = (self.unit, at);
        }
        top.tail += 1;
        top.tail_sites[1] = (self.unit, at);
        self.tail_levels += 1;
        ControlFlow::Continue(())
    }

    #[inline(always)]
    fn tail_call_value(&mut self, callee: Opnd, args: &[Opnd], at: u32) -> Step {
        let f = self.load(callee);
        let values = self.values(args);
        if let Some(top) = self.m.frames.last_mut() {
            top.at = at;
        }
        match self.program.apply(f, values, self.out) {
            Ok(Flow::Value(v)) => self.leave(v),
            Ok(Flow::Enter(u, values)) => {
                if self.program.units[u as usize].deepens {
                    self.deepen(at)?;
                }
                self.replace(u, values)
            }
            Err(e) => raise(e, at),
        }
    }

    /// Replaces the running frame by one of `unit` with `values`.
    #[inline(always)]
    fn replace(&mut self, unit: u32, values: Vec<Value>) -> Step {
        self.safe_point(None)?;
        self.program.clear_frame(self.m, self.unit, self.base);
        if let Err(e) = self.program.enter_frame(self.m, unit, self.base, values) {
            let at = self.m.frames.last().map_or(0, |f| f.at);
            return raise(e, at);
        }
        self.m.frames.last_mut().expect("a running frame").unit = unit;
        self.unit = unit;
        self.pc = 0;
        ControlFlow::Continue(())
    }
}

/// A product (operands in `first`) and the instruction after it (operands in `second`), run
/// together as `joint` says; the product's result is `None` when it went into an update.
fn joint_products(
    joint: WithNext,
    first: &mut [Value],
    second: &mut [Value],
    out: &mut dyn Write,
) -> (OpResult, OpResult) {
    let gemm = Prim::Gemm;
    match joint {
        WithNext::SideBySide => match anfora_ops::family::linalg::gemm_pair(first, second) {
            Some(rs) => rs,
            // Not two products of tensors: one by one, as written, for the error.
            None => match anfora_ops::inplace::prim(gemm, first, out) {
                Ok(v) => (Ok(v), anfora_ops::inplace::prim(gemm, second, out)),
                e => (e, Ok(Value::None)),
            },
        },
        WithNext::IntoRelu => match anfora_ops::family::linalg::gemm_relu(first) {
            Some(r) => (Ok(Value::None), r),
            None => into_next(first, second, 0, Prim::Relu, out),
        },
        _ => match anfora_ops::family::optim::sgd_product(second, first) {
            Some(r) => (Ok(Value::None), r),
            None => into_next(first, second, 1, Prim::Sgd, out),
        },
    }
}

/// The product, then `next` with it as argument `at`, as written.
fn into_next(
    first: &mut [Value],
    second: &mut [Value],
    at: usize,
    next: Prim,
    out: &mut dyn Write,
) -> (OpResult, OpResult) {
    match anfora_ops::inplace::prim(Prim::Gemm, first, out) {
        Ok(g) => {
            second[at] = g;
            (
                Ok(Value::None),
                anfora_ops::inplace::prim(next, second, out),
            )
        }
        e => (e, Ok(Value::None)),
    }
}
