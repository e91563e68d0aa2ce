//! CUDA C for fused elementwise programs.
//!
//! A [`FusedKernel`] is already lowered to typed instructions with every cast explicit and
//! every Python scalar a typed constant (see `anfora_tensor::fused`); this module writes each
//! instruction as one C statement with the CPU kernels' element semantics (numpy's): wrapping
//! integer arithmetic, numpy's shifts, NaN-propagating maximum and minimum, Python's floor
//! division and remainder on floats, x86's float-to-integer conversion. Constants are
//! kernel parameters, passed by value at each launch (exact, and one kernel serves every value).
//!
//! The kernel walks the output in a grid-stride loop. An input with the output's shape is read
//! at the element's index; another (broadcast) input at an offset computed from the output's
//! dimensions and the input's strides (0 along broadcast axes), passed as `Dims` arguments.
//! The source depends on the program and on which inputs broadcast (and the rank then), not on
//! sizes or scalar values, so one compiled kernel serves every size and value.

use std::fmt::Write;

use anfora_tensor::fused::{Const, FusedKernel, Inst, InstKind, Slot};
use anfora_tensor::{BinaryOp, DType, ReduceOp, UnaryOp};

/// The most dimensions a broadcast input may have (the `Dims` argument's capacity).
pub const MAX_RANK: usize = 8;

/// How the kernel reads an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// The input has the output's shape: element `i` is at `i`.
    Same,
    /// Broadcast: element `i` of the output reads the input at `Σ index_k · strides_k`.
    Strided,
    /// Not read by the output.
    Unused,
}

/// The name of every generated kernel.
pub const KERNEL_NAME: &str = "anfora_fused";

/// Why a program has no CUDA kernel.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unsupported {
    #[error(
        "the program can raise an error that depends on the data, which a CUDA kernel cannot report"
    )]
    MayRaise,
    #[error("{0} tensors are not computed on CUDA devices")]
    DType(DType),
    #[error("broadcasting over more than {MAX_RANK} dimensions")]
    Rank,
}

/// The C type of a dtype's values (bools are `bool` in registers and bytes in memory).
fn c_type(d: DType) -> Result<&'static str, Unsupported> {
    Ok(match d {
        DType::Bool => "bool",
        DType::I32 => "int",
        DType::I64 => "long long",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::F16 | DType::BF16 | DType::I8 | DType::U8 => return Err(Unsupported::DType(d)),
    })
}

/// The C type of a dtype's elements in memory.
pub fn memory_type(d: DType) -> Result<&'static str, Unsupported> {
    match d {
        DType::Bool => Ok("unsigned char"),
        d => c_type(d),
    }
}

/// Which inputs and which instructions the output depends on.
fn liveness(k: &FusedKernel) -> (Vec<bool>, Vec<bool>) {
    let insts = k.insts();
    let mut used = vec![false; k.n_inputs()];
    let mut live = vec![false; insts.len()];
    let mut stack = vec![k.output_slot()];
    while let Some(s) = stack.pop() {
        match s {
            Slot::Input(i) => used[i] = true,
            Slot::Inst(j) if !live[j] => {
                live[j] = true;
                stack.extend(insts[j].args.iter().copied());
            }
            Slot::Inst(_) | Slot::Const(_) => {}
        }
    }
    (used, live)
}

/// Which inputs the output reads.
pub fn used_inputs(k: &FusedKernel) -> Vec<bool> {
    liveness(k).0
}

/// The CUDA C source of `k` for inputs read as `access` says (`rank`: the output's rank,
/// which strided reads need).
pub fn fused_source(
    k: &FusedKernel,
    access: &[Access],
    rank: usize,
) -> Result<String, Unsupported> {
    if k.may_raise() {
        return Err(Unsupported::MayRaise);
    }
    if access.contains(&Access::Strided) && rank > MAX_RANK {
        return Err(Unsupported::Rank);
    }
    let out = k.output_dtype();
    let mut src = String::from(PRELUDE);
    let _ = write!(
        src,
        "extern \"C\" __global__ void {KERNEL_NAME}({}* __restrict__ out, long long n, Dims shape",
        memory_type(out)?
    );
    for (i, (&d, &a)) in k.input_dtypes().iter().zip(access).enumerate() {
        let _ = write!(src, ", const {}* __restrict__ in{i}", memory_type(d)?);
        if a == Access::Strided {
            let _ = write!(src, ", Dims st{i}");
        }
    }
    for (n, c) in scalar_params(k).into_iter().enumerate() {
        let _ = write!(src, ", {} c{n}", c_type(const_dtype(c))?);
    }
    src.push_str(") {\n");
    src.push_str(
        "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;\n       i += (long long)gridDim.x * blockDim.x) {\n",
    );
    let strided: Vec<usize> = (0..access.len())
        .filter(|&i| access[i] == Access::Strided)
        .collect();
    if !strided.is_empty() {
        for &i in &strided {
            let _ = writeln!(src, "    long long o{i} = 0;");
        }
        let _ = writeln!(
            src,
            "    {{ long long r = i;\n      for (int d = {}; d >= 0; --d) {{\n        long long c = r % shape.v[d]; r /= shape.v[d];",
            rank as i64 - 1
        );
        for &i in &strided {
            let _ = writeln!(src, "        o{i} += c * st{i}.v[d];");
        }
        src.push_str("      } }\n");
    }
    for (i, (&d, &a)) in k.input_dtypes().iter().zip(access).enumerate() {
        let at = match a {
            Access::Same => "i".to_string(),
            Access::Strided => format!("o{i}"),
            Access::Unused => continue,
        };
        let load = if d == DType::Bool {
            format!("(in{i}[{at}] != 0)")
        } else {
            format!("in{i}[{at}]")
        };
        let _ = writeln!(src, "    const {} x{i} = {load};", c_type(d)?);
    }
    let insts = k.insts();
    let mut next_scalar = 0;
    for j in live_insts(k) {
        let inst = &insts[j];
        let expr = inst_expr(k, inst, &mut next_scalar)?;
        let _ = writeln!(src, "    const {} v{j} = {expr};", c_type(inst.dtype)?);
    }
    let result = slot(k.output_slot(), &mut 0);
    let store = if out == DType::Bool {
        format!("(unsigned char){result}")
    } else {
        result
    };
    let _ = writeln!(src, "    out[i] = {store};\n  }}\n}}");
    Ok(src)
}

/// The name of the broadcast-copy kernel.
pub const BROADCAST_NAME: &str = "anfora_broadcast";

/// A kernel copying an input of dtype `d` broadcast to the output's shape (`rank` dimensions
/// at most [`MAX_RANK`], given at run time with the input's strides, 0 along broadcast axes).
pub fn broadcast_source(d: DType) -> Result<String, Unsupported> {
    let t = memory_type(d)?;
    Ok(format!(
        "struct Dims {{ long long v[{MAX_RANK}]; }};\n\
         extern \"C\" __global__ void {BROADCAST_NAME}({t}* __restrict__ out, long long n, Dims shape,\n\
         \x20   const {t}* __restrict__ in, Dims st, int rank) {{\n\
         \x20 for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;\n\
         \x20      i += (long long)gridDim.x * blockDim.x) {{\n\
         \x20   long long r = i, o = 0;\n\
         \x20   for (int d = rank - 1; d >= 0; --d) {{ o += (r % shape.v[d]) * st.v[d]; r /= shape.v[d]; }}\n\
         \x20   out[i] = in[o];\n\
         \x20 }}\n\
         }}\n"
    ))
}

/// The name of the reduction kernel.
pub const REDUCE_NAME: &str = "anfora_reduce";

/// The threads of a reduction's block (a power of two: the tree in shared memory halves it).
pub const REDUCE_THREADS: u32 = 256;

/// A reduction of `input` elements accumulated in `acc` (the result's dtype): one block per
/// result element (grid-stride over them), its threads striding over the reduced elements,
/// then a tree in shared memory. The kept and reduced axes come as sizes and input strides.
pub fn reduce_source(op: ReduceOp, input: DType, acc: DType) -> Result<String, Unsupported> {
    let (t_in, t_acc) = (memory_type(input)?, c_type(acc)?);
    let s = suffix(acc);
    let (identity, combine) = match (op, acc) {
        (ReduceOp::Sum | ReduceOp::Mean, DType::F32 | DType::F64) => ("0", "(a + b)".to_string()),
        (ReduceOp::Sum | ReduceOp::Mean, _) => ("0", format!("add_{s}(a, b)")),
        (ReduceOp::Prod, DType::F32 | DType::F64) => ("1", "(a * b)".to_string()),
        (ReduceOp::Prod, _) => ("1", format!("mul_{s}(a, b)")),
        (ReduceOp::Max, DType::Bool) => ("false", "(a || b)".to_string()),
        (ReduceOp::Min, DType::Bool) => ("true", "(a && b)".to_string()),
        (ReduceOp::Max, d) => (lowest(d, true), format!("max_{s}(a, b)")),
        (ReduceOp::Min, d) => (lowest(d, false), format!("min_{s}(a, b)")),
    };
    let load = cast(&load_of(input, "in[off]"), input, acc)?;
    let finish = if op == ReduceOp::Mean {
        format!("({t_acc})((double)v / (double)count)")
    } else {
        "v".to_string()
    };
    let store = if acc == DType::Bool {
        format!("(unsigned char)({finish})")
    } else {
        finish
    };
    let out_t = memory_type(acc)?;
    let mut src = String::from(PRELUDE);
    let _ = write!(
        src,
        r#"__device__ __forceinline__ {t_acc} combine({t_acc} a, {t_acc} b) {{ return {combine}; }}
extern "C" __global__ void {REDUCE_NAME}({out_t}* __restrict__ out, const {t_in}* __restrict__ in,
    long long n_out, long long count, Dims kept, Dims kept_st, int kept_rank,
    Dims red, Dims red_st, int red_rank) {{
  __shared__ {t_acc} buf[{REDUCE_THREADS}];
  for (long long o = blockIdx.x; o < n_out; o += gridDim.x) {{
    long long base = 0, r = o;
    for (int d = kept_rank - 1; d >= 0; --d) {{ base += (r % kept.v[d]) * kept_st.v[d]; r /= kept.v[d]; }}
    {t_acc} acc = ({t_acc})({identity});
    for (long long j = threadIdx.x; j < count; j += blockDim.x) {{
      long long off = base, q = j;
      for (int d = red_rank - 1; d >= 0; --d) {{ off += (q % red.v[d]) * red_st.v[d]; q /= red.v[d]; }}
      acc = combine(acc, {load});
    }}
    buf[threadIdx.x] = acc;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {{
      if (threadIdx.x < h) buf[threadIdx.x] = combine(buf[threadIdx.x], buf[threadIdx.x + h]);
      __syncthreads();
    }}
    if (threadIdx.x == 0) {{ const {t_acc} v = buf[0]; out[o] = {store}; }}
    __syncthreads();
  }}
}}
"#
    );
    Ok(src)
}

/// The first element a maximum (`max`) or minimum folds from: the dtype's extreme.
fn lowest(d: DType, max: bool) -> &'static str {
    match (d, max) {
        (DType::F32, true) => "-INFINITY",
        (DType::F32, false) => "INFINITY",
        (DType::F64, true) => "-(double)INFINITY",
        (DType::F64, false) => "(double)INFINITY",
        (DType::I32, true) => "INT_MIN_",
        (DType::I32, false) => "2147483647",
        (_, true) => "LLONG_MIN_",
        (_, false) => "9223372036854775807LL",
    }
}

/// A value of dtype `d` read from memory at `at`.
fn load_of(d: DType, at: &str) -> String {
    if d == DType::Bool {
        format!("({at} != 0)")
    } else {
        at.to_string()
    }
}

/// The instructions the output depends on, in order.
fn live_insts(k: &FusedKernel) -> Vec<usize> {
    let live = liveness(k).1;
    (0..live.len()).filter(|&j| live[j]).collect()
}

/// The program's scalars, in the order the kernel takes them as parameters (`c0`, `c1`, ...,
/// after the inputs): passed by value at each launch, so programs that differ only in their
/// scalars (`x * 0.5` and `x * lr`) share one compiled kernel.
pub fn scalar_params(k: &FusedKernel) -> Vec<Const> {
    let insts = k.insts();
    live_insts(k)
        .into_iter()
        .flat_map(|j| insts[j].args.iter())
        .filter_map(|s| match s {
            Slot::Const(c) => Some(*c),
            _ => None,
        })
        .collect()
}

fn const_dtype(c: Const) -> DType {
    match c {
        Const::Bool(_) => DType::Bool,
        Const::I32(_) => DType::I32,
        Const::I64(_) => DType::I64,
        Const::F32(_) => DType::F32,
        Const::F64(_) => DType::F64,
    }
}

/// A slot as an expression; scalars are the next parameter.
fn slot(s: Slot, next_scalar: &mut usize) -> String {
    match s {
        Slot::Input(i) => format!("x{i}"),
        Slot::Inst(j) => format!("v{j}"),
        Slot::Const(_) => {
            *next_scalar += 1;
            format!("c{}", *next_scalar - 1)
        }
    }
}

/// A constant as a C literal, exactly (floats by their bits).
pub fn c_literal(c: Const) -> String {
    match c {
        Const::Bool(b) => b.to_string(),
        Const::I32(v) => format!("((int){}u)", v as u32),
        Const::I64(v) => format!("((long long){}ull)", v as u64),
        Const::F32(v) => format!("__int_as_float({:#010x})", v.to_bits()),
        Const::F64(v) => format!("__longlong_as_double({:#018x}ull)", v.to_bits()),
    }
}

fn slot_dtype(k: &FusedKernel, s: Slot) -> DType {
    match s {
        Slot::Input(i) => k.input_dtypes()[i],
        Slot::Inst(j) => k.insts()[j].dtype,
        Slot::Const(c) => const_dtype(c),
    }
}

/// The suffix of the device functions of a dtype in the prelude (`_f`, `_d`, `_i`, `_l`).
fn suffix(d: DType) -> &'static str {
    match d {
        DType::F32 => "f",
        DType::F64 => "d",
        DType::I32 => "i",
        DType::I64 => "l",
        _ => "b",
    }
}

fn inst_expr(k: &FusedKernel, inst: &Inst, next_scalar: &mut usize) -> Result<String, Unsupported> {
    let a: Vec<String> = inst.args.iter().map(|&s| slot(s, next_scalar)).collect();
    let from = inst.args.first().map(|&s| slot_dtype(k, s));
    let to = inst.dtype;
    Ok(match inst.kind {
        InstKind::Cast => cast(&a[0], from.expect("a cast has an argument"), to)?,
        InstKind::Select => format!("({} ? {} : {})", a[0], a[1], a[2]),
        InstKind::Unary(op) => unary(op, &a[0], from.expect("an operand"), to),
        InstKind::Binary(op, compute) => binary(op, &a[0], &a[1], compute),
    })
}

fn cast(a: &str, from: DType, to: DType) -> Result<String, Unsupported> {
    let t = c_type(to)?;
    Ok(match (from.is_float(), to) {
        (_, DType::Bool) => format!("({a} != 0)"),
        _ if from == DType::Bool => format!("(({t})({a} ? 1 : 0))"),
        (true, DType::I32) => format!("f2i_i((double){a})"),
        (true, DType::I64) => format!("f2i_l((double){a})"),
        _ => format!("(({t}){a})"),
    })
}

fn unary(op: UnaryOp, a: &str, from: DType, to: DType) -> String {
    use UnaryOp::*;
    let s = suffix(to);
    let float = to.is_float();
    let f = |name: &str| {
        if to == DType::F32 {
            format!("{name}f({a})")
        } else {
            format!("{name}({a})")
        }
    };
    match op {
        Pos => a.to_string(),
        Neg if float => format!("(-{a})"),
        Abs if float => f("fabs"),
        Neg | Abs | Relu | Sign => format!("{}_{s}({a})", op_fn(op)),
        Invert if to == DType::Bool => format!("(!{a})"),
        Invert => format!("(~{a})"),
        LogicalNot => {
            let _ = from;
            format!("({a} == 0)")
        }
        Exp => f("exp"),
        Log => f("log"),
        Sqrt => f("sqrt"),
        Tanh => f("tanh"),
        Sin => f("sin"),
        Cos => f("cos"),
        Log1p => f("log1p"),
        Expm1 => f("expm1"),
        Erf => f("erf"),
        Sigmoid | Gelu | GeluTanh | Silu | Softplus | Rsqrt => {
            format!("{}_{s}({a})", op_fn(op))
        }
    }
}

/// The prelude's function for an op that is not one C expression.
fn op_fn(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Neg => "neg",
        UnaryOp::Abs => "absi",
        UnaryOp::Relu => "relu",
        UnaryOp::Sign => "sgn",
        UnaryOp::Sigmoid => "sigmoid",
        UnaryOp::Gelu => "gelu",
        UnaryOp::GeluTanh => "gelu_tanh",
        UnaryOp::Silu => "silu",
        UnaryOp::Softplus => "softplus",
        UnaryOp::Rsqrt => "rsqrt_",
        _ => unreachable!("{op:?} is one expression"),
    }
}

fn binary(op: BinaryOp, a: &str, b: &str, compute: DType) -> String {
    use BinaryOp::*;
    let s = suffix(compute);
    if compute == DType::Bool {
        return match op {
            Add | BitOr | Maximum => format!("({a} || {b})"),
            Mul | BitAnd | Minimum => format!("({a} && {b})"),
            BitXor | Ne => format!("({a} != {b})"),
            _ => compare(op, a, b),
        };
    }
    let int = !compute.is_float();
    match op {
        Add if int => format!("add_{s}({a}, {b})"),
        Sub if int => format!("sub_{s}({a}, {b})"),
        Mul if int => format!("mul_{s}({a}, {b})"),
        Add => format!("({a} + {b})"),
        Sub => format!("({a} - {b})"),
        Mul => format!("({a} * {b})"),
        Div => format!("({a} / {b})"),
        FloorDiv => format!("floordiv_{s}({a}, {b})"),
        Mod => format!("mod_{s}({a}, {b})"),
        Pow => format!("pow_{s}({a}, {b})"),
        Maximum => format!("max_{s}({a}, {b})"),
        Minimum => format!("min_{s}({a}, {b})"),
        BitAnd => format!("({a} & {b})"),
        BitOr => format!("({a} | {b})"),
        BitXor => format!("({a} ^ {b})"),
        LShift => format!("shl_{s}({a}, {b})"),
        RShift => format!("shr_{s}({a}, {b})"),
        Eq | Ne | Lt | Le | Gt | Ge => compare(op, a, b),
    }
}

fn compare(op: BinaryOp, a: &str, b: &str) -> String {
    let c = match op {
        BinaryOp::Eq => "==",
        BinaryOp::Ne => "!=",
        BinaryOp::Lt => "<",
        BinaryOp::Le => "<=",
        BinaryOp::Gt => ">",
        BinaryOp::Ge => ">=",
        _ => unreachable!("{op:?} is not a comparison"),
    };
    format!("({a} {c} {b})")
}

/// Device functions with the CPU kernels' semantics (see `anfora_tensor::elementwise`).
const PRELUDE: &str = r#"// Generated by anfora-cuda from a fused elementwise program.
struct Dims { long long v[8]; };
#define INT_MIN_ (-2147483647 - 1)
#define LLONG_MIN_ (-9223372036854775807LL - 1)
// Integer arithmetic wraps (two's complement), as numpy's does.
__device__ __forceinline__ int add_i(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ int sub_i(int a, int b) { return (int)((unsigned)a - (unsigned)b); }
__device__ __forceinline__ int mul_i(int a, int b) { return (int)((unsigned)a * (unsigned)b); }
__device__ __forceinline__ long long add_l(long long a, long long b) { return (long long)((unsigned long long)a + (unsigned long long)b); }
__device__ __forceinline__ long long sub_l(long long a, long long b) { return (long long)((unsigned long long)a - (unsigned long long)b); }
__device__ __forceinline__ long long mul_l(long long a, long long b) { return (long long)((unsigned long long)a * (unsigned long long)b); }
__device__ __forceinline__ int neg_i(int a) { return (int)(0u - (unsigned)a); }
__device__ __forceinline__ long long neg_l(long long a) { return (long long)(0ull - (unsigned long long)a); }
__device__ __forceinline__ int absi_i(int a) { return a < 0 ? neg_i(a) : a; }
__device__ __forceinline__ long long absi_l(long long a) { return a < 0 ? neg_l(a) : a; }
__device__ __forceinline__ int relu_i(int a) { return a > 0 ? a : 0; }
__device__ __forceinline__ long long relu_l(long long a) { return a > 0 ? a : 0; }
__device__ __forceinline__ int sgn_i(int a) { return (a > 0) - (a < 0); }
__device__ __forceinline__ long long sgn_l(long long a) { return (a > 0) - (a < 0); }
__device__ __forceinline__ int max_i(int a, int b) { return a > b ? a : b; }
__device__ __forceinline__ int min_i(int a, int b) { return a < b ? a : b; }
__device__ __forceinline__ long long max_l(long long a, long long b) { return a > b ? a : b; }
__device__ __forceinline__ long long min_l(long long a, long long b) { return a < b ? a : b; }
// numpy: shifts by the bit width or more (or by a negative amount) give 0, or -1 for right
// shifts of negative numbers.
__device__ __forceinline__ int shl_i(int a, int b) { return (unsigned)b < 32u ? (int)((unsigned)a << b) : 0; }
__device__ __forceinline__ int shr_i(int a, int b) { return (unsigned)b < 32u ? (a >> b) : (a < 0 ? -1 : 0); }
__device__ __forceinline__ long long shl_l(long long a, long long b) { return (unsigned long long)b < 64ull ? (long long)((unsigned long long)a << b) : 0; }
__device__ __forceinline__ long long shr_l(long long a, long long b) { return (unsigned long long)b < 64ull ? (a >> b) : (a < 0 ? -1 : 0); }
// x86's cvttsd2si: NaN and out-of-range values give the most negative integer.
__device__ __forceinline__ int f2i_i(double v) { return (v > -2147483649.0 && v < 2147483648.0) ? (int)v : INT_MIN_; }
__device__ __forceinline__ long long f2i_l(double v) { return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? (long long)v : LLONG_MIN_; }
// Floats: NaN propagates through maximum and minimum; on ties the second operand wins.
__device__ __forceinline__ float max_f(float a, float b) { return (a > b || a != a) ? a : b; }
__device__ __forceinline__ float min_f(float a, float b) { return (a < b || a != a) ? a : b; }
__device__ __forceinline__ double max_d(double a, double b) { return (a > b || a != a) ? a : b; }
__device__ __forceinline__ double min_d(double a, double b) { return (a < b || a != a) ? a : b; }
__device__ __forceinline__ float relu_f(float a) { return (a > 0.0f || a != a) ? a : 0.0f; }
__device__ __forceinline__ double relu_d(double a) { return (a > 0.0 || a != a) ? a : 0.0; }
__device__ __forceinline__ float sgn_f(float a) { return a > 0.0f ? 1.0f : (a < 0.0f ? -1.0f : (a == 0.0f ? 0.0f : a)); }
__device__ __forceinline__ double sgn_d(double a) { return a > 0.0 ? 1.0 : (a < 0.0 ? -1.0 : (a == 0.0 ? 0.0 : a)); }
__device__ __forceinline__ float pow_f(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double pow_d(double a, double b) { return pow(a, b); }
__device__ __forceinline__ float sigmoid_f(float a) { return 1.0f / (1.0f + expf(-a)); }
__device__ __forceinline__ double sigmoid_d(double a) { return 1.0 / (1.0 + exp(-a)); }
__device__ __forceinline__ float silu_f(float a) { return a * sigmoid_f(a); }
__device__ __forceinline__ double silu_d(double a) { return a * sigmoid_d(a); }
__device__ __forceinline__ float softplus_f(float a) { return fmaxf(a, 0.0f) + log1pf(expf(-fabsf(a))); }
__device__ __forceinline__ double softplus_d(double a) { return fmax(a, 0.0) + log1p(exp(-fabs(a))); }
__device__ __forceinline__ float rsqrt__f(float a) { return 1.0f / sqrtf(a); }
__device__ __forceinline__ double rsqrt__d(double a) { return 1.0 / sqrt(a); }
__device__ __forceinline__ float gelu_f(float a) { return 0.5f * a * (1.0f + erff(a * 0.70710678118654752f)); }
__device__ __forceinline__ double gelu_d(double a) { return 0.5 * a * (1.0 + erf(a * 0.70710678118654752440)); }
__device__ __forceinline__ float gelu_tanh_f(float a) { return 0.5f * a * (1.0f + tanhf(0.7978845608028654f * (a + 0.044715f * a * a * a))); }
__device__ __forceinline__ double gelu_tanh_d(double a) { return 0.5 * a * (1.0 + tanh(0.7978845608028654 * (a + 0.044715 * a * a * a))); }
// Python's float floor division and remainder (numpy's npy_divmod).
__device__ __forceinline__ double divmod_d(double a, double b, double* q) {
  if (b == 0.0) { *q = a / b; return fmod(a, b); }
  double m = fmod(a, b), div = (a - m) / b;
  if (m != 0.0) { if ((b < 0.0) != (m < 0.0)) { m += b; div -= 1.0; } } else { m = copysign(0.0, b); }
  if (div != 0.0) { double f = floor(div); *q = (div - f > 0.5) ? f + 1.0 : f; } else { *q = copysign(0.0, a / b); }
  return m;
}
__device__ __forceinline__ float divmod_f(float a, float b, float* q) {
  if (b == 0.0f) { *q = a / b; return fmodf(a, b); }
  float m = fmodf(a, b), div = (a - m) / b;
  if (m != 0.0f) { if ((b < 0.0f) != (m < 0.0f)) { m += b; div -= 1.0f; } } else { m = copysignf(0.0f, b); }
  if (div != 0.0f) { float f = floorf(div); *q = (div - f > 0.5f) ? f + 1.0f : f; } else { *q = copysignf(0.0f, a / b); }
  return m;
}
__device__ __forceinline__ float floordiv_f(float a, float b) { float q; divmod_f(a, b, &q); return q; }
__device__ __forceinline__ double floordiv_d(double a, double b) { double q; divmod_d(a, b, &q); return q; }
__device__ __forceinline__ float mod_f(float a, float b) { float q; return divmod_f(a, b, &q); }
__device__ __forceinline__ double mod_d(double a, double b) { double q; return divmod_d(a, b, &q); }
"#;
