//! The executor: runs a [`Program`] on one contiguous register stack with an explicit frame
//! stack, so deep recursion raises RecursionError instead of overflowing the Rust stack, and
//! tail calls and loops run in constant space.

use std::io::Write;
use std::rc::Rc;

use anfora_ir::{ArgSource, Prim};
use anfora_ir::{RuntimeError, TraceEntry};
use anfora_ops::call::{bind_prim, split_call_kw};
use anfora_ops::pynum::{self, PyErr, type_error};
use anfora_ops::value::{Closure, from_const};
use anfora_ops::{Value, call, python};
use smallvec::SmallVec;

use crate::Program;
use crate::program::{BinOp, FusedArg, FusedProgram, Instr, Opnd, Reg, WithNext};

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
    use BinOp::*;
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            let (x, y) = (*x, *y);
            Some(match op {
                Add => Value::Int(x.checked_add(y)?),
                Sub => Value::Int(x.checked_sub(y)?),
                Mul => Value::Int(x.checked_mul(y)?),
                Div => Value::Float(pynum::int_true_div(x, y).ok()?),
                FloorDiv => Value::Int(pynum::int_floor_div(x, y).ok()?),
                Mod => Value::Int(pynum::int_mod(x, y).ok()?),
                Lt => Value::Bool(x < y),
                Le => Value::Bool(x <= y),
                Gt => Value::Bool(x > y),
                Ge => Value::Bool(x >= y),
                Eq => Value::Bool(x == y),
                Ne => Value::Bool(x != y),
            })
        }
        (Value::Float(x), Value::Float(y)) => {
            let (x, y) = (*x, *y);
            Some(match op {
                Add => Value::Float(x + y),
                Sub => Value::Float(x - y),
                Mul => Value::Float(x * y),
                Div => Value::Float(pynum::float_true_div(x, y).ok()?),
                FloorDiv => Value::Float(pynum::float_floor_div(x, y).ok()?),
                Mod => Value::Float(pynum::float_mod(x, y).ok()?),
                Lt => Value::Bool(x < y),
                Le => Value::Bool(x <= y),
                Gt => Value::Bool(x > y),
                Ge => Value::Bool(x >= y),
                Eq => Value::Bool(x == y),
                Ne => Value::Bool(x != y),
            })
        }
        _ => None,
    }
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
    if let Some((dtypes, kernel)) = &k.kernel {
        let fits = vals
            .iter()
            .zip(dtypes)
            .all(|(v, &d)| matches!(v, Value::Tensor(t) if t.dtype() == d));
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
        });
        let bound = self.bind(0, args, None).map_err(|e| self.error(m, e, 0))?;
        self.enter_frame(m, 0, 0, bound);
        let started = std::time::Instant::now();
        let awake = (m.last_run >= anfora_tensor::KeepThreadsAwake::WORTH)
            .then(anfora_tensor::KeepThreadsAwake::start)
            .flatten();
        let result = self.interpret(m, out, max_depth);
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

    /// Places `values` (parameters, then captures) in the registers of a frame at `base`.
    fn enter_frame(&self, m: &mut Machine, unit: u32, base: usize, values: Vec<Value>) {
        let need = base + self.units[unit as usize].n_regs as usize;
        if m.regs.len() < need {
            m.regs.resize(need, Value::None);
        }
        for (i, v) in values.into_iter().enumerate() {
            m.regs[base + i] = v;
        }
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
        for f in &m.frames {
            let Some(s) = self.units[f.unit as usize].sites.get(f.at as usize) else {
                continue;
            };
            for (function, span) in s.calls.iter() {
                trace.push(TraceEntry {
                    function: function.clone(),
                    span: *span,
                });
            }
            trace.push(TraceEntry {
                function: s.function.clone(),
                span: s.span,
            });
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
                let (names, values) = kw.unwrap_or_default();
                let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
                let bound = sig
                    .bind(args.len(), &refs)
                    .map_err(|e| type_error(e.message(&sig.name)))?;
                Ok(bound
                    .into_iter()
                    .map(|s| match s {
                        ArgSource::Positional(i) => args[i].clone(),
                        ArgSource::Keyword(j) => values[j].clone(),
                        ArgSource::Default(c) => from_const(&c, &mut |g| self.function(g)),
                    })
                    .collect())
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
    fn apply(
        &self,
        callee: Value,
        args: Vec<Value>,
        kw: Option<(Vec<String>, Vec<Value>)>,
        out: &mut dyn Write,
    ) -> Result<Flow, PyErr> {
        match &callee {
            Value::Closure(c) => {
                let Some(&u) = self.unit_of_graph.get(&c.graph) else {
                    return Err(internal("a closure of a graph this program does not hold"));
                };
                let mut values = self.bind(u, args, kw)?;
                values.extend(c.captures.iter().cloned());
                if values.len()
                    != (self.units[u as usize].n_params + self.units[u as usize].n_captures)
                        as usize
                {
                    return Err(internal(format!(
                        "closure of @{} has the wrong number of captures",
                        self.units[u as usize].name
                    )));
                }
                Ok(Flow::Enter(u, values))
            }
            Value::Prim(Prim::CallKw) => {
                let (f, positional, kw) = split_call_kw(args)?;
                self.apply(f, positional, Some(kw), out)
            }
            Value::Prim(p) => {
                let bound = match kw {
                    None => args,
                    kw => bind_prim(*p, call::without_monads(args), kw)?,
                };
                call::call_prim(*p, &bound, out).map(Flow::Value)
            }
            Value::Partial(pa) => {
                let mut all = pa.args.clone();
                all.extend(args);
                self.apply(pa.func.clone(), all, kw, out)
            }
            Value::Method(mm) => {
                let kwargs = match kw {
                    Some((names, values)) => names.into_iter().zip(values).collect(),
                    None => Vec::new(),
                };
                python::call_method(mm.0, &mm.1, args, kwargs).map(Flow::Value)
            }
            other => Err(type_error(format!(
                "'{}' object is not callable",
                other.type_name()
            ))),
        }
    }

    fn interpret(
        &self,
        m: &mut Machine,
        out: &mut dyn Write,
        max_depth: usize,
    ) -> Result<Value, RuntimeError> {
        let consts = &self.consts[..];
        let mut unit_id = 0u32;
        let mut base = 0usize;
        let mut pc = 0usize;
        macro_rules! fail {
            ($e:expr, $at:expr) => {{
                let e = $e;
                return Err(self.error(m, e, $at));
            }};
        }
        macro_rules! args {
            ($ops:expr) => {{
                let mut v = std::mem::take(&mut m.scratch);
                for &o in $ops.iter() {
                    v.push(load(&mut m.regs, consts, base, o));
                }
                v
            }};
        }
        // Pushes a frame for `unit` with `values`, the callee's result going to `dst`.
        macro_rules! call {
            ($unit:expr, $values:expr, $dst:expr, $at:expr) => {{
                if m.frames.len() >= max_depth {
                    fail!(
                        (
                            "RecursionError",
                            format!("maximum recursion depth exceeded ({max_depth} nested calls)")
                        ),
                        $at
                    );
                }
                let top = m.frames.last_mut().expect("a running frame");
                top.pc = pc;
                top.at = $at;
                let new_base = base + self.units[unit_id as usize].n_regs as usize;
                self.enter_frame(m, $unit, new_base, $values);
                m.frames.push(Frame {
                    unit: $unit,
                    base: new_base,
                    pc: 0,
                    ret: $dst,
                    at: 0,
                });
                unit_id = $unit;
                base = new_base;
                pc = 0;
            }};
        }
        // Replaces the running frame by one of `unit` with `values`.
        macro_rules! tail {
            ($unit:expr, $values:expr) => {{
                self.clear_frame(m, unit_id, base);
                let unit: u32 = $unit;
                self.enter_frame(m, unit, base, $values);
                let top = m.frames.last_mut().expect("a running frame");
                top.unit = unit;
                unit_id = unit;
                pc = 0;
            }};
        }
        // Returns `v` from the running frame.
        macro_rules! ret {
            ($v:expr) => {{
                let v: Value = $v;
                self.clear_frame(m, unit_id, base);
                let done = m.frames.pop().expect("a running frame");
                match m.frames.last() {
                    None => return Ok(v),
                    Some(caller) => {
                        unit_id = caller.unit;
                        base = caller.base;
                        pc = caller.pc;
                        m.regs[base + done.ret as usize] = v;
                    }
                }
            }};
        }
        loop {
            let unit = &self.units[unit_id as usize];
            let instr = &unit.code[pc];
            pc += 1;
            match instr {
                Instr::Bin { dst, op, a, b, at } => {
                    let fast = fast_bin(
                        *op,
                        peek(&m.regs, consts, base, *a),
                        peek(&m.regs, consts, base, *b),
                    );
                    let v = match fast {
                        Some(v) => v,
                        None => {
                            let x = load(&mut m.regs, consts, base, *a);
                            let y = load(&mut m.regs, consts, base, *b);
                            match anfora_ops::inplace::binary(op.prim(), x, y) {
                                Ok(v) => v,
                                Err(e) => fail!(e, *at),
                            }
                        }
                    };
                    set(&mut m.regs[base + *dst as usize], v);
                }
                Instr::Prim {
                    dst,
                    args,
                    at,
                    with_next: joint @ (WithNext::SideBySide | WithNext::IntoUpdate),
                    ..
                } => {
                    let Some(Instr::Prim {
                        dst: dst2,
                        args: args2,
                        at: at2,
                        ..
                    }) = unit.code.get(pc)
                    else {
                        fail!(internal("a joint product without its partner"), *at);
                    };
                    pc += 1;
                    let mut vals = args!(args);
                    // An update's gradient is this product, not computed yet (a product side
                    // by side never reads the other).
                    let mut vals2: SmallVec<[Value; 5]> = args2
                        .iter()
                        .map(|&o| match o {
                            Opnd::Take(r) if r == *dst => Value::None,
                            o => load(&mut m.regs, consts, base, o),
                        })
                        .collect();
                    let gemm = Prim::Gemm;
                    let (r1, r2) = if *joint == WithNext::SideBySide {
                        match anfora_ops::family::linalg::gemm_pair(&mut vals, &mut vals2) {
                            Some(rs) => rs,
                            // Not two products of tensors: one by one, as written, for the error.
                            None => match anfora_ops::inplace::prim(gemm, &mut vals, out) {
                                Ok(v) => (Ok(v), anfora_ops::inplace::prim(gemm, &mut vals2, out)),
                                e => (e, Ok(Value::None)),
                            },
                        }
                    } else {
                        match anfora_ops::family::optim::sgd_product(&vals2, &vals) {
                            Some(r) => (Ok(Value::None), r),
                            // As written: the product, then the update.
                            None => match anfora_ops::inplace::prim(gemm, &mut vals, out) {
                                Ok(g) => {
                                    vals2[1] = g;
                                    let sgd = anfora_ops::inplace::prim(Prim::Sgd, &mut vals2, out);
                                    (Ok(Value::None), sgd)
                                }
                                e => (e, Ok(Value::None)),
                            },
                        }
                    };
                    vals.clear();
                    m.scratch = vals;
                    drop(vals2);
                    match r1 {
                        Ok(v) => set(&mut m.regs[base + *dst as usize], v),
                        Err(e) => fail!(e, *at),
                    }
                    match r2 {
                        Ok(v) => set(&mut m.regs[base + *dst2 as usize], v),
                        Err(e) => fail!(e, *at2),
                    }
                }
                Instr::Prim {
                    dst,
                    prim,
                    args,
                    kernel,
                    at,
                    ..
                } => {
                    let mut vals = args!(args);
                    let r = match kernel {
                        None => anfora_ops::inplace::prim(*prim, &mut vals, out),
                        Some(k) => k.call(&mut vals, out),
                    };
                    vals.clear();
                    m.scratch = vals;
                    match r {
                        Ok(v) => set(&mut m.regs[base + *dst as usize], v),
                        Err(e) => fail!(e, *at),
                    }
                }
                Instr::Fused {
                    dst,
                    kernel,
                    args,
                    at,
                } => {
                    let mut vals = args!(args);
                    let r = run_kernel(&self.kernels[*kernel as usize], &mut vals, out);
                    vals.clear();
                    m.scratch = vals;
                    match r {
                        Ok(v) => set(&mut m.regs[base + *dst as usize], v),
                        Err(e) => fail!(e, *at),
                    }
                }
                Instr::Copy { dst, src } => {
                    let v = load(&mut m.regs, consts, base, *src);
                    set(&mut m.regs[base + *dst as usize], v);
                }
                Instr::MakeClosure {
                    dst,
                    unit: u,
                    captures,
                } => {
                    let caps: Vec<Value> = captures
                        .iter()
                        .map(|&o| load(&mut m.regs, consts, base, o))
                        .collect();
                    m.regs[base + *dst as usize] = Value::Closure(Rc::new(Closure {
                        graph: self.units[*u as usize].graph,
                        captures: Rc::from(caps),
                    }));
                }
                Instr::Call {
                    dst,
                    unit: u,
                    args,
                    at,
                } => {
                    let values: Vec<Value> = args
                        .iter()
                        .map(|&o| load(&mut m.regs, consts, base, o))
                        .collect();
                    call!(*u, values, *dst, *at);
                }
                Instr::CallValue {
                    dst,
                    callee,
                    args,
                    at,
                } => {
                    let f = load(&mut m.regs, consts, base, *callee);
                    let values: Vec<Value> = args
                        .iter()
                        .map(|&o| load(&mut m.regs, consts, base, o))
                        .collect();
                    match self.apply(f, values, None, out) {
                        Ok(Flow::Value(v)) => set(&mut m.regs[base + *dst as usize], v),
                        Ok(Flow::Enter(u, values)) => call!(u, values, *dst, *at),
                        Err(e) => fail!(e, *at),
                    }
                }
                Instr::Jump { target, moves } => {
                    match &moves[..] {
                        [] => {}
                        [(d, s)] => {
                            let v = load(&mut m.regs, consts, base, *s);
                            set(&mut m.regs[base + *d as usize], v);
                        }
                        [(d1, s1), (d2, s2)] => {
                            let v1 = load(&mut m.regs, consts, base, *s1);
                            let v2 = load(&mut m.regs, consts, base, *s2);
                            set(&mut m.regs[base + *d1 as usize], v1);
                            set(&mut m.regs[base + *d2 as usize], v2);
                        }
                        _ => {
                            let mut vals = std::mem::take(&mut m.scratch);
                            for (_, s) in moves.iter() {
                                vals.push(load(&mut m.regs, consts, base, *s));
                            }
                            for ((d, _), v) in moves.iter().zip(vals.drain(..)) {
                                m.regs[base + *d as usize] = v;
                            }
                            m.scratch = vals;
                        }
                    }
                    pc = *target as usize;
                }
                Instr::Branch {
                    cond,
                    compare,
                    then_pc,
                    else_pc,
                    kill_then,
                    kill_else,
                    at,
                } => {
                    let truth = match compare {
                        None => match peek(&m.regs, consts, base, *cond) {
                            Value::Bool(b) => Ok(*b),
                            v => python::truth(v),
                        },
                        Some((op, b, cmp_at)) => {
                            let fast = fast_bin(
                                *op,
                                peek(&m.regs, consts, base, *cond),
                                peek(&m.regs, consts, base, *b),
                            );
                            match fast {
                                Some(Value::Bool(t)) => Ok(t),
                                _ => {
                                    let x = load(&mut m.regs, consts, base, *cond);
                                    let y = load(&mut m.regs, consts, base, *b);
                                    match anfora_ops::inplace::binary(op.prim(), x, y) {
                                        Ok(Value::Bool(t)) => Ok(t),
                                        Ok(v) => python::truth(&v),
                                        Err(e) => fail!(e, *cmp_at),
                                    }
                                }
                            }
                        }
                    };
                    for o in std::iter::once(cond).chain(compare.as_ref().map(|c| &c.1)) {
                        if let Opnd::Take(r) = o {
                            set(&mut m.regs[base + *r as usize], Value::None);
                        }
                    }
                    let (target, kill) = match truth {
                        Ok(true) => (*then_pc, kill_then),
                        Ok(false) => (*else_pc, kill_else),
                        Err(e) => fail!(e, *at),
                    };
                    for &r in kill.iter() {
                        m.regs[base + r as usize] = Value::None;
                    }
                    pc = target as usize;
                }
                Instr::Drop { regs } => {
                    for &r in regs.iter() {
                        m.regs[base + r as usize] = Value::None;
                    }
                }
                Instr::Return { src } => {
                    let v = load(&mut m.regs, consts, base, *src);
                    ret!(v);
                }
                Instr::TailCall { unit: u, args, at } => {
                    let _ = at;
                    let values: Vec<Value> = args
                        .iter()
                        .map(|&o| load(&mut m.regs, consts, base, o))
                        .collect();
                    tail!(*u, values);
                }
                Instr::TailCallValue { callee, args, at } => {
                    let f = load(&mut m.regs, consts, base, *callee);
                    let values: Vec<Value> = args
                        .iter()
                        .map(|&o| load(&mut m.regs, consts, base, o))
                        .collect();
                    if let Some(top) = m.frames.last_mut() {
                        top.at = *at;
                    }
                    match self.apply(f, values, None, out) {
                        Ok(Flow::Value(v)) => ret!(v),
                        Ok(Flow::Enter(u, values)) => tail!(u, values),
                        Err(e) => fail!(e, *at),
                    }
                }
            }
        }
    }
}
