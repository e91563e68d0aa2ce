//! The lower stage and the executor: the shape of the code programs lower to, moves and
//! in-place updates, fused kernels, and errors raised by compiled code.

use anfora_exec::{Instr, Program};
use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Failure, Session, repr};
use anfora_tensor::Tensor;

fn session(src: &str) -> Session {
    Session::load("prog.py", src, Options::default())
}

/// Compiles `entry` for `args` and returns the lowered program's dump.
fn lowered(src: &str, entry: &str, args: &[Arg]) -> String {
    let mut s = session(src);
    let c = s
        .compiled(entry, args)
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    c.program
        .as_ref()
        .expect("lowered")
        .dump(&s.frontend.module.sources)
}

fn with_program<T>(src: &str, entry: &str, args: &[Arg], f: impl FnOnce(&Program) -> T) -> T {
    let mut s = session(src);
    let c = s
        .compiled(entry, args)
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    f(c.program.as_ref().expect("lowered"))
}

fn count(p: &Program, pred: impl Fn(&Instr) -> bool) -> usize {
    p.units
        .iter()
        .flat_map(|u| u.code.iter())
        .filter(|i| pred(i))
        .count()
}

/// Runs `entry` on both engines and checks they agree; returns the repr.
fn run_both(src: &str, entry: &str, args: Vec<Arg>) -> String {
    let mut results = Vec::new();
    for engine in [Engine::Compiled, Engine::Reference] {
        let mut s = session(src);
        s.engine = engine;
        let mut out = Vec::new();
        let r = s.call(entry, args.clone(), &mut out);
        let text = match r {
            Ok(v) => format!("{}{}", String::from_utf8(out).unwrap(), repr(&v)),
            Err(Failure::Runtime(e)) => {
                format!("{}{}", String::from_utf8(out).unwrap(), e.headline())
            }
            Err(f) => panic!("{}", s.render(&f)),
        };
        results.push(text);
    }
    assert_eq!(results[0], results[1], "compiled vs reference");
    results.pop().unwrap()
}

const LOOP: &str = "def main(n):\n    i = 0\n    s = 0\n    while i < n:\n        if i % 3 == 0:\n            s = s + i\n        else:\n            s = s - 1\n        i = i + 1\n    return s\n";

#[test]
fn a_while_loop_is_one_frame_of_jumps_and_fused_compare_branches() {
    with_program(LOOP, "main", &[Arg::mutable(Value::Int(10))], |p| {
        assert_eq!(p.units.len(), 1, "blocks are labels of one unit");
        assert_eq!(
            count(p, |i| matches!(
                i,
                Instr::Call { .. } | Instr::TailCall { .. } | Instr::CallValue { .. }
            )),
            0
        );
        assert_eq!(
            count(p, |i| matches!(i, Instr::Branch(b) if b.compare.is_some())),
            2,
            "both comparisons are fused into their branches"
        );
        assert_eq!(count(p, |i| matches!(i, Instr::MakeClosure { .. })), 0);
    });
    let text = lowered(LOOP, "main", &[Arg::mutable(Value::Int(10))]);
    assert!(text.contains("branch Less(r2, r0)"), "{text}");
    assert_eq!(
        run_both(LOOP, "main", vec![Arg::mutable(Value::Int(100))]),
        "1617"
    );
    assert_eq!(
        run_both(LOOP, "main", vec![Arg::mutable(Value::Int(0))]),
        "0"
    );
}

#[test]
fn recursion_calls_a_unit_and_tail_recursion_jumps() {
    let fib = "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n";
    with_program(fib, "fib", &[Arg::mutable(Value::Int(10))], |p| {
        assert_eq!(p.units.len(), 1);
        assert_eq!(count(p, |i| matches!(i, Instr::Call { unit: 0, .. })), 2);
    });
    assert_eq!(
        run_both(fib, "fib", vec![Arg::mutable(Value::Int(20))]),
        "6765"
    );
    // A self call in tail position becomes a jump: no frames, but a level of recursion each
    // (the jump says it is a call), as CPython's frames would be.
    let count_down = "def count(n, acc):\n    if n == 0:\n        return acc\n    return count(n - 1, acc + 1)\n";
    with_program(
        count_down,
        "count",
        &[Arg::mutable(Value::Int(1)), Arg::mutable(Value::Int(0))],
        |p| {
            assert_eq!(
                count(p, |i| matches!(
                    i,
                    Instr::Call { .. } | Instr::TailCall { .. }
                )),
                0
            );
            assert_eq!(
                count(p, |i| matches!(i, Instr::Jump { call: Some(_), .. })),
                1
            );
        },
    );
    assert_eq!(
        run_both(
            count_down,
            "count",
            vec![Arg::mutable(Value::Int(9_000)), Arg::mutable(Value::Int(0))]
        ),
        "9000"
    );
    assert_eq!(
        run_both(
            count_down,
            "count",
            vec![
                Arg::mutable(Value::Int(50_000)),
                Arg::mutable(Value::Int(0))
            ]
        ),
        "RecursionError: maximum recursion depth exceeded (10000 nested calls)"
    );
}

#[test]
fn closures_capture_values_and_are_called_through_values() {
    let src = "def make(k):\n    def add(x):\n        return x + k\n    return add\n\ndef apply(f, n):\n    return f(n)\n\ndef main(k, n):\n    fs = (make(k), make(k + 1))\n    i = 0\n    t = 0\n    while i < n:\n        t = t + apply(fs[i % 2], i)\n        i = i + 1\n    return t\n";
    assert_eq!(
        run_both(
            src,
            "main",
            vec![Arg::mutable(Value::Int(10)), Arg::mutable(Value::Int(5))]
        ),
        "62"
    );
}

#[test]
fn the_last_read_moves_and_elementwise_ops_reuse_a_unique_buffer() {
    let src = "from anfora import ops\n\ndef f(x):\n    return ops.exp(x)\n\ndef g(x):\n    return ops.exp(x) + x\n";
    let x = || Tensor::from_f32(vec![0.0, 1.0, 2.0, 3.0], &[4]).unwrap();
    // Moved in and never read again: the result is written over the input's buffer.
    let mut s = session(src);
    let input = x();
    let addr = input.as_ptr_addr();
    let v = s
        .call(
            "f",
            vec![Arg::from(Value::Tensor(input))],
            &mut std::io::sink(),
        )
        .unwrap();
    let Value::Tensor(t) = &v else { panic!() };
    assert_eq!(t.as_ptr_addr(), addr, "reused in place");
    assert_eq!(t.to_f64_vec()[1], (1.0f32).exp() as f64);
    // Held elsewhere: never modified.
    let kept = x();
    let v = s
        .call(
            "f",
            vec![Arg::from(Value::Tensor(kept.clone()))],
            &mut std::io::sink(),
        )
        .unwrap();
    let Value::Tensor(t) = &v else { panic!() };
    assert_ne!(t.as_ptr_addr(), kept.as_ptr_addr());
    assert_eq!(
        kept.to_f64_vec(),
        vec![0.0, 1.0, 2.0, 3.0],
        "a shared input is untouched"
    );
    assert!(
        kept.is_unique(),
        "the program keeps no reference after the call"
    );
    // Read twice: the first read copies, the last one may move.
    let v = s
        .call(
            "g",
            vec![Arg::from(Value::Tensor(x()))],
            &mut std::io::sink(),
        )
        .unwrap();
    let Value::Tensor(t) = &v else { panic!() };
    let want: Vec<f64> = [0.0f32, 1.0, 2.0, 3.0]
        .iter()
        .map(|&v| (v.exp() + v) as f64)
        .collect();
    assert_eq!(t.to_f64_vec(), want);
}

#[test]
fn values_die_where_their_last_use_is() {
    let text = lowered(
        "def f(a, b, c):\n    if c:\n        return a\n    return b\n",
        "f",
        &[
            Arg::mutable(Value::Int(1)),
            Arg::mutable(Value::Int(2)),
            Arg::mutable(Value::Bool(true)),
        ],
    );
    // Each branch drops the parameter only the other one reads.
    assert!(text.contains("drop-then[r1]"), "{text}");
    assert!(text.contains("drop-else[r0]"), "{text}");
    assert!(text.contains("return r0!"), "{text}");
    let text = lowered(
        "def f(a, b):\n    return b\n",
        "f",
        &[Arg::mutable(Value::Int(1)), Arg::mutable(Value::Int(2))],
    );
    assert!(
        text.contains("drop r0"),
        "an unused parameter is released on entry: {text}"
    );
}

#[test]
fn elementwise_chains_run_as_one_pass_kernels() {
    let src = "from anfora import ops\n\ndef w5(x):\n    return ops.tanh(x * 1.5 + 0.3) * ops.sigmoid(x) - x / 3\n";
    let x = Tensor::from_f32((0..1000).map(|i| i as f32 / 100.0 - 5.0).collect(), &[1000]).unwrap();
    let args = vec![Arg::from(Value::Tensor(x.clone()))];
    let text = lowered(src, "w5", &args);
    assert!(text.contains("one pass over float32"), "{text}");
    with_program(src, "w5", &args, |p| {
        assert_eq!(p.kernels.len(), 1);
        assert_eq!(count(p, |i| matches!(i, Instr::Fused { .. })), 1);
        assert_eq!(
            count(p, |i| matches!(i, Instr::Prim { .. } | Instr::Bin { .. })),
            0
        );
    });
    // Bitwise the value of the ops one by one (the reference engine).
    assert_eq!(run_both(src, "w5", args.clone()), run_both(src, "w5", args));
    let mut s = session(src);
    let v = s
        .call(
            "w5",
            vec![Arg::from(Value::Tensor(x.clone()))],
            &mut std::io::sink(),
        )
        .unwrap();
    let Value::Tensor(t) = &v else { panic!() };
    for (i, got) in t.to_f64_vec().into_iter().enumerate() {
        let v = x.to_f64_vec()[i] as f32;
        let want = (v * 1.5 + 0.3).tanh() * (1.0 / (1.0 + (-v).exp())) - v / 3.0;
        assert!((got - want as f64).abs() < 1e-5, "{i}: {got} vs {want}");
    }
}

#[test]
fn runtime_errors_in_compiled_code_have_python_tracebacks() {
    let src = "def helper(xs, i):\n    return xs[i]\n\ndef main(n):\n    t = 0\n    i = 0\n    while i < n:\n        t = t + helper((1, 2, 3), i)\n        i = i + 1\n    return t\n";
    let mut s = session(src);
    let e = match s.call(
        "main",
        vec![Arg::mutable(Value::Int(5))],
        &mut std::io::sink(),
    ) {
        Err(Failure::Runtime(e)) => e,
        other => panic!("{:?}", other.map(|v| repr(&v))),
    };
    assert_eq!(e.headline(), "IndexError: tuple index out of range");
    let names: Vec<&str> = e.trace.iter().map(|t| &*t.function).collect();
    assert_eq!(names, ["main", "helper"], "the inlined call still shows");
    let (file, loc) = s.frontend.module.sources.location(e.span).unwrap();
    assert_eq!((file.name.as_str(), loc.line, loc.col), ("prog.py", 2, 12));
    // A comparison fused into a branch reports its own location.
    let src = "def main(a, b):\n    if a < b:\n        return 1\n    return 2\n";
    let mut s = session(src);
    let e = match s.call(
        "main",
        vec![Arg::mutable(Value::str("x")), Arg::mutable(Value::Int(1))],
        &mut std::io::sink(),
    ) {
        Err(Failure::Runtime(e)) => e,
        other => panic!("{:?}", other.map(|v| repr(&v))),
    };
    assert_eq!(
        e.headline(),
        "TypeError: '<' not supported between instances of 'str' and 'int'"
    );
    let (_, loc) = s.frontend.module.sources.location(e.span).unwrap();
    assert_eq!((loc.line, loc.col), (2, 8));
}

#[test]
fn a_program_runs_again_from_a_clean_state() {
    let src = "def main(n):\n    assert n > 0, 'n must be positive'\n    return n * 2\n";
    let mut s = session(src);
    for (n, want) in [
        (3, Ok("6")),
        (-1, Err("AssertionError: n must be positive")),
        (4, Ok("8")),
    ] {
        let r = s.call(
            "main",
            vec![Arg::mutable(Value::Int(n))],
            &mut std::io::sink(),
        );
        match (r, want) {
            (Ok(v), Ok(w)) => assert_eq!(repr(&v), w),
            (Err(Failure::Runtime(e)), Err(w)) => assert_eq!(e.headline(), w),
            (r, w) => panic!(
                "{:?} vs {w:?}",
                r.map(|v| repr(&v)).map_err(|f| s.render(&f))
            ),
        }
    }
    assert!(
        s.last_explanation().is_none(),
        "one compilation serves every call"
    );
}

#[test]
fn keyword_calls_partials_and_methods_go_through_values() {
    let src = "from anfora import ops\n\ndef f(a, b=2, *, c=3):\n    return a * 100 + b * 10 + c\n\ndef pick(k):\n    if k:\n        return f\n    return max\n\ndef main(k, x):\n    g = pick(k)\n    return g(1, c=5) if k else g(1, 7), x.sum(axis=0)\n";
    let x = anfora_session::literal_value("[[1.0, 2.0], [3.0, 4.0]]").unwrap();
    assert_eq!(
        run_both(
            src,
            "main",
            vec![Arg::mutable(Value::Bool(true)), Arg::from(x.clone())]
        ),
        "(125, Tensor([4., 6.], dtype=float32))"
    );
}

#[test]
fn jumps_move_label_parameters_in_parallel() {
    // Each iteration swaps a and b: the moves must read both old values before writing.
    let src = "def main(n):\n    a = 1\n    b = 2\n    for i in range(n):\n        a, b = b, a + b * 0\n    return a, b\n";
    assert_eq!(
        run_both(src, "main", vec![Arg::mutable(Value::Int(3))]),
        "(2, 1)"
    );
    assert_eq!(
        run_both(src, "main", vec![Arg::mutable(Value::Int(4))]),
        "(1, 2)"
    );
}

const DENSE_STEP: &str = "\
import anfora
from anfora import ops, value_and_grad

W = anfora.Parameter(ops.reshape(ops.arange(12, dtype=anfora.float32), (4, 3)) * 0.1 - 0.5, name='W')
b = anfora.Parameter(ops.ones((3,)) * 0.25, name='b')
PARAMS = (W, b)

def loss(x):
    return ops.sum(ops.relu(x @ W + b) ** 2)

def step(x):
    l, grads = value_and_grad(loss, argnums=None, weights=PARAMS)(x)
    for p, g in zip(PARAMS, grads):
        ops.sgd(p, g, 0.1)
    return l, W, b
";

#[test]
fn products_take_their_bias_and_read_transposes_in_place() {
    let x = Value::Tensor(
        Tensor::from_f32((0..8).map(|i| i as f32 * 0.3 - 1.0).collect(), &[2, 4]).unwrap(),
    );
    let text = lowered(DENSE_STEP, "step", &[Arg::from(x.clone())]);
    // The forward product accumulates into the bias; the weight's gradient reads x transposed;
    // x's own gradient (x is not differentiated) is never computed.
    assert!(text.contains(" = Gemm(r0, r"), "{text}");
    assert_eq!(text.matches(" = Gemm(").count(), 2, "{text}");
    assert!(text.contains("True, False)"), "{text}");
    assert!(!text.contains("MatMul"), "{text}");
    // Parameters are named, not printed with their values.
    assert!(text.contains("Load(%para.W, "), "{text}");
    assert!(text.contains("%para.W, %para.b)"), "{text}");
    assert!(!text.contains("Tensor([["), "{text}");
    // Both engines train as numpy computes it by hand.
    let r = run_both(DENSE_STEP, "step", vec![Arg::from(x)]);
    let got: Vec<f64> = r
        .replace("float32", "")
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e'))
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(got.len(), NUMPY_DENSE_STEP.len(), "{r}");
    for (g, want) in got.iter().zip(NUMPY_DENSE_STEP) {
        assert!(
            (g - want).abs() <= 1e-5 * want.abs().max(1.0),
            "{g} vs {want} in {r}"
        );
    }
}

/// The gradient of a layer `relu(x @ w)` with respect to both operands: `d @ wᵀ` and `xᵀ @ d`
/// are independent products, lowered next to each other and marked to run side by side; the
/// results are what the two products give one after the other, bit for bit.
#[test]
fn independent_products_run_side_by_side() {
    let src = "\
from anfora import ops, grad

def loss(x, w):
    return ops.sum(ops.relu(x @ w))

def g(x, w):
    return grad(loss, argnums=(0, 1))(x, w)

def chain(x, w, b):
    return (x @ w + b) @ w + b
";
    let (m, k, n) = (64, 128, 64);
    let values = |len: usize, scale: f32| {
        (0..len)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) * scale)
            .collect::<Vec<_>>()
    };
    let x = Tensor::from_f32(values(m * k, 0.01), &[m, k]).unwrap();
    let w = Tensor::from_f32(values(k * n, 0.003), &[k, n]).unwrap();
    let args = vec![
        Arg::from(Value::Tensor(x.clone())),
        Arg::from(Value::Tensor(w.clone())),
    ];
    let text = lowered(src, "g", &args);
    assert_eq!(text.matches(" = Gemm(").count(), 2, "{text}");
    assert_eq!(text.matches("‖ with the next").count(), 1, "{text}");
    // A product of a product waits for it.
    let square = Tensor::from_f32(values(k * k, 0.003), &[k, k]).unwrap();
    let chain = lowered(
        src,
        "chain",
        &[
            Arg::from(Value::Tensor(x.clone())),
            Arg::from(Value::Tensor(square)),
            Arg::from(Value::Tensor(
                Tensor::from_f32(values(k, 0.1), &[k]).unwrap(),
            )),
        ],
    );
    assert_eq!(chain.matches(" = Gemm(").count(), 2, "{chain}");
    assert!(!chain.contains("‖"), "{chain}");
    let mut s = session(src);
    let r = s.call("g", args, &mut std::io::sink()).unwrap();
    let Value::Tuple(grads) = &r else {
        panic!("{}", repr(&r))
    };
    let [Value::Tensor(dx), Value::Tensor(dw)] = &grads[..] else {
        panic!("{}", repr(&r))
    };
    // d = relu'(x @ w) as 0.0 / 1.0, then the two products.
    let y = Tensor::gemm(&x, &w, None, false, false).unwrap();
    let d = Tensor::from_f32(
        y.to_f64_vec()
            .iter()
            .map(|&v| if v > 0.0 { 1.0 } else { 0.0 })
            .collect(),
        &[m, n],
    )
    .unwrap();
    assert!(dx.same_as(&Tensor::gemm(&d, &w, None, false, true).unwrap()));
    assert!(dw.same_as(&Tensor::gemm(&x, &d, None, true, false).unwrap()));
}

/// The loss, W and b after the step, from numpy (float32, gradients written by hand).
const NUMPY_DENSE_STEP: [f64; 16] = [
    3.3430002,
    -0.36080003,
    -0.3152,
    -0.2696,
    -0.1436,
    -0.10039999,
    -0.0572,
    0.07360001,
    0.11439999,
    0.1552,
    0.29080003,
    0.3292,
    0.36760002,
    -0.02599999,
    -0.03400001,
    -0.04200003,
];

const PRODUCT_GRADIENT_STEP: &str = "\
import anfora
from anfora import ops, value_and_grad

W = anfora.Parameter(ops.reshape(ops.arange(15360, dtype=DTYPE), (96, 160)) * 0.0001 - 0.7, name='W')

def loss(x, c):
    return ops.sum((x @ W) * c)

def step(x, c):
    l, g = value_and_grad(loss, argnums=None, weights=(W,))(x, c)
    ops.sgd(W, g[0], 0.01)
    return W
";

/// A weight gradient that is a product used only by the SGD update right after it (here
/// `xᵀ @ c`) runs into the update, computed by parts without the gradient as a tensor: the
/// Parameter after each step has the bits the reference engine gives, in both float dtypes.
/// A product too small for that kernel runs as written (the dense step above).
#[test]
fn a_product_whose_only_use_is_an_update_runs_into_it() {
    for (dtype, name) in [
        (anfora_tensor::DType::F32, "float32"),
        (anfora_tensor::DType::F64, "float64"),
    ] {
        let src = PRODUCT_GRADIENT_STEP.replace("DTYPE", &format!("anfora.{name}"));
        let values = |len: usize, scale: f64| {
            let v: Vec<f64> = (0..len)
                .map(|i| ((i * 37 % 101) as f64 - 50.0) * scale)
                .collect();
            Tensor::from_f64(v, &[len]).unwrap().cast(dtype)
        };
        let x = values(128 * 96, 0.01).reshape(&[128, 96]).unwrap();
        let c = values(128 * 160, 0.003).reshape(&[128, 160]).unwrap();
        let args = vec![
            Arg::from(Value::Tensor(x.clone())),
            Arg::from(Value::Tensor(c.clone())),
        ];
        let text = lowered(&src, "step", &args);
        assert_eq!(text.matches("  → into the next").count(), 1, "{text}");
        let mut weights = Vec::new();
        for engine in [Engine::Compiled, Engine::Reference] {
            let mut s = session(&src);
            s.engine = engine;
            let mut last = None;
            for _ in 0..3 {
                let r = s.call("step", args.clone(), &mut std::io::sink()).unwrap();
                let Value::Ref(w) = &r else {
                    panic!("{}", repr(&r))
                };
                last = Some(w.get());
            }
            weights.push(last.unwrap());
        }
        assert!(weights[0].same_as(&weights[1]), "{name}");
        assert_eq!(weights[0].dtype(), dtype);
    }
}

const DENSE_RELU: &str = "\
import anfora
from anfora import ops

W = anfora.Parameter(ops.reshape(ops.arange(64 * 48, dtype=DTYPE), (64, 48)) * 0.001 - 1.5, name='W')
b = anfora.Parameter(ops.reshape(ops.arange(48, dtype=DTYPE), (48,)) * 0.01 - 0.2, name='b')

def layer(x):
    return ops.relu(x @ W + b)

def kept(x):
    h = x @ W + b
    return ops.relu(h) + h
";

/// A ReLU whose only operand is the product right before it runs inside the product's
/// kernel: the result has the bits the reference engine gives (which runs the two ops one
/// after the other), in float32 (the dense kernel applies it) and float64 (applied after
/// gemm). A product that is also used elsewhere is not fused.
#[test]
fn a_relu_of_a_product_runs_inside_the_product() {
    for name in ["float32", "float64"] {
        let src = DENSE_RELU.replace("DTYPE", &format!("anfora.{name}"));
        let dtype = if name == "float32" {
            anfora_tensor::DType::F32
        } else {
            anfora_tensor::DType::F64
        };
        let v: Vec<f64> = (0..90 * 64)
            .map(|i| ((i * 37 % 101) as f64 - 50.0) * 0.01)
            .collect();
        let x = Tensor::from_f64(v, &[90, 64]).unwrap().cast(dtype);
        let args = vec![Arg::from(Value::Tensor(x))];
        let text = lowered(&src, "layer", &args);
        assert_eq!(text.matches("  → into the next").count(), 1, "{text}");
        let text = lowered(&src, "kept", &args);
        assert_eq!(text.matches("  → into the next").count(), 0, "{text}");
        for entry in ["layer", "kept"] {
            let mut results = Vec::new();
            for engine in [Engine::Compiled, Engine::Reference] {
                let mut s = session(&src);
                s.engine = engine;
                let r = s.call(entry, args.clone(), &mut std::io::sink()).unwrap();
                let Value::Tensor(t) = &r else {
                    panic!("{}", repr(&r))
                };
                results.push(t.clone());
            }
            assert!(results[0].same_as(&results[1]), "{name} {entry}");
            // Both signs before ReLU: `kept` (`relu(h) + h`) has them, `layer` many zeros.
            let v = results[0].to_f64_vec();
            let zeros = v.iter().filter(|&&v| v == 0.0).count();
            let negative = v.iter().filter(|&&v| v < 0.0).count();
            let mixed = if entry == "layer" { zeros } else { negative };
            assert!(
                mixed > 100 && mixed < 90 * 48 - 100,
                "{entry}: {zeros} zeros"
            );
        }
    }
}
