//! After AD, the optimizer removes the machinery: for programs with static control flow the
//! optimized graph holds plain operations only — no closures, `Partial`, `Switch`, gradient
//! helpers or tuple plumbing — and computes the same values. Golden dumps show the result.

use anfora_ir::Options;
use anfora_ir::{GraphKind, Module, Prim};
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Session, repr};
use anfora_tensor::Tensor;

/// The primitives the grad stage emits that must not survive optimization when every shape is
/// known and control flow is static.
const MACHINERY: &[Prim] = &[
    Prim::Partial,
    Prim::Switch,
    Prim::StopGradient,
    Prim::GradAdd,
    Prim::SumToShape,
    Prim::BroadcastLike,
    Prim::FillZeros,
    Prim::SensOnes,
    Prim::SensCheck,
    Prim::AuxPair,
    Prim::GradArgument,
    Prim::GradTupleAt,
    Prim::GradItem,
    Prim::GradHead,
    Prim::GradPad,
];

/// The optimized IR of `entry` for `args`, with the module to inspect it.
fn optimized(src: &str, entry: &str, args: &[Arg]) -> (String, Vec<String>) {
    let mut s = Session::load("m.py", src, Options::default());
    let mut text = String::new();
    let mut problems = Vec::new();
    s.compile_pipeline(entry, Some(args), &mut |view| {
        if view.stage == "optimize" {
            text = view.ir();
            problems = machinery_left(view.module, view.entry);
        }
    })
    .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    (text, problems)
}

/// What is left of the AD machinery in the graphs reachable from `entry`.
fn machinery_left(m: &Module, entry: anfora_ir::GraphId) -> Vec<String> {
    let mut left = Vec::new();
    for (g, nodes) in anfora_ir::analysis::reachable(m, &[entry]) {
        let graph = m.graph(g);
        if g != entry && graph.kind != GraphKind::Fused {
            left.push(format!("graph @{}", graph.name));
        }
        for n in nodes {
            if let Some(p) = m.callee_prim(n) {
                if MACHINERY.contains(&p) {
                    left.push(format!("{} in @{}", p.name(), graph.name));
                }
                // Tuple plumbing: taking apart a tuple built in the program.
                let inputs = m.inputs(n);
                if p == Prim::TupleGetItem && m.callee_prim(inputs[1]) == Some(Prim::MakeTuple) {
                    left.push(format!("TupleGetItem of a MakeTuple in @{}", graph.name));
                }
            } else if m
                .callee_graph(n)
                .is_some_and(|h| m.graph(h).kind != GraphKind::Fused)
            {
                left.push(format!("call of a graph in @{}", graph.name));
            } else if m.callee_graph(n).is_none() {
                left.push(format!("call of a computed function in @{}", graph.name));
            }
        }
    }
    left
}

fn tensor(shape: &[usize], f: impl Fn(usize) -> f64) -> Arg {
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n).map(|i| f(i) as f32).collect();
    let t = Tensor::from_f32(data, shape).unwrap();
    Arg::from(Value::Tensor(t))
}

fn values_agree(src: &str, entry: &str, args: &[Arg]) -> String {
    let mut out = Vec::new();
    for engine in [Engine::Compiled, Engine::Reference] {
        let mut s = Session::load("m.py", src, Options::default());
        s.engine = engine;
        let v = s
            .call(entry, args.to_vec(), &mut std::io::sink())
            .unwrap_or_else(|f| panic!("{}", s.render(&f)));
        out.push(repr(&v));
    }
    assert_eq!(out[0], out[1], "compiled and reference engines disagree");
    out.remove(0)
}

const SMALL: &str = "\
from anfora import ops, grad

def f(x, y, scale):
    if scale > 1:
        y = y * scale
    else:
        y = y - scale
    return ops.sum(ops.tanh(x * y) + ops.stop_gradient(x) * x)

def main(x, y):
    return grad(f, argnums=(0, 1))(x, y, 2)
";

#[test]
fn a_gradient_with_a_static_branch_is_plain_operations() {
    let args = [
        tensor(&[3], |i| 0.1 * i as f64 - 0.1),
        tensor(&[3], |i| 0.5 + 0.25 * i as f64),
    ];
    let (text, left) = optimized(SMALL, "main", &args);
    assert_eq!(left, Vec::<String>::new(), "{text}");
    insta::assert_snapshot!("static_branch_optimize", text);
    // stop_gradient(x) * x contributes x: d/dx = tanh'(2xy) 2y + x, d/dy = tanh'(2xy) 2x.
    let out = values_agree(SMALL, "main", &args);
    let expect: Vec<(f64, f64)> = (0..3)
        .map(|i| {
            let (x, y) = (0.1 * i as f64 - 0.1, 0.5 + 0.25 * i as f64);
            let d = 1.0 - (2.0 * x * y).tanh().powi(2);
            (d * 2.0 * y + x, d * 2.0 * x)
        })
        .collect();
    let numbers: Vec<f64> = out
        .replace(['(', ')', '[', ']', ','], " ")
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let (dx, dy): (Vec<f64>, Vec<f64>) = expect.into_iter().unzip();
    let want = [dx, dy].concat();
    assert_eq!(numbers.len(), want.len(), "{out}");
    for (a, b) in numbers.iter().zip(&want) {
        assert!((a - b).abs() < 1e-5, "{out} vs {want:?}");
    }
}

/// W1's loss (784-512-512-10, ReLU, softmax cross-entropy) under `value_and_grad` with respect
/// to its six Parameters.
const MLP: &str = "\
import anfora
from anfora import ops, value_and_grad

W1 = anfora.Parameter(ops.ones((784, 512)) * 0.01, name='W1')
b1 = anfora.Parameter(ops.zeros((512,)), name='b1')
W2 = anfora.Parameter(ops.ones((512, 512)) * 0.01, name='W2')
b2 = anfora.Parameter(ops.zeros((512,)), name='b2')
W3 = anfora.Parameter(ops.ones((512, 10)) * 0.01, name='W3')
b3 = anfora.Parameter(ops.zeros((10,)), name='b3')

def loss(x, y):
    h = ops.relu(x @ W1 + b1)
    h = ops.relu(h @ W2 + b2)
    logits = h @ W3 + b3
    z = logits - ops.stop_gradient(ops.max(logits, axis=1, keepdims=True))
    lse = ops.log(ops.sum(ops.exp(z), axis=1, keepdims=True))
    return -ops.mean(ops.sum((z - lse) * y, axis=1))

def step(x, y):
    return value_and_grad(loss, argnums=None, weights=(W1, b1, W2, b2, W3, b3))(x, y)
";

#[test]
fn the_mlp_training_gradient_is_plain_operations() {
    let args = [
        tensor(&[128, 784], |i| ((i * 7919) % 101) as f64 / 101.0),
        tensor(
            &[128, 10],
            |i| if i % 10 == (i / 10) % 10 { 1.0 } else { 0.0 },
        ),
    ];
    let (text, left) = optimized(MLP, "step", &args);
    assert_eq!(left, Vec::<String>::new(), "{text}");
    // The Parameters are read once each: the backward pass reuses the forward's loads.
    assert_eq!(text.matches("= Load(").count(), 6, "{text}");
    // Three forward products that take their bias, and five backward ones reading transposes
    // in place: the input's gradient of the first layer is not computed.
    assert_eq!(text.matches("= Gemm(").count(), 8, "{text}");
    let gemms = |flags: &str| {
        (text.lines())
            .filter(|l| l.contains("= Gemm(") && l.ends_with(flags))
            .count()
    };
    assert_eq!(gemms(", Bool(1), Bool(0))"), 3, "{text}");
    assert_eq!(gemms(", Bool(0), Bool(1))"), 2, "{text}");
    assert!(!text.contains("MatMul"), "{text}");
    insta::assert_snapshot!("mlp_value_and_grad_optimize", text);
    values_agree(MLP, "step", &args);
}
