//! Inference against execution: for a small program per primitive (and per dtype, shape and
//! argument kind), the abstract inference gives the result must describe the value the
//! compiled engine computes (same dtype, same shape, same constant), an E0301 must be an error
//! the reference VM raises too, and the compiled engine must agree with the reference VM.
//! Also: every primitive has an inference rule.

mod common;

use anfora_ir::Prim;
use anfora_ops::Abs;
use anfora_ops::Value;
use anfora_ops::call::infer_prim;
use anfora_session::{Arg, Engine, Failure};
use anfora_tensor::{DType, Tensor};
use common::*;

const DTYPES: [DType; 9] = DType::ALL;

/// A tensor of `dtype` and `shape` holding 1, 2, 3, ... (alternating True/False for bools).
fn t(dtype: DType, shape: &[usize]) -> Value {
    let n: usize = shape.iter().product();
    let tensor = match dtype {
        DType::Bool => Tensor::from_bool((0..n).map(|i| i % 2 == 0).collect(), shape),
        DType::I32 => Tensor::from_i32((1..=n as i32).collect(), shape),
        DType::I64 => Tensor::from_i64((1..=n as i64).collect(), shape),
        DType::F32 => Tensor::from_f32((1..=n).map(|i| i as f32 * 0.5).collect(), shape),
        DType::F64 => Tensor::from_f64((1..=n).map(|i| i as f64 * 0.5).collect(), shape),
        DType::F16 | DType::BF16 => {
            Tensor::from_f64((1..=n).map(|i| i as f64 * 0.5).collect(), shape)
                .and_then(|t| t.try_cast(dtype))
        }
        DType::I8 | DType::U8 => {
            Tensor::from_i64((1..=n as i64).collect(), shape).and_then(|t| t.try_cast(dtype))
        }
    };
    Value::Tensor(tensor.expect("a small tensor"))
}

fn ta(dtype: DType, shape: &[usize]) -> Arg {
    Arg::from(t(dtype, shape))
}

/// Whether abstract `a` describes value `v`. `precise`: tensors must have every dimension
/// known and nothing may be `Any`.
fn describes(a: &Abs, v: &Value, precise: bool) -> bool {
    match (a, v) {
        (Abs::Any, _) => !precise,
        (Abs::Tensor(t), Value::Tensor(x)) => {
            t.dtype == x.dtype()
                && t.shape.len() == x.ndim()
                && t.shape.iter().zip(x.shape()).all(|(d, n)| match d {
                    Some(d) => d == n,
                    None => !precise,
                })
                && t.value.as_ref().is_none_or(|c| c.same_as(x))
        }
        (Abs::None, Value::None) => true,
        (Abs::Bool(b), Value::Bool(x)) => b.is_none_or(|b| b == *x),
        (Abs::Int(i), Value::Int(x)) => i.is_none_or(|i| i == *x),
        (Abs::Float(f), Value::Float(x)) => f.is_none_or(|f| f.to_bits() == x.to_bits()),
        (Abs::Str(s), Value::Str(x)) => s.as_ref().is_none_or(|s| s == x),
        (Abs::DType(d), Value::DType(x)) => d == x,
        (Abs::Tuple(items), Value::Tuple(xs)) | (Abs::List(items), Value::List(xs)) => {
            items.len() == xs.len()
                && items
                    .iter()
                    .zip(xs.iter())
                    .all(|(a, x)| describes(a, x, precise))
        }
        _ => false,
    }
}

#[derive(Default)]
struct Report {
    checked: usize,
    compile_errors: usize,
    problems: Vec<String>,
}

impl Report {
    /// Infers, runs on the compiled engine and on the reference VM, and records every
    /// disagreement.
    fn check(&mut self, src: &str, args: Vec<Arg>, precise: bool) {
        self.checked += 1;
        let what = || {
            let shown: Vec<String> = args
                .iter()
                .map(|a| {
                    let abs = a.abstract_value().to_string();
                    if a.mutable {
                        format!("mutable {abs}")
                    } else {
                        abs
                    }
                })
                .collect();
            format!("{}  with ({})", src.trim_end(), shown.join(", "))
        };
        let mut reference = load(src);
        reference.engine = Engine::Reference;
        let expected = reference.call("f", args.clone(), &mut std::io::sink());
        let inferred = try_infer(src, "f", &args);
        match (&inferred, &expected) {
            (Err(e), Ok(v)) => {
                let (s, ds) = &**e;
                self.problems.push(format!(
                    "{}\n  inference fails but it runs: {}\n{}",
                    what(),
                    anfora_session::repr(v),
                    render(s, ds)
                ));
                return;
            }
            (Err(e), Err(Failure::Runtime(_))) => {
                let ds = &e.1;
                self.compile_errors += 1;
                if ds.iter().any(|d| d.code != "E0301") {
                    self.problems
                        .push(format!("{}\n  unexpected codes {ds:?}", what()));
                }
                return;
            }
            (Ok(i), Ok(v)) => {
                let a = i.result();
                if !describes(&a, v, precise) {
                    self.problems.push(format!(
                        "{}\n  inferred {a}\n  ran      {} ({})",
                        what(),
                        anfora_session::repr(v),
                        describe_value(v)
                    ));
                }
            }
            (Ok(_), Err(Failure::Runtime(_))) => {}
            (_, Err(f)) => {
                self.problems
                    .push(format!("{}\n  reference: {}", what(), reference.render(f)));
                return;
            }
        }
        // The compiled engine must agree with the reference VM.
        let mut compiled = load(src);
        let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            compiled.call("f", args.clone(), &mut std::io::sink())
        }));
        let got = match got {
            Ok(r) => r,
            Err(_) => {
                self.problems
                    .push(format!("{}\n  the compiled engine panics", what()));
                return;
            }
        };
        match (&got, &expected) {
            (Ok(a), Ok(b)) if anfora_session::repr(a) == anfora_session::repr(b) => {}
            (Err(Failure::Runtime(a)), Err(Failure::Runtime(b))) if a.kind == b.kind => {}
            _ => self.problems.push(format!(
                "{}\n  compiled  {}\n  reference {}",
                what(),
                show(&compiled, &got),
                show(&reference, &expected)
            )),
        }
    }

    fn assert_ok(&self, name: &str) {
        eprintln!(
            "{name}: {} programs, {} compile errors",
            self.checked, self.compile_errors
        );
        assert!(
            self.problems.is_empty(),
            "{name}: {} of {} programs disagree:\n\n{}",
            self.problems.len(),
            self.checked,
            self.problems.join("\n\n")
        );
    }
}

fn show(s: &anfora_session::Session, r: &Result<Value, Failure>) -> String {
    match r {
        Ok(v) => anfora_session::repr(v),
        Err(f) => s.render(f),
    }
}

fn describe_value(v: &Value) -> String {
    anfora_session::arg_abstract(v).to_string()
}

// ---- every primitive has a rule -------------------------------------------------------------

/// Primitives inference handles in the engine rather than in `rules::infer_prim`.
const IN_THE_ENGINE: &[Prim] = &[
    // Chooses a function; the engine joins or picks the branches.
    Prim::Switch,
    // Binds keywords to the callee's signature, then calls it.
    Prim::CallKw,
];

#[test]
fn every_primitive_has_an_inference_rule() {
    let tensor = |dims: &[usize]| {
        Abs::tensor(anfora_ops::TensorAbs::new(
            DType::F32,
            dims.iter().map(|&d| Some(d)).collect(),
        ))
    };
    for &p in Prim::all() {
        let sig = p.signature();
        let n = sig.params.len().max(1) + sig.kwonly.len();
        // Nothing known: every rule gives an abstract (and does not panic).
        let any = vec![Abs::Any; n];
        let r = infer_prim(p, &any);
        if matches!(
            p,
            Prim::MakeParameter | Prim::Grad | Prim::ValueAndGrad | Prim::Vjp | Prim::Jvp
        ) {
            // Only module-level code creates Parameters, and the grad stage expands every
            // grad call it accepts: compiled code is refused.
            assert!(r.is_err(), "{r:?}");
            continue;
        }
        assert!(r.is_ok(), "{p:?} with unknown arguments: {r:?}");
        // Bottom arguments (an argument that never has a value): the result has none either,
        // except for the primitives that build containers or choose.
        let bottom = vec![Abs::Bottom; n];
        let r = infer_prim(p, &bottom).unwrap();
        if !matches!(p, Prim::Switch | Prim::MakeTuple | Prim::MakeList) {
            assert_eq!(r, Abs::Bottom, "{p:?}");
        }
        if IN_THE_ENGINE.contains(&p) {
            continue;
        }
        // Tensor operations know their result's dtype and shape.
        // (Parameter updates and random draws from a shape have their own tests.)
        let tensor_op =
            p.written_refs() == 0 && !matches!(p, Prim::Uniform | Prim::Normal | Prim::Randint);
        if p.python_name().starts_with("ops.") && tensor_op {
            let mut args = vec![tensor(&[2, 3])];
            for param in sig.params.iter().skip(1) {
                args.push(match &*param.name {
                    "y" if p == Prim::MatMul => tensor(&[3, 2]),
                    "y" | "x" => tensor(&[2, 3]),
                    "shape" => Abs::tuple(vec![Abs::Int(Some(3)), Abs::Int(Some(2))]),
                    "fill_value" => Abs::Float(None),
                    "dtype" => Abs::DType(DType::F64),
                    _ => match &param.default {
                        Some(k) => anfora_ops::abs::from_value(&anfora_ops::value::from_const(
                            k,
                            &mut |_| Value::None,
                        )),
                        None => Abs::Any,
                    },
                });
            }
            if p == Prim::Where {
                args[0] = Abs::tensor(anfora_ops::TensorAbs::new(
                    DType::Bool,
                    vec![Some(2), Some(3)],
                ));
                args[2] = tensor(&[2, 3]);
            }
            if matches!(p, Prim::Zeros | Prim::Ones | Prim::Full) {
                args[0] = Abs::tuple(vec![Abs::Int(None), Abs::Int(Some(2))]);
            }
            if p == Prim::Arange {
                args[0] = Abs::Int(None);
            }
            if matches!(p, Prim::MaxPool2D | Prim::AvgPool2D) {
                args[0] = tensor(&[1, 3, 5, 5]);
                args[1] = Abs::Int(Some(2));
            }
            if p == Prim::OneHot {
                args[0] = Abs::tensor(anfora_ops::TensorAbs::new(
                    DType::I64,
                    vec![Some(2), Some(3)],
                ));
                args[1] = Abs::Int(Some(4));
            }
            if p == Prim::ExpandDims {
                args[1] = Abs::Int(Some(0));
            }
            if p == Prim::BroadcastTo {
                args[1] = Abs::tuple(vec![
                    Abs::Int(Some(4)),
                    Abs::Int(Some(2)),
                    Abs::Int(Some(3)),
                ]);
            }
            if matches!(p, Prim::Concat | Prim::Stack) {
                args[0] = Abs::tuple(vec![tensor(&[2, 3]), tensor(&[2, 3])]);
            }
            if p == Prim::Split {
                args[1] = Abs::Int(Some(2));
                let r = infer_prim(p, &args).unwrap_or_else(|e| panic!("{p:?}: {e:?}"));
                assert!(matches!(r, Abs::Tuple(_)), "{p:?} {args:?} gives {r}");
                continue;
            }
            if p == Prim::Take {
                args[1] = Abs::tensor(anfora_ops::TensorAbs::new(DType::I64, vec![Some(2)]));
            }
            if p == Prim::Pad {
                args[1] = Abs::Int(Some(1));
            }
            if matches!(
                p,
                Prim::ReflectionPad2D | Prim::ReplicationPad2D | Prim::ZeroPad2D
            ) {
                args[0] = tensor(&[1, 3, 5, 5]);
                args[1] = Abs::Int(Some(2));
            }
            if p == Prim::Permute {
                args[1] = Abs::tuple(vec![Abs::Int(Some(1)), Abs::Int(Some(0))]);
            }
            if p == Prim::IndexSelect {
                args[1] = Abs::Int(Some(1));
                args[2] = Abs::tensor(anfora_ops::TensorAbs::new(DType::I64, vec![Some(2)]));
            }
            if p == Prim::Conv2D {
                args[0] = tensor(&[1, 3, 5, 5]);
                args[1] = tensor(&[2, 3, 3, 3]);
            }
            if let Some(quantized) = quantized_args(p) {
                args = quantized;
            }
            let r = infer_prim(p, &args).unwrap_or_else(|e| panic!("{p:?}: {e:?}"));
            if p == Prim::FormatTensor {
                // The text of a tensor.
                assert!(matches!(r, Abs::Str(_)), "{p:?} {args:?} gives {r}");
                continue;
            }
            assert!(matches!(r, Abs::Tensor(_)), "{p:?} {args:?} gives {r}");
        }
    }
    // Every primitive is listed once.
    assert_eq!(
        Prim::all().len(),
        Prim::all()
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    );
}

// ---- operators --------------------------------------------------------------------------------

const BINARY: &[&str] = &[
    "x + y",
    "x - y",
    "x * y",
    "x / y",
    "x // y",
    "x % y",
    "x ** y",
    "x << y",
    "x >> y",
    "x & y",
    "x | y",
    "x ^ y",
    "x == y",
    "x != y",
    "x < y",
    "x <= y",
    "x > y",
    "x >= y",
    "ops.maximum(x, y)",
    "ops.minimum(x, y)",
    "ops.add(x, y)",
    "ops.pow(x, y)",
];

fn binary_src(expr: &str) -> String {
    format!("from anfora import ops\n\ndef f(x, y):\n    return {expr}\n")
}

#[test]
fn binary_operators_on_tensors() {
    let mut r = Report::default();
    let shapes: &[(&[usize], &[usize])] = &[(&[2, 3], &[2, 3]), (&[2, 1], &[1, 3]), (&[], &[3])];
    for expr in BINARY {
        let src = binary_src(expr);
        for &a in &DTYPES {
            for &b in &DTYPES {
                for (sa, sb) in shapes {
                    r.check(&src, vec![ta(a, sa), ta(b, sb)], true);
                }
            }
        }
        // Shapes that do not broadcast.
        r.check(
            &src,
            vec![ta(DType::F32, &[2, 3]), ta(DType::F32, &[2])],
            true,
        );
    }
    r.assert_ok("binary operators");
    assert!(r.compile_errors > 0);
}

#[test]
fn in_place_operators() {
    let mut r = Report::default();
    for op in ["+=", "*=", "-=", "/="] {
        // On a copy the function makes: the argument itself is the caller's (E0306).
        let src = format!("def f(x, y):\n    z = x.astype(x.dtype)\n    z {op} y\n    return z\n");
        for &a in &DTYPES {
            for &b in &DTYPES {
                r.check(&src, vec![ta(a, &[2, 3]), ta(b, &[3])], true);
            }
            r.check(&src, vec![ta(a, &[3]), Arg::from(Value::Int(2))], true);
            r.check(&src, vec![ta(a, &[3]), Arg::from(Value::Float(0.5))], true);
        }
    }
    r.assert_ok("in-place operators");
}

#[test]
fn binary_operators_with_python_scalars() {
    let mut r = Report::default();
    let scalars = [
        Arg::from(Value::Int(3)),
        Arg::mutable(Value::Int(3)),
        Arg::from(Value::Float(0.5)),
        Arg::mutable(Value::Float(0.5)),
        Arg::from(Value::Bool(true)),
        Arg::mutable(Value::Bool(true)),
    ];
    for expr in BINARY {
        let src = binary_src(expr);
        for &d in &DTYPES {
            for s in &scalars {
                r.check(&src, vec![ta(d, &[2, 2]), s.clone()], true);
                r.check(&src, vec![s.clone(), ta(d, &[2, 2])], true);
            }
        }
    }
    r.assert_ok("binary operators with scalars");
}

#[test]
fn matmul() {
    let mut r = Report::default();
    let shapes: &[(&[usize], &[usize])] = &[
        (&[2, 3], &[3, 4]),
        (&[3], &[3]),
        (&[2, 3], &[3]),
        (&[3], &[3, 2]),
        (&[4, 2, 3], &[3, 2]),
        (&[2, 1, 2, 3], &[5, 3, 2]),
        (&[2, 3], &[4, 5]),
        (&[], &[3]),
        (&[2, 3, 4], &[5, 4, 2]),
    ];
    for expr in ["x @ y", "ops.matmul(x, y)"] {
        let src = binary_src(expr);
        for &a in &DTYPES {
            for &b in &DTYPES {
                for (sa, sb) in shapes {
                    r.check(&src, vec![ta(a, sa), ta(b, sb)], true);
                }
            }
        }
    }
    r.assert_ok("matmul");
    assert!(r.compile_errors > 0);
}

#[test]
fn unary_operators_and_elementwise_functions() {
    let mut r = Report::default();
    let exprs = [
        "-x",
        "+x",
        "~x",
        "abs(x)",
        "ops.neg(x)",
        "ops.abs(x)",
        "ops.exp(x)",
        "ops.log(x)",
        "ops.sqrt(x)",
        "ops.tanh(x)",
        "ops.sin(x)",
        "ops.cos(x)",
        "ops.sigmoid(x)",
        "ops.relu(x)",
        "ops.logical_not(x)",
        "not x",
    ];
    for expr in exprs {
        let src = format!("from anfora import ops\n\ndef f(x):\n    return {expr}\n");
        for &d in &DTYPES {
            for shape in [&[2, 3][..], &[], &[1]] {
                r.check(&src, vec![ta(d, shape)], true);
            }
        }
    }
    r.assert_ok("unary operators");
}

// ---- reductions, reshapes ----------------------------------------------------------------------

#[test]
fn reductions() {
    let mut r = Report::default();
    let mut exprs = Vec::new();
    for op in ["sum", "mean", "max", "min", "prod"] {
        for axis in ["None", "0", "-1", "(0, 1)", "(1,)", "2", "(0, 0)"] {
            for keep in ["False", "True"] {
                exprs.push(format!("ops.{op}(x, {axis}, {keep})"));
            }
            exprs.push(format!("x.{op}({axis})"));
            exprs.push(format!("x.{op}(axis={axis}, keepdims=True)"));
        }
        exprs.push(format!("x.{op}()"));
        exprs.push(format!("ops.{op}(x)"));
        exprs.push(format!("ops.{op}(x, keepdims=True)"));
    }
    for expr in &exprs {
        let src = format!("from anfora import ops\n\ndef f(x):\n    return {expr}\n");
        for &d in &DTYPES {
            r.check(&src, vec![ta(d, &[2, 3])], true);
        }
        r.check(&src, vec![ta(DType::F32, &[0, 3])], true);
        r.check(&src, vec![ta(DType::I64, &[4])], true);
    }
    r.assert_ok("reductions");
}

#[test]
fn reshape_and_transpose() {
    let mut r = Report::default();
    let exprs = [
        "ops.reshape(x, (3, 2))",
        "ops.reshape(x, (-1,))",
        "ops.reshape(x, -1)",
        "ops.reshape(x, (2, -1, 1))",
        "ops.reshape(x, (4, -1))",
        "ops.reshape(x, (-1, -1))",
        "ops.reshape(x, (5,))",
        "x.reshape(3, 2)",
        "x.reshape((6,))",
        "x.reshape([1, 6])",
        "x.reshape(-1)",
        "ops.transpose(x)",
        "ops.transpose(x, (1, 0))",
        "ops.transpose(x, (0, 1))",
        "ops.transpose(x, (1, 1))",
        "ops.transpose(x, (0,))",
        "ops.transpose(x, (-1, 0))",
        "x.transpose()",
        "x.transpose(1, 0)",
        "x.transpose((1, 0))",
        "x.T",
        "x.T.T",
    ];
    for expr in exprs {
        let src = format!("from anfora import ops\n\ndef f(x):\n    return {expr}\n");
        for &d in &DTYPES {
            r.check(&src, vec![ta(d, &[2, 3])], true);
        }
    }
    // Sizes known only at run time.
    let src = "def f(x, a, b):\n    return x.reshape((a, b))\n";
    r.check(
        src,
        vec![
            ta(DType::F32, &[2, 3]),
            Arg::mutable(Value::Int(3)),
            Arg::mutable(Value::Int(2)),
        ],
        false,
    );
    r.check(
        src,
        vec![
            ta(DType::F32, &[2, 3]),
            Arg::mutable(Value::Int(-1)),
            Arg::from(Value::Int(2)),
        ],
        false,
    );
    r.check(
        src,
        vec![
            ta(DType::F32, &[2, 3]),
            Arg::mutable(Value::Int(3)),
            Arg::from(Value::Int(4)),
        ],
        false,
    );
    r.assert_ok("reshape and transpose");
}

#[test]
fn pads_and_aliases() {
    let mut r = Report::default();
    let exprs = [
        "ops.pad(x, ((1, 2), (3, 0)), 'reflect')",
        "ops.pad(x, 7, 'reflect')",
        "ops.pad(x, (2, 9), mode='symmetric')",
        "ops.pad(x, 3, 'edge')",
        "ops.pad(x, 1, 'constant', 5)",
        "ops.pad(x, 1, constant_values=ops.tensor([2]))",
        "ops.pad(x, 1)",
        "ops.pad(x, 1, 'edge', 0)",
        "ops.pad(x, 1, 'edge', None)",
        "ops.pad(x, 1, 'wrap')",
        "ops.pad(x, 1, 'nothing')",
        "ops.pad(x, 1, 3)",
        "ops.pad(x, 1, 'constant', 'a')",
        "ops.pad(x[:0], (0, 1), 'reflect')",
        "ops.pad(x[:0], ((0, 0), (1, 2)), 'symmetric')",
        "ops.pad(x[:0], ((0, 1), (0, 0)), 'edge')",
        "ops.pad(x[:0], ((0, 1), (0, 0)))",
        "ops.zero_pad2d(ops.reshape(x, (1, 2, 3)), (1, 2, 0, 1))",
        "ops.reflection_pad2d(ops.reshape(x, (1, 1, 2, 3)), (2, 1, 1, 0))",
        "ops.reflection_pad2d(ops.reshape(x, (1, 1, 2, 3)), (3, 0, 0, 0))",
        "ops.reflection_pad2d(ops.reshape(x, (1, 2, 3)), 2)",
        "ops.reflection_pad2d(x, 1)",
        "ops.replication_pad2d(ops.reshape(x, (1, 2, 3)), [4, 0, 5, 1])",
        "ops.replication_pad2d(ops.reshape(x, (1, 2, 3))[:, :0], 1)",
        "ops.replication_pad2d(ops.reshape(x, (1, 2, 3)), (1, 2))",
        "ops.replication_pad2d(ops.reshape(x, (1, 2, 3)), (1, -2, 0, 0))",
        "ops.zero_pad2d(ops.reshape(x, (1, 2, 3)), 1.5)",
        "ops.permute(x, (1, 0))",
        "ops.permute(x, (0, 0))",
        "ops.permute(x, None)",
        "x.permute(1, 0)",
        "x.permute((1, 0))",
        "x.permute()",
        "ops.unsqueeze(x, 1)",
        "ops.unsqueeze(x, (0, 3))",
        "ops.index_select(x, 1, ops.tensor([2, 0, 2, 2]))",
        "ops.index_select(x, 0, ops.tensor([1], dtype='int32'))",
        "ops.index_select(x, -1, ops.tensor([], dtype='int64'))",
        "ops.index_select(x, 0, ops.tensor([[1]]))",
        "ops.index_select(x, 0, ops.tensor([1.0]))",
        "ops.index_select(x, 0, [1])",
        "ops.index_select(x, 0, ops.tensor([5]))",
        "ops.index_select(x, 2, ops.tensor([0]))",
    ];
    for expr in exprs {
        let src = format!("from anfora import ops\n\ndef f(x):\n    return {expr}\n");
        for &d in &DTYPES {
            r.check(&src, vec![ta(d, &[2, 3])], true);
        }
    }
    // Widths and paddings known only at run time.
    for expr in [
        "ops.pad(x, ((a, 0), (0, a)), 'reflect')",
        "ops.pad(x[:0], a, 'edge')",
        "ops.reflection_pad2d(ops.reshape(x, (1, 2, 3)), (0, 0, a, 0))",
        "ops.zero_pad2d(ops.reshape(x, (1, 2, 3)), a)",
    ] {
        let src = format!("from anfora import ops\n\ndef f(x, a):\n    return {expr}\n");
        for a in [0, 1, 2, 5] {
            r.check(
                &src,
                vec![ta(DType::F32, &[2, 3]), Arg::mutable(Value::Int(a))],
                false,
            );
        }
    }
    // Sizes known only at run time (a mutable tensor argument keeps only its rank).
    for expr in [
        "ops.reflection_pad2d(x, (3, 0, 1, 1))",
        "ops.reflection_pad2d(x, (0, 0, 1, 1))",
        "ops.replication_pad2d(x, 2)",
        "ops.zero_pad2d(x[0], (1, 2))",
        "ops.pad(x, ((0, 0), (1, 2), (3, 0)), 'symmetric')",
        "ops.index_select(x, 2, ops.tensor([0, 0, 1]))",
    ] {
        let src = format!("from anfora import ops\n\ndef f(x):\n    return {expr}\n");
        for shape in [[1, 2, 3], [2, 3, 1], [0, 4, 4]] {
            r.check(&src, vec![Arg::mutable(t(DType::F64, &shape))], false);
        }
    }
    r.assert_ok("pads and aliases");
    assert!(r.compile_errors > 0);
}

// ---- creation, casts, where ------------------------------------------------------------------

#[test]
fn creation() {
    let mut r = Report::default();
    let dtypes = [
        "None",
        "anfora.float64",
        "anfora.int32",
        "anfora.bool_",
        "'int64'",
        "float",
        "int",
        "bool",
    ];
    for d in dtypes {
        for expr in [
            format!("ops.zeros((2, 3), {d})"),
            format!("ops.ones(n, {d})"),
            format!("ops.zeros((n, 2), dtype={d})"),
            format!("ops.full((2, n), 1.5, {d})"),
            format!("ops.full(3, x, {d})"),
            format!("ops.zeros_like(x, {d})"),
            format!("ops.ones_like(x, dtype={d})"),
            format!("ops.arange(n, dtype={d})"),
            format!("ops.tensor(x, {d})"),
            format!("ops.tensor((n, n), {d})"),
        ] {
            let src = format!(
                "import anfora\nfrom anfora import ops\n\ndef f(x, n):\n    return {expr}\n"
            );
            for x in [
                t(DType::F64, &[]),
                t(DType::I32, &[]),
                t(DType::Bool, &[]),
                t(DType::F32, &[2]),
            ] {
                r.check(
                    &src,
                    vec![Arg::from(x.clone()), Arg::from(Value::Int(2))],
                    true,
                );
                // `n` known only at run time: sizes that depend on it are unknown.
                r.check(&src, vec![Arg::from(x), Arg::mutable(Value::Int(2))], false);
            }
        }
    }
    let fills = [
        Arg::from(Value::Int(2)),
        Arg::mutable(Value::Int(2)),
        Arg::mutable(Value::Float(2.5)),
        Arg::mutable(Value::Bool(true)),
    ];
    for src in [
        "from anfora import ops\n\ndef f(a, b):\n    return ops.full((2,), a)\n",
        "from anfora import ops\n\ndef f(a, b):\n    return ops.tensor((a, b))\n",
        "from anfora import ops\n\ndef f(a, b):\n    return ops.tensor(((a, b), (b, a)))\n",
        "from anfora import ops\n\ndef f(a, b):\n    return ops.tensor(((a, b), (b,)))\n",
        "from anfora import ops\n\ndef f(a, b):\n    return ops.tensor(())\n",
        "from anfora import ops\n\ndef f(a, b):\n    return ops.arange(a, 10, b)\n",
        "from anfora import ops\n\ndef f(a, b):\n    return ops.arange(1.5, a)\n",
    ] {
        for a in &fills {
            for b in &fills {
                r.check(src, vec![a.clone(), b.clone()], false);
            }
        }
    }
    r.assert_ok("creation");
}

#[test]
fn casts() {
    let mut r = Report::default();
    for d in [
        "anfora.float64",
        "anfora.float32",
        "anfora.int32",
        "anfora.int64",
        "anfora.bool_",
        "'float64'",
        "float",
        "int",
        "bool",
        "None",
    ] {
        for expr in [
            format!("ops.cast(x, {d})"),
            format!("x.astype({d})"),
            format!("x.astype(dtype={d})"),
        ] {
            let src =
                format!("import anfora\nfrom anfora import ops\n\ndef f(x):\n    return {expr}\n");
            for &dt in &DTYPES {
                r.check(&src, vec![ta(dt, &[2, 3])], true);
            }
        }
    }
    r.assert_ok("casts");
}

#[test]
fn where_() {
    let mut r = Report::default();
    let src = "from anfora import ops\n\ndef f(c, x, y):\n    return ops.where(c, x, y)\n";
    let sides = |d: DType| {
        vec![
            ta(d, &[2, 3]),
            ta(d, &[3]),
            Arg::from(Value::Int(1)),
            Arg::mutable(Value::Float(0.5)),
            Arg::mutable(Value::Bool(false)),
        ]
    };
    for &c in &[DType::Bool, DType::I64, DType::F32] {
        for &a in &DTYPES {
            for &b in &DTYPES {
                for x in sides(a) {
                    for y in sides(b) {
                        r.check(src, vec![ta(c, &[2, 3]), x.clone(), y], true);
                    }
                }
            }
        }
        r.check(
            src,
            vec![ta(c, &[2, 3]), ta(DType::F32, &[4]), ta(DType::F32, &[3])],
            true,
        );
    }
    r.assert_ok("where");
}

/// `ops.clip` promotes its three operands together, Python numbers weak (numpy's `clip`;
/// found by tests/python/test_ops_random.py: `clip(bool, -4, int32)` is int32).
#[test]
fn clip() {
    let mut r = Report::default();
    let src = "from anfora import ops\n\ndef f(x, lo, hi):\n    return ops.clip(x, lo, hi)\n";
    let bounds = |d: DType| {
        vec![
            ta(d, &[3]),
            Arg::from(Value::Int(-4)),
            Arg::mutable(Value::Float(0.5)),
            Arg::from(Value::None),
        ]
    };
    for &x in &DTYPES {
        for b in [DType::Bool, DType::I32, DType::F64] {
            for lo in bounds(b) {
                for h in [DType::I32, DType::F32] {
                    for hi in bounds(h) {
                        r.check(src, vec![ta(x, &[2, 3]), lo.clone(), hi], true);
                    }
                }
            }
        }
    }
    r.assert_ok("clip");
}

// ---- indexing, attributes, iteration ------------------------------------------------------------

#[test]
fn indexing_and_attributes() {
    let mut r = Report::default();
    let exprs = [
        "x[0]",
        "x[-1]",
        "x[1:]",
        "x[::2]",
        "x[None]",
        "x[..., 0]",
        "x[0, 1]",
        "x[:, None]",
        "x[..., None, 1:]",
        "x[i]",
        "x[i, i]",
        "x[:i]",
        "x[ops.sum(k)]",
        "x[5]",
        "x[0, 0, 0]",
        "x.shape",
        "x.dtype",
        "x.ndim",
        "x.size",
        "x.shape[0] * 2",
        "len(x)",
        "x[0].item()",
        "x[0, 0].item()",
        "x.T[0]",
    ];
    for expr in exprs {
        let src = format!("from anfora import ops\n\ndef f(x, i, k):\n    return {expr}\n");
        for &d in &DTYPES {
            for i in [Arg::from(Value::Int(1)), Arg::mutable(Value::Int(1))] {
                let precise = !i.mutable || !expr.contains(":i");
                r.check(&src, vec![ta(d, &[2, 3]), i, ta(DType::I64, &[1])], precise);
            }
        }
    }
    r.assert_ok("indexing and attributes");
}

#[test]
fn iteration_over_tensors() {
    let mut r = Report::default();
    for body in [
        "    s = x[0] * 0\n    for row in x:\n        s = s + row\n    return s\n",
        "    return sum(x)\n",
        "    n = 0\n    for row in x:\n        n = n + 1\n    return n\n",
        "    if x[0, 0]:\n        return x[0]\n    return x[1]\n",
        "    t = tuple(x)\n    return t[1]\n",
    ] {
        let src = format!("def f(x):\n{body}");
        for &d in &DTYPES {
            r.check(&src, vec![ta(d, &[2, 3])], true);
        }
    }
    r.assert_ok("iteration");
}

// ---- Python values ------------------------------------------------------------------------------

#[test]
fn python_scalars_and_builtins() {
    let mut r = Report::default();
    let exprs = [
        "a + b",
        "a - b",
        "a * b",
        "a / b",
        "a // b",
        "a % b",
        "a ** b",
        "a << b",
        "a >> b",
        "a & b",
        "a | b",
        "a ^ b",
        "a == b",
        "a != b",
        "a < b",
        "a >= b",
        "-a",
        "+a",
        "~a",
        "not a",
        "abs(a)",
        "divmod(a, b)",
        "min(a, b)",
        "max(a, b)",
        "pow(a, b)",
        "int(a)",
        "float(a)",
        "bool(a)",
        "str(a)",
        "repr(a)",
        "a is None",
        "a is not None",
        "(a, b)[1]",
        "(a, b) + (b,)",
        "(a,) * 3",
        "isinstance(a, int)",
        "isinstance(a, (float, bool))",
        "a if b else 7",
        "a and b",
        "a or b",
        "ops.relu(a)",
        "ops.exp(a)",
    ];
    let values = [
        Value::Int(7),
        Value::Int(-2),
        Value::Int(0),
        Value::Float(2.5),
        Value::Bool(true),
    ];
    for expr in exprs {
        let src = format!("from anfora import ops\n\ndef f(a, b):\n    return {expr}\n");
        for a in &values {
            for b in &values {
                for mutable in [false, true] {
                    let arg = |v: &Value| {
                        if mutable {
                            Arg::mutable(v.clone())
                        } else {
                            Arg::from(v.clone())
                        }
                    };
                    r.check(&src, vec![arg(a), arg(b)], false);
                }
            }
        }
    }
    // Strings and tuples.
    let src = "def f(a, b):\n    return a + b, a * 2, len(a), a[0], a[-1:], a == b, a < b\n";
    for (a, b) in [
        (Value::str("ab"), Value::str("c")),
        (
            Value::tuple(vec![Value::Int(1), Value::Float(2.0)]),
            Value::tuple(vec![Value::Int(3)]),
        ),
    ] {
        r.check(src, vec![Arg::from(a.clone()), Arg::from(b.clone())], false);
        r.check(src, vec![Arg::mutable(a), Arg::mutable(b)], false);
    }
    r.assert_ok("python scalars");
}

#[test]
fn tensors_and_python_builtins() {
    let mut r = Report::default();
    let exprs = [
        "int(x[0, 0])",
        "float(x[0, 0])",
        "bool(x[0, 0])",
        "abs(x)",
        "len(x)",
        "str(x[0, 0])",
        "isinstance(x, anfora.Tensor)",
        "isinstance(x, int)",
        "x.dtype == anfora.float32",
        "max(x[0, 0], x[0, 1])",
        "x[0, 0] < 2",
        "x[0, 0] + 1",
    ];
    for expr in exprs {
        let src = format!("import anfora\n\ndef f(x):\n    return {expr}\n");
        for &d in &DTYPES {
            r.check(&src, vec![ta(d, &[2, 3])], false);
        }
    }
    r.assert_ok("tensors and builtins");
}

#[test]
fn tensors_through_control_flow_and_calls() {
    let mut r = Report::default();
    let programs = [
        // A loop-carried tensor keeps its type.
        "def f(x, n):\n    i = 0\n    while i < n:\n        x = x * x + x\n        i = i + 1\n    return x\n",
        // Branches that agree.
        "def f(x, n):\n    if n > 1:\n        y = x + 1\n    else:\n        y = x - 1\n    return y\n",
        // Early return in a loop.
        "def f(x, n):\n    for i in range(n):\n        if i == 2:\n            return x[0]\n    return x[1]\n",
        // A function called with two shapes.
        "def g(t):\n    return t.sum(axis=0)\n\ndef f(x, n):\n    return g(x), g(x[0]), g(x.T)\n",
        // Recursion over a shrinking tensor: sizes known only at run time.
        "def f(x, n):\n    if n == 0:\n        return x.sum()\n    return f(x[1:], n - 1) + x[0].sum()\n",
        // A loop that changes a tensor's size: the size becomes dynamic.
        "def f(x, n):\n    for i in range(n):\n        x = x[1:]\n    return x\n",
        "def f(x, n):\n    i = 0\n    while i < n:\n        x = x[:, 1:] + x[:, 1:]\n        i = i + 1\n    return x.sum(axis=1)\n",
        "from anfora import ops\n\ndef f(x, n):\n    y = ops.zeros(0)\n    for i in range(n):\n        y = ops.ones(i + 1) + y.sum()\n    return y\n",
        // A closure.
        "def f(x, n):\n    def add(y):\n        return x + y\n    return add(n), add(x)\n",
    ];
    for src in programs {
        for &d in &DTYPES {
            for n in [
                Arg::from(Value::Int(1)),
                Arg::mutable(Value::Int(1)),
                Arg::mutable(Value::Int(3)),
            ] {
                r.check(src, vec![ta(d, &[4, 4]), n], false);
            }
        }
    }
    r.assert_ok("control flow");
}

/// Arguments of the quantized operations, whose operands are 8-bit.
fn quantized_args(p: Prim) -> Option<Vec<Abs>> {
    let typed = |d: DType, s: &[usize]| {
        Abs::tensor(anfora_ops::TensorAbs::new(
            d,
            s.iter().map(|&v| Some(v)).collect(),
        ))
    };
    let ints = |v: &[i64]| Abs::tuple(v.iter().map(|&i| Abs::Int(Some(i))).collect());
    let (scale, zero) = (Abs::Float(Some(0.1)), Abs::Int(Some(3)));
    Some(match p {
        Prim::Quantize => vec![typed(DType::F32, &[2, 3]), scale, zero],
        Prim::Dequantize => vec![typed(DType::U8, &[2, 3]), scale, zero],
        Prim::FakeQuant => vec![typed(DType::F32, &[2, 3]), Abs::Float(Some(-1.0)), scale],
        Prim::QuantMatMul => vec![
            typed(DType::U8, &[2, 3]),
            scale.clone(),
            zero.clone(),
            typed(DType::I8, &[3, 2]),
            typed(DType::F32, &[2]),
            Abs::None,
            scale,
            zero,
            Abs::Bool(Some(true)),
        ],
        Prim::QuantConv2D => vec![
            typed(DType::U8, &[1, 2, 4, 4]),
            scale.clone(),
            zero.clone(),
            typed(DType::I8, &[18, 3]),
            ints(&[3, 3]),
            typed(DType::F32, &[3]),
            Abs::None,
            scale,
            zero,
            Abs::Bool(Some(false)),
            ints(&[1, 1]),
            ints(&[1, 1, 1, 1]),
            ints(&[1, 1]),
        ],
        Prim::WeightOnlyMatMul => vec![
            typed(DType::F32, &[2, 3]),
            typed(DType::I8, &[3, 2]),
            typed(DType::F32, &[2]),
        ],
        _ => return None,
    })
}
