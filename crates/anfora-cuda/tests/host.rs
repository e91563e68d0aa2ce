//! The generated CUDA C, run on the host: the kernels of many programs are compiled by the
//! system's C++ compiler with CUDA's built-ins defined for one thread (which the grid-stride
//! loop walks over every element), run, and compared with the CPU's fused kernels. This checks
//! the generator's element semantics (wrapping, shifts, casts, NaN, floor division) on every
//! machine; the GPU tests (`tests/gpu.rs`) check the same on a device.

use std::path::{Path, PathBuf};
use std::process::Command;

use anfora_cuda::codegen::{self, Access, KERNEL_NAME};
use anfora_tensor::fused::{FusedKernel, FusedOp};
mod common;

use anfora_tensor::{BinaryOp, DType, Scalar, Tensor, UnaryOp};
use common::{assert_same, values};

/// CUDA's built-ins for one thread of one block.
const HOST_PRELUDE: &str = r#"#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
struct Dim3 { unsigned x; };
static const Dim3 blockIdx = {0}, threadIdx = {0}, blockDim = {1}, gridDim = {1};
static inline float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
static inline double __longlong_as_double(unsigned long long x) { double f; memcpy(&f, &x, 8); return f; }
static void *load(const char *path, size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  FILE *f = fopen(path, "rb");
  if (!f || fread(p, 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\n", path); exit(2); }
  fclose(f);
  return p;
}
static void save(const char *path, const void *p, size_t bytes) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(p, 1, bytes, f) != bytes) { fprintf(stderr, "cannot write %s\n", path); exit(2); }
  fclose(f);
}
"#;

/// A program, its inputs, and the CPU's result.
struct Case {
    what: String,
    program: FusedKernel,
    inputs: Vec<Tensor>,
    expected: Tensor,
}

const DTYPES: [DType; 5] = [DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64];

/// Every program the generator takes, with the CPU's results (programs the CPU refuses, or
/// that may raise, are left out: the device refuses those).
fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |what: String, dtypes: &[DType], ops: Vec<FusedOp>, inputs: Vec<Tensor>| {
        let Ok(program) = FusedKernel::new(dtypes, ops) else {
            return;
        };
        if program.may_raise() {
            return;
        }
        let Ok(expected) = program.run(&inputs.iter().collect::<Vec<_>>()) else {
            return;
        };
        cases.push(Case {
            what,
            program,
            inputs,
            expected,
        });
    };
    use UnaryOp::*;
    for op in [
        Neg, Pos, Abs, Invert, LogicalNot, Exp, Log, Sqrt, Tanh, Sin, Cos, Sigmoid, Relu, Log1p,
        Expm1, Erf, Gelu, GeluTanh, Silu, Softplus, Rsqrt, Sign,
    ] {
        for d in DTYPES {
            let x = values(d, 64, 1);
            add(
                format!("{op:?} {d}"),
                &[d],
                vec![FusedOp::Unary(op, 0)],
                vec![x],
            );
        }
    }
    use BinaryOp::*;
    for op in [
        Add, Sub, Mul, Div, FloorDiv, Mod, Pow, Maximum, Minimum, BitAnd, BitOr, BitXor, LShift,
        RShift, Eq, Ne, Lt, Le, Gt, Ge,
    ] {
        for da in DTYPES {
            for db in DTYPES {
                let (a, b) = (values(da, 64, 2), values(db, 64, 3));
                add(
                    format!("{op:?} {da} {db}"),
                    &[da, db],
                    vec![FusedOp::Binary(op, 0, 1)],
                    vec![a, b],
                );
            }
        }
        for s in [Scalar::Float(1.5), Scalar::Int(3), Scalar::Bool(true)] {
            for d in DTYPES {
                let ops = vec![FusedOp::Scalar(s), FusedOp::Binary(op, 0, 1)];
                add(
                    format!("{op:?} {d} {s:?}"),
                    &[d],
                    ops,
                    vec![values(d, 64, 4)],
                );
            }
        }
    }
    for from in DTYPES {
        for to in DTYPES {
            let x = values(from, 64, 5);
            add(
                format!("cast {from} {to}"),
                &[from],
                vec![FusedOp::Cast(to, 0)],
                vec![x],
            );
        }
    }
    for (dx, dy) in [
        (DType::F32, DType::I32),
        (DType::I64, DType::Bool),
        (DType::F64, DType::F64),
    ] {
        let ins = vec![
            values(DType::Bool, 64, 6),
            values(dx, 64, 7),
            values(dy, 64, 8),
        ];
        let ops = vec![FusedOp::Where(0, 1, 2)];
        add(format!("where {dx} {dy}"), &[DType::Bool, dx, dy], ops, ins);
    }
    // W5's chain, and broadcasting through strided reads.
    let w5 = vec![
        FusedOp::Scalar(Scalar::Float(1.5)),
        FusedOp::Binary(Mul, 0, 1),
        FusedOp::Scalar(Scalar::Float(0.3)),
        FusedOp::Binary(Add, 2, 3),
        FusedOp::Unary(Tanh, 4),
        FusedOp::Unary(Sigmoid, 0),
        FusedOp::Binary(Mul, 5, 6),
        FusedOp::Scalar(Scalar::Int(3)),
        FusedOp::Binary(Div, 0, 8),
        FusedOp::Binary(Sub, 7, 9),
    ];
    add(
        "w5".into(),
        &[DType::F32],
        w5,
        vec![values(DType::F32, 1000, 9)],
    );
    let a = values(DType::F32, 3, 10).reshape(&[3, 1]).unwrap();
    let b = values(DType::I32, 4, 11);
    let ops = vec![FusedOp::Binary(Add, 0, 1), FusedOp::Unary(Neg, 2)];
    add(
        "broadcast".into(),
        &[DType::F32, DType::I32],
        ops,
        vec![a, b],
    );
    let a = values(DType::F64, 24, 12).reshape(&[2, 3, 4]).unwrap();
    let b = values(DType::F64, 2, 13).reshape(&[2, 1, 1]).unwrap();
    let ops = vec![FusedOp::Binary(Maximum, 0, 1)];
    add(
        "broadcast 3-d".into(),
        &[DType::F64, DType::F64],
        ops,
        vec![a, b],
    );
    cases
}

/// The host translation unit: every case's kernel, renamed, and a `main` running each.
fn translation_unit(cases: &[Case], dir: &Path) -> String {
    let mut kernels = String::new();
    let mut main = String::from("int main() {\n");
    for (i, c) in cases.iter().enumerate() {
        let shape = c.expected.shape();
        let access: Vec<Access> = c
            .inputs
            .iter()
            .zip(codegen::used_inputs(&c.program))
            .map(|(t, used)| match () {
                _ if !used => Access::Unused,
                _ if t.shape() == shape => Access::Same,
                _ => Access::Strided,
            })
            .collect();
        let src = codegen::fused_source(&c.program, &access, shape.len()).unwrap();
        let at = src.find("extern \"C\"").unwrap();
        if i == 0 {
            kernels.push_str(&src[..at]);
        }
        kernels.push_str(&src[at..].replacen(KERNEL_NAME, &format!("k{i}"), 1));
        let out_t = codegen::memory_type(c.program.output_dtype()).unwrap();
        let n: usize = shape.iter().product();
        main.push_str(&format!(
            "  {{ Dims shape = {{{{{}}}}};\n    {out_t} *out = ({out_t} *)malloc({});\n",
            dims(shape),
            (n * c.program.output_dtype().size_of()).max(1)
        ));
        let mut args = vec!["out".to_string(), format!("{n}LL"), "shape".into()];
        let scalars: Vec<String> = codegen::scalar_params(&c.program)
            .into_iter()
            .map(codegen::c_literal)
            .collect();
        for (j, t) in c.inputs.iter().enumerate() {
            let path = dir.join(format!("k{i}_in{j}.bin"));
            std::fs::write(&path, t.host_bytes().unwrap()).unwrap();
            let ty = codegen::memory_type(t.dtype()).unwrap();
            main.push_str(&format!(
                "    const {ty} *in{j} = (const {ty} *)load(\"{}\", {});\n",
                path.display(),
                t.numel() * t.dtype().size_of()
            ));
            args.push(format!("in{j}"));
            if access[j] == Access::Strided {
                main.push_str(&format!(
                    "    Dims st{j} = {{{{{}}}}};\n",
                    dims(&anfora_tensor::broadcast_strides(t.shape(), shape))
                ));
                args.push(format!("st{j}"));
            }
        }
        args.extend(scalars);
        main.push_str(&format!(
            "    k{i}({});\n    save(\"{}\", out, {});\n  }}\n",
            args.join(", "),
            dir.join(format!("k{i}_out.bin")).display(),
            n * c.program.output_dtype().size_of()
        ));
    }
    main.push_str("  return 0;\n}\n");
    format!("{HOST_PRELUDE}{kernels}{main}")
}

fn dims<T: std::fmt::Display>(v: &[T]) -> String {
    v.iter()
        .map(|d| format!("{d}LL"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("anfora-cuda-host");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn generated_kernels_compute_what_the_cpu_computes() {
    if Command::new("c++").arg("--version").output().is_err() {
        eprintln!("skipped: no C++ compiler (c++) on this machine");
        return;
    }
    let cases = cases();
    assert!(cases.len() > 300, "{} cases", cases.len());
    let dir = scratch();
    build_and_run(&dir, "kernels", &translation_unit(&cases, &dir));
    for (i, c) in cases.iter().enumerate() {
        let bytes = std::fs::read(dir.join(format!("k{i}_out.bin"))).unwrap();
        let got = from_bytes(&bytes, c.expected.dtype(), c.expected.shape());
        assert_same(&c.what, &c.expected, &got);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Compiles `source` with the host C++ compiler (no contraction into fused multiply-adds, as
/// NVRTC is told: `fmad=false`) and runs it, in `dir`.
fn build_and_run(dir: &Path, name: &str, source: &str) {
    let cpp = dir.join(format!("{name}.cpp"));
    std::fs::write(&cpp, source).unwrap();
    let exe = dir.join(name);
    let built = Command::new("c++")
        .args(["-O1", "-ffp-contract=off", "-fno-fast-math", "-w", "-o"])
        .arg(&exe)
        .arg(&cpp)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&built.stderr);
    assert!(built.status.success(), "{err}");
    let ran = Command::new(&exe).output().unwrap();
    let err = String::from_utf8_lossy(&ran.stderr);
    assert!(ran.status.success(), "{err}");
}

fn from_bytes(b: &[u8], dtype: DType, shape: &[usize]) -> Tensor {
    let t = match dtype {
        DType::Bool => Tensor::from_bool(b.iter().map(|&x| x != 0).collect(), shape),
        DType::I32 => Tensor::from_i32(
            b.chunks_exact(4)
                .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
                .collect(),
            shape,
        ),
        DType::I64 => Tensor::from_i64(
            b.chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                .collect(),
            shape,
        ),
        DType::F32 => Tensor::from_f32(
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect(),
            shape,
        ),
        _ => Tensor::from_f64(
            b.chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect(),
            shape,
        ),
    };
    t.unwrap()
}

/// Where the generator's program builder refuses an op (a device kernel then reports that
/// refusal), the CPU kernel raises the same error.
#[test]
fn refused_programs_raise_the_cpu_errors() {
    let mut refused = 0;
    for op in [
        UnaryOp::Invert,
        UnaryOp::Exp,
        UnaryOp::Neg,
        UnaryOp::Sign,
        UnaryOp::Relu,
    ] {
        for d in DTYPES {
            let x = values(d, 8, 1);
            if let Err(e) = FusedKernel::new(&[d], vec![FusedOp::Unary(op, 0)]) {
                refused += 1;
                assert_eq!(Tensor::unary(op, &x).unwrap_err(), e, "{op:?} {d}");
            }
        }
    }
    for op in [
        BinaryOp::Sub,
        BinaryOp::BitAnd,
        BinaryOp::LShift,
        BinaryOp::Div,
        BinaryOp::Pow,
    ] {
        for da in DTYPES {
            for db in DTYPES {
                let (a, b) = (values(da, 8, 2), values(db, 8, 3));
                if let Err(e) = FusedKernel::new(&[da, db], vec![FusedOp::Binary(op, 0, 1)]) {
                    refused += 1;
                    assert_eq!(
                        Tensor::binary(op, &a, &b).unwrap_err(),
                        e,
                        "{op:?} {da} {db}"
                    );
                }
            }
        }
    }
    assert!(refused > 10, "{refused}");
}

/// The reduction kernel, run on the host as one thread of one block per result, against the
/// CPU's reductions: every op, dtype and choice of axes of a 3-d input.
#[test]
fn generated_reductions_compute_what_the_cpu_computes() {
    use anfora_tensor::ReduceOp;
    if Command::new("c++").arg("--version").output().is_err() {
        eprintln!("skipped: no C++ compiler (c++) on this machine");
        return;
    }
    let shape = [3usize, 5, 4];
    let axes_choices: [Option<&[i64]>; 5] =
        [None, Some(&[0]), Some(&[2]), Some(&[0, 2]), Some(&[1])];
    let dir = scratch().join("reduce");
    std::fs::create_dir_all(&dir).unwrap();
    let mut kernels = String::new();
    let mut main = String::from("int main() {\n");
    let mut cases = Vec::new();
    let mut prelude_done = false;
    for op in [
        ReduceOp::Sum,
        ReduceOp::Mean,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::Prod,
    ] {
        for d in DTYPES {
            // The integers' extremes cancel in a float sum in an order-dependent way: the
            // mean of integers reads moderate values.
            let x = if op == ReduceOp::Mean && matches!(d, DType::I32 | DType::I64) {
                Tensor::from_i64((0..60).map(|i| (i * 37 % 101) - 50).collect(), &[60])
                    .unwrap()
                    .try_cast(d)
                    .unwrap()
            } else {
                values(d, 60, 21)
            };
            let x = x.reshape(&[3, 5, 4]).unwrap();
            for axes in axes_choices {
                let i = cases.len();
                let expected = Tensor::reduce(op, &x, axes, false).unwrap();
                let plan = anfora_tensor::reduce_plan(op, &shape, d, axes, false).unwrap();
                let src = codegen::reduce_source(op, d, plan.acc_dtype).unwrap();
                let at = src.find("__device__ __forceinline__").unwrap();
                let body = &src[src.rfind("__device__ __forceinline__").unwrap()..];
                if !prelude_done {
                    kernels.push_str(&src[..at]);
                    kernels.push_str(&src[at..src.rfind("__device__ __forceinline__").unwrap()]);
                    prelude_done = true;
                }
                kernels.push_str(
                    &body
                        .replace("combine(", &format!("combine{i}("))
                        .replace(codegen::REDUCE_NAME, &format!("r{i}")),
                );
                let (mut kept, mut kept_st, mut red, mut red_st) = (vec![], vec![], vec![], vec![]);
                let strides = [20i64, 4, 1];
                for k in 0..3 {
                    if plan.reduced[k] {
                        red.push(shape[k] as i64);
                        red_st.push(strides[k]);
                    } else {
                        kept.push(shape[k] as i64);
                        kept_st.push(strides[k]);
                    }
                }
                let path = dir.join(format!("r{i}_in.bin"));
                std::fs::write(&path, x.host_bytes().unwrap()).unwrap();
                let (t_in, t_out) = (
                    codegen::memory_type(d).unwrap(),
                    codegen::memory_type(plan.acc_dtype).unwrap(),
                );
                let n_out: usize = plan.shape.iter().product();
                main.push_str(&format!(
                    "  {{ const {t_in} *in = (const {t_in} *)load(\"{}\", {});\n    {t_out} *out = ({t_out} *)malloc({});\n    \
                     Dims kept = {{{{{}}}}}, kept_st = {{{{{}}}}}, red = {{{{{}}}}}, red_st = {{{{{}}}}};\n    \
                     r{i}(out, in, {n_out}LL, {}LL, kept, kept_st, {}, red, red_st, {});\n    save(\"{}\", out, {});\n  }}\n",
                    path.display(),
                    60 * d.size_of(),
                    n_out * plan.acc_dtype.size_of(),
                    dims(&kept),
                    dims(&kept_st),
                    dims(&red),
                    dims(&red_st),
                    plan.count,
                    kept.len(),
                    red.len(),
                    dir.join(format!("r{i}_out.bin")).display(),
                    n_out * plan.acc_dtype.size_of(),
                ));
                cases.push((format!("{op:?} {d} {axes:?}"), expected));
            }
        }
    }
    main.push_str("  return 0;\n}\n");
    let header = HOST_PRELUDE.replace(
        "#define __restrict__\n",
        "#define __restrict__\n#define __shared__ static\n#define __syncthreads()\n",
    );
    build_and_run(&dir, "reduce", &format!("{header}{kernels}{main}"));
    for (i, (what, expected)) in cases.iter().enumerate() {
        let bytes = std::fs::read(dir.join(format!("r{i}_out.bin"))).unwrap();
        let got = from_bytes(&bytes, expected.dtype(), expected.shape());
        assert_same(what, expected, &got);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
