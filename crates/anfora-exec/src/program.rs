//! Linear register programs: what the lower stage produces and the executor runs.
//!
//! A program is a set of units. A unit is one call frame: a function (or closure, or a block
//! that is called other than in tail position) together with every block graph that is only
//! ever tail-called from inside it. Blocks become labels in the unit's code, so `if`, `while`
//! and `for` run as jumps inside one frame. Each unit has a flat register file: the root
//! graph's parameters first, then the captured free variables, then one register per node.

use std::fmt::Write as _;
use std::sync::Arc;

use anfora_ir::{GraphId, Prim, Signature, Span};
use anfora_ops::Value;
use anfora_ops::kernels::Kernel;
use anfora_tensor::fused::FusedKernel;
use anfora_tensor::{BinaryOp, DType};

/// Register index inside a frame.
pub type Reg = u32;

/// An instruction operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opnd {
    /// Read a register (the value stays).
    Reg(Reg),
    /// Read a register for the last time: the value is moved out, so a buffer it owns is
    /// released as soon as the instruction is done with it, or reused in place.
    Take(Reg),
    /// An entry of the program's constant pool.
    Const(u32),
}

/// Where an instruction came from, for error messages and tracebacks.
#[derive(Clone, Debug)]
pub struct Site {
    pub span: Span,
    /// The Python function the instruction belongs to.
    pub function: Arc<str>,
    /// Calls the instruction's node was inlined through, outermost first: each is a
    /// traceback line of its own.
    pub calls: anfora_ir::CallChain,
}

/// A binary operator with inline fast paths for Python ints and floats: Python's arithmetic
/// and comparisons, by their primitive and its elementwise operator (the declaration's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinOp {
    pub prim: Prim,
    pub op: BinaryOp,
}

impl BinOp {
    pub fn from_prim(prim: Prim) -> Option<BinOp> {
        let fast = matches!(
            prim,
            Prim::Add | Prim::Sub | Prim::Mul | Prim::Div | Prim::FloorDiv | Prim::Mod
        ) || Self::comparison(prim);
        let op = prim.def().kernels.binary_op().filter(|_| fast)?;
        Some(BinOp { prim, op })
    }

    pub fn is_comparison(self) -> bool {
        Self::comparison(self.prim)
    }

    fn comparison(p: Prim) -> bool {
        matches!(
            p,
            Prim::Lt | Prim::Le | Prim::Gt | Prim::Ge | Prim::Eq | Prim::Ne
        )
    }
}

/// How an instruction runs together with the one after it (set by `peephole` on products).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WithNext {
    /// On its own.
    Alone,
    /// Side by side with the next instruction, an independent product: both read their
    /// operands, then both compute, then both results are written.
    SideBySide,
    /// Into the next instruction, an SGD update whose gradient is this product and its only
    /// use: the update is computed by parts of the product, without the product as a value.
    /// Where that kernel does not apply, the two run one after the other as written.
    IntoUpdate,
    /// Into the next instruction, a ReLU whose operand is this product and its only use: the
    /// product's kernel applies ReLU as it stores the sums, without a pass of its own.
    IntoRelu,
}

#[derive(Clone, Debug)]
pub enum Instr {
    /// `dst = a op b`.
    Bin {
        dst: Reg,
        op: BinOp,
        a: Opnd,
        b: Opnd,
        at: u32,
    },
    /// `dst = prim(args...)` (arguments already bound). `kernel` is the registered kernel
    /// when it is not the CPU backend's own (which runs when it is `None`).
    Prim {
        dst: Reg,
        prim: Prim,
        args: Box<[Opnd]>,
        kernel: Option<Kernel>,
        at: u32,
        /// How a product (`Gemm`) runs with the next instruction; see `peephole`.
        with_next: WithNext,
    },
    /// `dst = fused kernel(args...)`: a chain of elementwise ops in one pass.
    Fused {
        dst: Reg,
        kernel: u32,
        args: Box<[Opnd]>,
        at: u32,
    },
    /// `dst = copy of src` (constants into registers, closures without captures).
    Copy {
        dst: Reg,
        src: Opnd,
    },
    /// `dst = closure of unit` with the given captured values.
    MakeClosure {
        dst: Reg,
        unit: u32,
        captures: Box<[Opnd]>,
    },
    /// A call of a known unit: `args` are its parameters then its captures.
    Call {
        dst: Reg,
        unit: u32,
        args: Box<[Opnd]>,
        at: u32,
    },
    /// A call of any callable value (closure, primitive, partial, method).
    CallValue {
        dst: Reg,
        callee: Opnd,
        args: Box<[Opnd]>,
        at: u32,
    },
    /// Parallel moves (`dst_i = src_i`, all read before any is written), then jump.
    /// `call` is the site of a tail call of a `def` lowered to this jump (its own recursion,
    /// or another `def` only ever tail-called): it counts a level of recursion.
    Jump {
        target: u32,
        moves: Box<[(Reg, Opnd)]>,
        call: Option<u32>,
    },
    /// Jump to `then_pc` if `cond` is true (Python truth), else to `else_pc`; registers that
    /// die on an edge are cleared when it is taken. With `compare = Some((op, b))` the
    /// condition is `cond op b` (a comparison fused into the branch; its errors are reported
    /// at the third element, the comparison's site).
    Branch(Branch),
    /// Clears registers whose values are dead.
    Drop {
        regs: Box<[Reg]>,
    },
    Return {
        src: Opnd,
    },
    /// Replaces this frame by a call of a known unit.
    TailCall {
        unit: u32,
        args: Box<[Opnd]>,
        at: u32,
    },
    /// Replaces this frame by a call of any callable value.
    TailCallValue {
        callee: Opnd,
        args: Box<[Opnd]>,
        at: u32,
    },
}

/// A two-way branch on `cond` (or on `compare`'s comparison of `cond` with an operand, whose
/// site is its third part), to `then_pc` or `else_pc`, clearing the registers that die on the
/// edge taken.
#[derive(Clone, Debug)]
pub struct Branch {
    pub cond: Opnd,
    pub compare: Option<(BinOp, Opnd, u32)>,
    pub then_pc: u32,
    pub else_pc: u32,
    pub kill_then: Box<[Reg]>,
    pub kill_else: Box<[Reg]>,
    pub at: u32,
}

/// Calls `$f` on every operand of `$instr` in reading order; `$iter` is `iter` or `iter_mut`,
/// so the shared and the mutable accessor read the one list of operand fields.
macro_rules! each_operand {
    ($instr:expr, $f:ident, $iter:ident) => {
        match $instr {
            Instr::Bin { a, b, .. } => {
                $f(a);
                $f(b);
            }
            Instr::Prim { args, .. }
            | Instr::Fused { args, .. }
            | Instr::Call { args, .. }
            | Instr::TailCall { args, .. } => args.$iter().for_each($f),
            Instr::Copy { src, .. } | Instr::Return { src } => $f(src),
            Instr::MakeClosure { captures, .. } => captures.$iter().for_each($f),
            Instr::CallValue { callee, args, .. } | Instr::TailCallValue { callee, args, .. } => {
                $f(callee);
                args.$iter().for_each($f);
            }
            Instr::Jump { moves, .. } => moves.$iter().for_each(|(_, s)| $f(s)),
            Instr::Branch(Branch { cond, compare, .. }) => {
                $f(cond);
                if let Some((_, x, _)) = compare {
                    $f(x);
                }
            }
            Instr::Drop { .. } => {}
        }
    };
}

/// Calls `$f` on the jump and branch targets of `$instr` (by reference or mutably).
macro_rules! each_target {
    ($instr:expr, $f:ident) => {
        match $instr {
            Instr::Jump { target, .. } => $f(target),
            Instr::Branch(Branch {
                then_pc, else_pc, ..
            }) => {
                $f(then_pc);
                $f(else_pc);
            }
            _ => {}
        }
    };
}

impl Instr {
    /// Registers read, in the order the instruction reads them.
    pub fn uses(&self, mut f: impl FnMut(Reg)) {
        self.operands(|o| {
            if let Opnd::Reg(r) | Opnd::Take(r) = o {
                f(*r)
            }
        });
    }

    /// Every operand, in reading order.
    pub fn operands(&self, mut f: impl FnMut(&Opnd)) {
        each_operand!(self, f, iter)
    }

    /// Mutable access to every operand, in reading order.
    pub fn operands_mut(&mut self, mut f: impl FnMut(&mut Opnd)) {
        each_operand!(self, f, iter_mut)
    }

    /// Registers written.
    pub fn defs(&self, mut f: impl FnMut(Reg)) {
        match self {
            Instr::Bin { dst, .. }
            | Instr::Prim { dst, .. }
            | Instr::Fused { dst, .. }
            | Instr::Copy { dst, .. }
            | Instr::MakeClosure { dst, .. }
            | Instr::Call { dst, .. }
            | Instr::CallValue { dst, .. } => f(*dst),
            Instr::Jump { moves, .. } => moves.iter().for_each(|(d, _)| f(*d)),
            Instr::Drop { regs } => regs.iter().for_each(|r| f(*r)),
            Instr::Branch(_)
            | Instr::Return { .. }
            | Instr::TailCall { .. }
            | Instr::TailCallValue { .. } => {}
        }
    }

    /// Where control can go next.
    pub fn successors(&self, pc: u32, mut f: impl FnMut(u32)) {
        match self {
            Instr::Jump { .. } | Instr::Branch(_) => self.targets(f),
            Instr::Return { .. } | Instr::TailCall { .. } | Instr::TailCallValue { .. } => {}
            _ => f(pc + 1),
        }
    }

    /// Jump and branch targets.
    pub fn targets(&self, mut f: impl FnMut(u32)) {
        let mut read = |t: &u32| f(*t);
        each_target!(self, read)
    }

    pub fn targets_mut(&mut self, mut f: impl FnMut(&mut u32)) {
        each_target!(self, f)
    }
}

/// One call frame's code.
#[derive(Clone, Debug)]
pub struct Unit {
    /// The graph the unit's frame is for (closures of the unit name it).
    pub graph: GraphId,
    pub name: String,
    pub function: Arc<str>,
    pub n_params: u32,
    pub n_captures: u32,
    pub n_regs: u32,
    pub code: Vec<Instr>,
    pub sites: Vec<Site>,
    /// Labels (pc, block name) for dumps.
    pub labels: Vec<(u32, String)>,
    /// Python signature of the root graph, for keyword binding of calls through values.
    pub signature: Option<Signature>,
    /// Whether the root graph is a `def`: a tail call of the unit counts a level of recursion.
    pub deepens: bool,
}

/// One operation of a fused kernel: a primitive over earlier values (kernel inputs first,
/// then the results of earlier operations) and scalar constants.
#[derive(Clone, Debug)]
pub struct FusedStep {
    pub prim: Prim,
    pub args: Vec<FusedArg>,
    /// The registered kernel when it is not the CPU backend's own (then the chain has no
    /// one-pass kernel and this step calls it).
    pub kernel: Option<Kernel>,
}

#[derive(Clone, Debug)]
pub enum FusedArg {
    /// Kernel input `i`, or the result of step `i - n_inputs`.
    Value(u32),
    /// The same, read for the last time: the value is moved (and may be updated in place).
    Last(u32),
    Const(Value),
}

/// A chain of elementwise operations evaluated as one kernel.
#[derive(Clone, Debug)]
pub struct FusedProgram {
    pub name: String,
    pub n_inputs: u32,
    pub steps: Vec<FusedStep>,
    /// Which value is the result.
    pub output: u32,
    /// The one-pass kernel, when every input is a tensor (of these dtypes) and every step
    /// has a kernel op; otherwise the steps run one by one.
    pub kernel: Option<(Vec<DType>, FusedKernel)>,
    /// On a device other than the CPU: that device's one-pass kernel, taking the inputs
    /// (tensors of these dtypes).
    pub device_kernel: Option<(Vec<DType>, Kernel)>,
    /// The device the chain runs on.
    pub device: anfora_tensor::Device,
}

fn opnd(o: &Opnd, consts: &[Value]) -> String {
    match o {
        Opnd::Reg(r) => format!("r{r}"),
        Opnd::Take(r) => format!("r{r}!"),
        Opnd::Const(k) => constant(&consts[*k as usize]),
    }
}

/// A constant operand: Parameters (also inside tuples) are named as in the IR dump, not
/// printed with their current values.
fn constant(v: &Value) -> String {
    match v {
        Value::Ref(p) => format!("%para.{}", p.name()),
        Value::Tuple(items)
            if items
                .iter()
                .any(|i| matches!(i, Value::Ref(_) | Value::Tuple(_))) =>
        {
            let items: Vec<String> = items.iter().map(constant).collect();
            let comma = if items.len() == 1 { "," } else { "" };
            format!("({}{comma})", items.join(", "))
        }
        v => anfora_ops::value::repr(v),
    }
}

fn list(os: &[Opnd], consts: &[Value]) -> String {
    os.iter()
        .map(|o| opnd(o, consts))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `[name]` for a kernel other than the CPU backend's own, shown after the primitive.
pub(crate) fn kernel_tag(kernel: Option<&Kernel>) -> String {
    kernel.map_or(String::new(), |k| format!("[{}]", k.name()))
}

fn regs(rs: &[Reg]) -> String {
    rs.iter()
        .map(|r| format!("r{r}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Text of one instruction (`r3! ` marks the last read of r3, which moves the value).
pub fn instr_text(i: &Instr, consts: &[Value], units: &[Unit], kernels: &[FusedProgram]) -> String {
    let c = |o: &Opnd| opnd(o, consts);
    let call = |unit: &u32, args: &[Opnd]| {
        format!("@{}({})", units[*unit as usize].name, list(args, consts))
    };
    match i {
        Instr::Bin { dst, op, a, b, .. } => {
            format!("r{dst} = {}({}, {})", op.prim.name(), c(a), c(b))
        }
        Instr::Prim {
            dst,
            prim,
            args,
            kernel,
            with_next,
            ..
        } => format!(
            "r{dst} = {}{}({}){}",
            prim.name(),
            kernel_tag(kernel.as_ref()),
            list(args, consts),
            match with_next {
                WithNext::Alone => "",
                WithNext::SideBySide => "  ‖ with the next",
                WithNext::IntoUpdate | WithNext::IntoRelu => "  → into the next",
            }
        ),
        Instr::Fused {
            dst, kernel, args, ..
        } => format!(
            "r{dst} = fused {}({})",
            kernels[*kernel as usize].name,
            list(args, consts)
        ),
        Instr::Copy { dst, src } => format!("r{dst} = {}", c(src)),
        Instr::MakeClosure {
            dst,
            unit,
            captures,
        } => format!(
            "r{dst} = closure @{}[{}]",
            units[*unit as usize].name,
            list(captures, consts)
        ),
        Instr::Call {
            dst, unit, args, ..
        } => format!("r{dst} = call {}", call(unit, args)),
        Instr::CallValue {
            dst, callee, args, ..
        } => format!("r{dst} = {}({})", c(callee), list(args, consts)),
        Instr::Jump {
            target,
            moves,
            call,
        } => {
            // A tail call of a `def` says so: it counts a level of recursion.
            let verb = if call.is_some() { "call-jump" } else { "jump" };
            if moves.is_empty() {
                format!("{verb} {target}")
            } else {
                let ms: Vec<String> = moves
                    .iter()
                    .map(|(d, s)| format!("r{d} = {}", c(s)))
                    .collect();
                format!("{verb} {target} with {}", ms.join(", "))
            }
        }
        Instr::Branch(b) => {
            let test = match &b.compare {
                Some((op, x, _)) => format!("{}({}, {})", op.prim.name(), c(&b.cond), c(x)),
                None => c(&b.cond),
            };
            let mut s = format!("branch {test} ? {} : {}", b.then_pc, b.else_pc);
            if !b.kill_then.is_empty() {
                let _ = write!(s, " drop-then[{}]", regs(&b.kill_then));
            }
            if !b.kill_else.is_empty() {
                let _ = write!(s, " drop-else[{}]", regs(&b.kill_else));
            }
            s
        }
        Instr::Drop { regs: rs } => format!("drop {}", regs(rs)),
        Instr::Return { src } => format!("return {}", c(src)),
        Instr::TailCall { unit, args, .. } => format!("tailcall {}", call(unit, args)),
        Instr::TailCallValue { callee, args, .. } => {
            format!("tailcall {}({})", c(callee), list(args, consts))
        }
    }
}
