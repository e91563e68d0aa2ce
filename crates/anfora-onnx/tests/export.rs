//! Exports compiled programs to ONNX and checks the models against anfora's own results:
//! `tests/run_onnx.py` runs `onnx.checker.check_model(full_check=True)` and onnxruntime with
//! the Python at `$ANFORA_PYTHON` (else the repository's `.venv`, else `python3`), which must
//! have numpy, onnx and onnxruntime (`scripts/setup.sh` installs them). Outputs travel as
//! `.npy` files and must agree within 1e-6 relative.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anfora_ir::Options;
use anfora_onnx::proto::GraphProto;
use anfora_onnx::{OnnxError, OnnxOptions, export};
use anfora_ops::Value;
use anfora_runtime::npy;
use anfora_session::{Arg, Session};
use anfora_tensor::Tensor;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("ANFORA_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = root().join(".venv/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

fn program(file: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/programs")
            .join(file),
    )
    .unwrap()
}

// ---- running both ------------------------------------------------------------------------------

/// The tensors a result is made of, in the order the export flattens it.
fn flatten(v: &Value, out: &mut Vec<Tensor>) {
    match v {
        Value::Tensor(t) => out.push(t.clone()),
        Value::Tuple(items) => items.iter().for_each(|i| flatten(i, out)),
        Value::Int(i) => out.push(Tensor::from_i64(vec![*i], &[]).unwrap()),
        Value::Float(f) => out.push(Tensor::from_f64(vec![*f], &[]).unwrap()),
        Value::Bool(b) => out.push(Tensor::from_bool(vec![*b], &[]).unwrap()),
        Value::None => {}
        other => panic!("unexpected result {other:?}"),
    }
}

/// Under the target's scratch folder, so nothing accumulates in the system's temp folder.
fn scratch_root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("anfora-onnx-export")
}

fn scratch(name: &str) -> PathBuf {
    let dir = scratch_root().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Exports `entry` of `file` compiled for `args`, then for each of `runs` (argument lists of
/// the same signature) compares onnxruntime's outputs with the compiled engine's result.
/// Returns the op types the model uses (subgraphs included).
fn check(file: &str, entry: &str, args: Vec<Arg>, runs: Vec<Vec<Arg>>) -> BTreeSet<String> {
    check_with(file, entry, args, runs, &OnnxOptions::default())
}

fn check_with(
    file: &str,
    entry: &str,
    args: Vec<Arg>,
    runs: Vec<Vec<Arg>>,
    options: &OnnxOptions,
) -> BTreeSet<String> {
    let mut session = Session::load(file, &program(file), Options::default());
    let compiled = session
        .compiled(entry, &args)
        .unwrap_or_else(|f| panic!("{}", session.render(&f)));
    let bytes = export(
        &session.frontend.module,
        compiled.graph,
        &compiled.abstracts,
        options,
    )
    .unwrap_or_else(|e| panic!("{}", e.render(&session.frontend.module.sources)));
    let dir = scratch(&format!("{entry}-{}", options.opset));
    let model = dir.join("model.onnx");
    std::fs::write(&model, &bytes).unwrap();
    let model_proto = anfora_onnx::export_model(
        &session.frontend.module,
        compiled.graph,
        &compiled.abstracts,
        options,
    )
    .unwrap();
    let input_names: Vec<String> = model_proto
        .graph
        .as_ref()
        .unwrap()
        .input
        .iter()
        .map(|i| i.name.clone())
        .collect();
    for (r, run) in runs.into_iter().enumerate() {
        let mut feeds = Vec::new();
        let mut inputs = Vec::new();
        for a in &run {
            if a.mutable || matches!(a.value, Value::Tensor(_)) {
                flatten(&a.value, &mut inputs);
            }
        }
        assert_eq!(inputs.len(), input_names.len(), "one .npy per model input");
        for (i, (t, name)) in inputs.iter().zip(&input_names).enumerate() {
            let path = dir.join(format!("run{r}_input_{i}.npy"));
            std::fs::write(&path, npy::write(t)).unwrap();
            feeds.push(format!("{name}={}", path.display()));
        }
        let out_dir = dir.join(format!("run{r}"));
        std::fs::create_dir_all(&out_dir).unwrap();
        let status = Command::new(python())
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/run_onnx.py"))
            .arg(&model)
            .arg(&out_dir)
            .args(&feeds)
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run {} (set ANFORA_PYTHON): {e}", python().display())
            });
        assert!(
            status.status.success(),
            "run_onnx.py failed for {entry}:\n{}",
            String::from_utf8_lossy(&status.stderr)
        );
        let mut out = Vec::new();
        let expected = session
            .call(entry, run, &mut out)
            .unwrap_or_else(|f| panic!("{}", session.render(&f)));
        let mut want = Vec::new();
        flatten(&expected, &mut want);
        let count: usize = String::from_utf8_lossy(&status.stdout)
            .trim()
            .parse()
            .unwrap();
        assert_eq!(count, want.len(), "{entry}: number of outputs");
        for (i, w) in want.iter().enumerate() {
            let bytes = std::fs::read(out_dir.join(format!("output_{i}.npy"))).unwrap();
            let got = npy::read(&bytes).unwrap();
            assert_eq!(got.dtype(), w.dtype(), "{entry} output {i}: dtype");
            assert_eq!(got.shape(), w.shape(), "{entry} output {i}: shape");
            let (got, w) = (got.to_f64_vec(), w.to_f64_vec());
            for (k, (a, b)) in got.iter().zip(&w).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()),
                    "{entry} run {r} output {i}[{k}]: onnxruntime {a}, anfora {b}"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let mut ops = BTreeSet::new();
    op_types(model_proto.graph.as_ref().unwrap(), &mut ops);
    ops
}

fn op_types(g: &GraphProto, out: &mut BTreeSet<String>) {
    for n in &g.node {
        out.insert(n.op_type.clone());
        for a in &n.attribute {
            if let Some(sub) = &a.g {
                op_types(sub, out);
            }
        }
    }
}

fn has(ops: &BTreeSet<String>, wanted: &[&str]) {
    for w in wanted {
        assert!(ops.contains(*w), "{w} missing from {ops:?}");
    }
}

fn tensor_f64(shape: &[usize], f: impl Fn(usize) -> f64) -> Value {
    let n = shape.iter().product();
    Value::Tensor(Tensor::from_f64((0..n).map(f).collect(), shape).unwrap())
}

fn tensor_f32(shape: &[usize], f: impl Fn(usize) -> f32) -> Value {
    let n = shape.iter().product();
    Value::Tensor(Tensor::from_f32((0..n).map(f).collect(), shape).unwrap())
}

/// 8x8 "images" in [0, 1], as the digits are (float64 for the MLP).
fn digits64(batch: usize, seed: f64) -> Value {
    tensor_f64(&[batch, 8, 8], |i| {
        (i as f64 * 0.37 + seed).sin() * 0.5 + 0.5
    })
}

/// Multiples of 1/4 in [0, 1] (float32): the LeNet's products and sums are exact, so both
/// runtimes agree bit for bit whatever their order of summation.
fn digits32(batch: usize, seed: f32) -> Value {
    tensor_f32(&[batch, 1, 8, 8], |i| {
        (((i as f32 * 0.37 + seed).sin() * 2.0 + 2.0).floor()) / 4.0
    })
}

#[test]
fn mlp_matches() {
    let ops = check(
        "mlp.py",
        "mlp",
        vec![Arg::from(digits64(4, 0.0))],
        vec![
            vec![Arg::from(digits64(4, 0.0))],
            vec![Arg::from(digits64(4, 1.3))],
        ],
    );
    has(&ops, &["Gemm", "Relu", "LogSoftmax", "Softmax", "ArgMax"]);
}

#[test]
fn lenet_matches() {
    let ops = check(
        "lenet.py",
        "lenet",
        vec![Arg::from(digits32(3, 0.0))],
        vec![
            vec![Arg::from(digits32(3, 0.0))],
            vec![Arg::from(digits32(3, 2.1))],
        ],
    );
    has(&ops, &["Conv", "MaxPool", "Relu", "Reshape", "Gemm"]);
}

#[test]
fn if_on_a_tensor_condition_matches_both_branches() {
    let x = |s: f32| tensor_f32(&[5], move |i| (i as f32 - 2.0) * s);
    let w = tensor_f32(&[5], |i| 0.5 + i as f32 * 0.25);
    let ops = check(
        "branch.py",
        "branch",
        vec![Arg::from(x(1.0)), Arg::from(w.clone())],
        vec![
            vec![Arg::from(x(1.0)), Arg::from(w.clone())],
            vec![Arg::from(x(-1.0)), Arg::from(w)],
        ],
    );
    has(&ops, &["If", "Tanh", "Exp"]);
}

#[test]
fn while_loop_matches() {
    let x = tensor_f32(&[3], |i| [1.0, -2.0, 0.5][i]);
    let limit = |v: f64| Arg::mutable(Value::Float(v));
    let ops = check(
        "loop.py",
        "loop",
        vec![Arg::from(x.clone()), limit(10.0)],
        vec![
            vec![Arg::from(x.clone()), limit(10.0)],
            vec![Arg::from(x.clone()), limit(100.0)],
            vec![Arg::from(x), limit(-1.0)],
        ],
    );
    has(&ops, &["Loop", "ReduceSum", "Less"]);
}

fn int(i: i64) -> Arg {
    Arg::mutable(Value::Int(i))
}

#[test]
fn for_loop_with_a_branch_in_its_body_matches() {
    let x = || Arg::from(tensor_f32(&[3], |i| [1.0, -2.0, 0.5][i]));
    let ops = check(
        "control.py",
        "forloop",
        vec![x(), int(4)],
        vec![vec![x(), int(4)], vec![x(), int(0)], vec![x(), int(9)]],
    );
    has(&ops, &["Loop", "If"]);
}

#[test]
fn nested_loops_match() {
    let x = || Arg::from(tensor_f32(&[2, 2], |i| i as f32 - 1.5));
    let ops = check(
        "control.py",
        "nested",
        vec![x(), int(4)],
        vec![vec![x(), int(4)], vec![x(), int(1)], vec![x(), int(6)]],
    );
    has(&ops, &["Loop"]);
}

#[test]
fn loop_inside_a_branch_matches() {
    let x = |s: f32| Arg::from(tensor_f32(&[4], move |i| (i as f32 - 1.0) * s));
    let ops = check(
        "control.py",
        "loop_in_branch",
        vec![x(1.0), int(3)],
        vec![
            vec![x(1.0), int(3)],
            vec![x(-1.0), int(3)],
            vec![x(1.0), int(0)],
        ],
    );
    has(&ops, &["If", "Loop"]);
}

#[test]
fn primitives_and_promotion_match_in_every_opset() {
    let x = || {
        Arg::from(tensor_f32(&[2, 3], |i| {
            [-1.5, -0.5, 0.25, 0.75, 1.25, 2.0][i]
        }))
    };
    let k = || {
        Arg::from(Value::Tensor(
            Tensor::from_i32(vec![-3, -1, 0, 2, 5, 7], &[2, 3]).unwrap(),
        ))
    };
    for opset in [17, 18, 21] {
        let options = OnnxOptions {
            opset,
            ..Default::default()
        };
        let ops = check_with(
            "ops.py",
            "mixed",
            vec![x(), k(), int(2)],
            vec![vec![x(), k(), int(2)], vec![x(), k(), int(-7)]],
            &options,
        );
        has(
            &ops,
            &[
                "Mod",
                "Floor",
                "Where",
                "Clip",
                "ReduceMax",
                "AveragePool",
                "Expand",
                "Concat",
                "Unsqueeze",
            ],
        );
    }
}

#[test]
fn basic_indexing_matches() {
    let x = || Arg::from(tensor_f32(&[3, 4], |i| i as f32 * 0.5 - 2.0));
    let ops = check(
        "index.py",
        "index",
        vec![x(), int(1)],
        vec![vec![x(), int(1)], vec![x(), int(-3)], vec![x(), int(2)]],
    );
    has(&ops, &["Slice", "Gather"]);
}

#[test]
fn a_loop_reading_parameters_matches() {
    let xs = || Arg::from(tensor_f64(&[5, 4], |i| (i as f64 * 0.3).cos()));
    let h = || Arg::from(tensor_f64(&[4], |i| i as f64 * 0.1));
    let ops = check("control.py", "rnn", vec![xs(), h()], vec![vec![xs(), h()]]);
    has(&ops, &["Loop", "Tanh"]);
}

// ---- refusals --------------------------------------------------------------------------------

fn refusal(name: &str, text: &str, entry: &str, args: Vec<Arg>) -> (OnnxError, String) {
    let mut session = Session::load(name, text, Options::default());
    let compiled = session
        .compiled(entry, &args)
        .unwrap_or_else(|f| panic!("{}", session.render(&f)));
    let err = export(
        &session.frontend.module,
        compiled.graph,
        &compiled.abstracts,
        &OnnxOptions::default(),
    )
    .expect_err("the export is refused");
    let short = err.diagnostic().short(&session.frontend.module.sources);
    (err, short)
}

#[test]
fn recursion_is_refused_at_the_call() {
    let text = "\
def down(n, x):
    if n > 0:
        return down(n - 1, x * 2.0)
    return x
";
    let x = tensor_f32(&[2], |i| i as f32);
    let (err, short) = refusal(
        "rec.py",
        text,
        "down",
        vec![Arg::mutable(Value::Int(3)), Arg::from(x)],
    );
    assert_eq!(err.construct, "recursion");
    let mut session = Session::load("rec.py", text, Options::default());
    session.compile("down").unwrap();
    let rendered = err.render(&session.frontend.module.sources);
    assert!(
        rendered.contains("E0602") && rendered.contains("return down(n - 1, x * 2.0)"),
        "{rendered}"
    );
    assert!(
        short.starts_with("rec.py:3:16: error[E0602]: cannot export to ONNX: `down` calls itself"),
        "{short}"
    );
}

#[test]
fn break_in_a_loop_is_refused() {
    let text = "\
from anfora import ops


def brk(x, n):
    while n > 0:
        if ops.sum(x) > 10.0:
            break
        x = x * 2.0
        n = n - 1
    return x
";
    let x = tensor_f32(&[2], |i| i as f32 + 1.0);
    let (err, short) = refusal(
        "brk.py",
        text,
        "brk",
        vec![Arg::from(x), Arg::mutable(Value::Int(5))],
    );
    assert_eq!(err.construct, "break or return in a loop", "{short}");
    assert!(short.starts_with("brk.py:6:"), "{short}");
}

#[test]
fn an_unsupported_primitive_is_named() {
    let text = "\
from anfora import ops


def padded(x):
    y = x * 2.0
    return ops.pad(y, 1, 'reflect')
";
    let x = tensor_f32(&[3], |i| i as f32);
    let (err, short) = refusal("pad.py", text, "padded", vec![Arg::from(x)]);
    assert_eq!(err.construct, "primitive Pad");
    assert!(short.starts_with("pad.py:6:12: error[E0602]: cannot export to ONNX: the primitive `Pad` has no ONNX translation"), "{short}");
}

#[test]
fn print_is_refused() {
    let text = "\
def shout(x):
    print(x)
    return x + 1.0
";
    let x = tensor_f32(&[3], |i| i as f32);
    let (err, short) = refusal("shout.py", text, "shout", vec![Arg::from(x)]);
    assert!(err.message.contains("is an effect"), "{}", err.message);
    assert!(short.starts_with("shout.py:2:5: error[E0602]"), "{short}");
}

#[test]
fn a_returned_closure_is_refused() {
    let text = "\
def adder(x):
    return lambda y: x + y
";
    let x = tensor_f32(&[3], |i| i as f32);
    let (err, _) = refusal("closure.py", text, "adder", vec![Arg::from(x)]);
    assert_eq!(err.construct, "a function value", "{err:?}");
}

#[test]
fn the_options_are_checked() {
    let mut session = Session::load("mlp.py", &program("mlp.py"), Options::default());
    let compiled = session
        .compiled("mlp", &[Arg::from(digits64(1, 0.0))])
        .unwrap();
    let options = OnnxOptions {
        opset: 12,
        ..Default::default()
    };
    let err = export(
        &session.frontend.module,
        compiled.graph,
        &compiled.abstracts,
        &options,
    )
    .expect_err("opset 12 is refused");
    assert!(err.message.contains("operator set 12"), "{}", err.message);
}
