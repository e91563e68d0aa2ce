//! Specialization: which graphs inference keeps, clones and folds.

mod common;

use anfora_ir::{GraphKind, Prim};
use anfora_ops::Value;
use anfora_session::{Arg, repr};
use common::*;

const BRANCHES: &str =
    "def f(x, c):\n    if c:\n        y = x + 1.0\n    else:\n        y = x * 2.0\n    return y\n";

#[test]
fn an_if_on_a_constant_keeps_only_the_branch_taken() {
    let i = infer(BRANCHES, "f", &[zeros(&[2]), boolean(true)]);
    assert!(i.prim_calls(Prim::Switch).is_empty(), "{}", i.ir());
    assert_eq!(i.graphs_of_kind(GraphKind::TrueBranch).len(), 1);
    assert!(i.graphs_of_kind(GraphKind::FalseBranch).is_empty());
    assert!(i.prim_calls(Prim::Mul).is_empty());
    assert_eq!(i.prim_calls(Prim::Add).len(), 1);
    // The driver's infer-stage dump (what `anfora dump --stage infer` prints).
    let ir = infer_stage_ir(BRANCHES, "f", &[zeros(&[2]), boolean(false)]);
    assert!(!ir.contains("Switch("), "{ir}");
    assert!(!ir.contains("@✓f"), "{ir}");
    assert!(ir.contains("@✗f"), "{ir}");
    assert!(ir.contains("Mul("), "{ir}");
    // A condition computed from constants, or from a tensor's shape, is a constant too.
    let src = "def f(x, n):\n    if n * 2 > 5 and x.shape[0] == 3:\n        return x.sum()\n    return x[0]\n";
    let i = infer(src, "f", &[zeros(&[3]), int(3)]);
    assert!(i.prim_calls(Prim::Switch).is_empty(), "{}", i.ir());
    assert_eq!(i.result().to_string(), "<Tensor[Float32], ()>");
    let i = infer(src, "f", &[zeros(&[4]), int(3)]);
    assert!(i.prim_calls(Prim::Switch).is_empty(), "{}", i.ir());
    assert_eq!(i.result().to_string(), "<Tensor[Float32], ()>");
    // Both run as Python does.
    assert_eq!(
        repr(&run(BRANCHES, "f", vec![zeros(&[2]), boolean(false)])),
        "Tensor([0., 0.], dtype=float32)"
    );
    assert_eq!(
        repr(&run(BRANCHES, "f", vec![zeros(&[2]), boolean(true)])),
        "Tensor([1., 1.], dtype=float32)"
    );
}

#[test]
fn a_data_dependent_if_stays_control_flow() {
    let i = infer(BRANCHES, "f", &[zeros(&[2]), mbool(true)]);
    assert_eq!(i.prim_calls(Prim::Switch).len(), 1, "{}", i.ir());
    assert_eq!(i.graphs_of_kind(GraphKind::TrueBranch).len(), 1);
    assert_eq!(i.graphs_of_kind(GraphKind::FalseBranch).len(), 1);
    assert_eq!(i.graphs_of_kind(GraphKind::Join).len(), 1);
    assert_eq!(i.result().to_string(), "<Tensor[Float32], (2,)>");
    // A condition on a tensor's value.
    let src = "def f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n";
    let i = infer(src, "f", &[zeros(&[2])]);
    assert_eq!(i.prim_calls(Prim::Switch).len(), 1, "{}", i.ir());
    assert_eq!(
        repr(&run(BRANCHES, "f", vec![zeros(&[2]), mbool(false)])),
        "Tensor([0., 0.], dtype=float32)"
    );
}

#[test]
fn a_data_dependent_while_stays_a_loop() {
    let src = "def f(x, n):\n    i = 0\n    while i < n:\n        x = x * 2.0\n        i = i + 1\n    return x\n";
    let i = infer(src, "f", &[zeros(&[3]), mint(4)]);
    assert_eq!(
        i.graphs_of_kind(GraphKind::LoopHeader).len(),
        1,
        "{}",
        i.ir()
    );
    assert_eq!(i.graphs_of_kind(GraphKind::LoopBody).len(), 1);
    assert_eq!(i.prim_calls(Prim::Switch).len(), 1);
    assert_eq!(i.result().to_string(), "<Tensor[Float32], (3,)>");
}

#[test]
fn loops_with_a_constant_trip_count_are_not_unrolled() {
    // Loop-carried values are broadened: the counter is an int, not 0, 1, 2, ... so one
    // specialization of the header and body serves every iteration.
    for src in [
        "def f(x):\n    for i in range(100):\n        x = x + 1.0\n    return x\n",
        "def f(x):\n    i = 0\n    while i < 100:\n        x = x * 2.0\n        i = i + 1\n    return x\n",
        "def f(x):\n    for i in range(10):\n        for j in range(i):\n            x = x + j\n    return x\n",
        "def g(x, k):\n    return x * k\n\ndef f(x):\n    for i in range(50):\n        x = g(x, i)\n    return x\n",
        "def f(x):\n    t = (1, 2, 3)\n    s = 0\n    for v in t:\n        s = s + v\n    return x * s\n",
    ] {
        let i = infer(src, "f", &[zeros(&[2])]);
        let headers = i.graphs_of_kind(GraphKind::LoopHeader).len();
        let bodies = i.graphs_of_kind(GraphKind::LoopBody).len();
        let loops = src.matches("for ").count() + src.matches("while ").count();
        assert_eq!((headers, bodies), (loops, loops), "{src}\n{}", i.ir());
        assert!(
            i.graphs().len() <= 4 * loops + 3,
            "{src}: {} graphs\n{}",
            i.graphs().len(),
            i.ir()
        );
        assert_eq!(i.result().to_string(), "<Tensor[Float32], (2,)>", "{src}");
        // Functions called in the loop are specialized once.
        assert!(i.functions_named("g").len() <= 1, "{}", i.ir());
    }
    let src = "def f(x):\n    for i in range(100):\n        x = x + 1.0\n    return x\n";
    assert_eq!(
        repr(&run(src, "f", vec![zeros(&[2])])),
        "Tensor([100., 100.], dtype=float32)"
    );
}

#[test]
fn a_loop_over_a_tuple_of_different_types_is_unrolled() {
    // Items of different shapes (or dtypes, or kinds) would join into unknown sizes; each
    // iteration gets its own specialization instead, so every value keeps its type.
    let src = "import anfora\nfrom anfora import ops\n\ndef f(x):\n    items = (x, ops.ones((2, 3)), 2.5)\n    out = ()\n    for v, w in zip(items, (1.0, 2.0, 3.0)):\n        y = v * w\n        out = out + (y,)\n    return out\n";
    let i = infer(src, "f", &[zeros(&[4])]);
    assert_eq!(
        i.result().to_string(),
        "<Tuple[<Tensor[Float32], (4,)>, <Tensor[Float32], (2, 3), value=[[2. 2. 2.] [2. 2. 2.]]>, <Float64, 7.5>]>",
        "{}",
        i.ir()
    );
    assert!(i.prim_calls(Prim::Switch).is_empty(), "{}", i.ir());
    assert_eq!(
        repr(&run(src, "f", vec![zeros(&[4])])),
        "(Tensor([0., 0., 0., 0.], dtype=float32), Tensor([[2., 2., 2.],\n        [2., 2., 2.]], dtype=float32), 7.5)"
    );
    // Parameters of different shapes, read and written in the loop (an optimizer's update).
    let src = "import anfora\nfrom anfora import ops\n\nw = anfora.Parameter(ops.ones((2, 2)), name='w')\nb = anfora.Parameter(ops.ones((2,)), name='b')\n\ndef f(gs):\n    for p, g in zip((w, b), gs):\n        ops.assign(p, p * 0.5 + g)\n    return w, b\n";
    let gs = Arg::from(Value::tuple(vec![
        tensor_value("[[1.0, 2.0], [3.0, 4.0]]"),
        tensor_value("[1.0, 1.0]"),
    ]));
    assert_eq!(
        repr(&run(src, "f", vec![gs])),
        "(Tensor([[1.5, 2.5],\n        [3.5, 4.5]], dtype=float32), Tensor([1.5, 1.5], dtype=float32))"
    );
}

#[test]
fn recursion_reaches_a_fixpoint() {
    let fib = "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n";
    // Called with a value known only at run time: one specialization.
    let i = infer(fib, "fib", &[mint(10)]);
    assert_eq!(i.functions_named("fib").len(), 1, "{}", i.ir());
    assert_eq!(i.result().to_string(), "<Int64>");
    assert_eq!(repr(&run(fib, "fib", vec![mint(10)])), "55");
    // With a constant: the entry is specialized for it, the recursive calls for any int.
    let i = infer(fib, "fib", &[int(10)]);
    assert_eq!(i.functions_named("fib").len(), 2, "{}", i.ir());
    assert_eq!(i.result().to_string(), "<Int64>");
    assert_eq!(repr(&run(fib, "fib", vec![int(10)])), "55");
    // Mutual recursion.
    let src = "def even(n):\n    if n == 0:\n        return True\n    return odd(n - 1)\n\ndef odd(n):\n    if n == 0:\n        return False\n    return even(n - 1)\n";
    let i = infer(src, "even", &[mint(7)]);
    assert_eq!(i.functions_named("even").len(), 1, "{}", i.ir());
    assert_eq!(i.functions_named("odd").len(), 1, "{}", i.ir());
    assert_eq!(i.result().to_string(), "<Bool>");
    assert_eq!(repr(&run(src, "even", vec![mint(7)])), "False");
    let i = infer(src, "even", &[int(6)]);
    assert!(i.functions_named("even").len() <= 2, "{}", i.ir());
    assert!(i.functions_named("odd").len() <= 2, "{}", i.ir());
    assert_eq!(repr(&run(src, "even", vec![int(6)])), "True");
    // Recursion over tensors whose result has the argument's type.
    let src = "def power(x, n):\n    if n == 0:\n        return x * 0.0 + 1.0\n    return x * power(x, n - 1)\n";
    let i = infer(src, "power", &[zeros(&[2, 2]), mint(3)]);
    assert_eq!(i.functions_named("power").len(), 1, "{}", i.ir());
    assert_eq!(i.result().to_string(), "<Tensor[Float32], (2, 2)>");
}

#[test]
fn the_same_signature_is_specialized_once() {
    let src = "def g(x):\n    return x * 2.0\n\ndef f(a, b):\n    return g(a) + g(b) + g(a)\n";
    let i = infer(src, "f", &[zeros(&[2, 3]), zeros(&[2, 3])]);
    assert_eq!(i.functions_named("g").len(), 1, "{}", i.ir());
    // Different shapes, different specializations.
    let i = infer(src, "f", &[zeros(&[2, 3]), zeros(&[3])]);
    assert_eq!(i.functions_named("g").len(), 2, "{}", i.ir());
    assert_eq!(i.result().to_string(), "<Tensor[Float32], (2, 3)>");
    // Python numbers are part of the signature: each constant is its own specialization,
    // and folds.
    let src = "def g(k):\n    return k * 2\n\ndef f():\n    return g(1), g(2), g(1)\n";
    let i = infer(src, "f", &[]);
    assert_eq!(i.functions_named("g").len(), 2, "{}", i.ir());
    assert_eq!(
        i.result().to_string(),
        "<Tuple[<Int64, 2>, <Int64, 4>, <Int64, 2>]>"
    );
}

#[test]
fn specializations_per_function_are_bounded() {
    // Past 8 signatures, a function gets one more specialization for every other call.
    // (`a` is known only at run time, so the calls cannot fold away.)
    let calls: Vec<String> = (1..=12).map(|k| format!("g(a, {k})")).collect();
    let src = format!(
        "def g(a, k):\n    return a * k\n\ndef f(a):\n    return {}\n",
        calls.join(" + ")
    );
    let i = infer(&src, "f", &[mint(2)]);
    assert_eq!(i.functions_named("g").len(), 9, "{}", i.ir());
    assert_eq!(repr(&run(&src, "f", vec![mint(2)])), "156");
    // Specializations are named in the order of their calls, the same way every time.
    let ir = i.ir();
    for (k, name) in [
        "@g(", "@g_1(", "@g_7(", "@g_8(", "@g_8(", "@g_8(", "@g_8(", "@g_8(",
    ]
    .iter()
    .zip([1, 2, 8, 9, 10, 11, 12, 9])
    .map(|(n, k)| (k, n))
    {
        let call = format!("call {name}%para1_a, I64({k}))");
        assert!(ir.contains(&call), "no `{call}` in\n{ir}");
    }
    for _ in 0..3 {
        assert_eq!(infer(&src, "f", &[mint(2)]).ir(), ir);
    }
    // Tensors of many shapes: the extra calls share a specialization with unknown sizes.
    let calls: Vec<String> = (1..=10).map(|k| format!("g(ops.zeros({k}))")).collect();
    let src = format!(
        "from anfora import ops\n\ndef g(x):\n    return x.sum()\n\ndef h(x):\n    return x + 1.0\n\ndef f():\n    return {}, h(ops.zeros(9)), h(ops.zeros(10))\n",
        calls.join(" + ")
    );
    let i = infer(&src, "f", &[]);
    assert_eq!(i.functions_named("g").len(), 9, "{}", i.ir());
    let shapes: Vec<String> = i
        .functions_named("g")
        .iter()
        .map(|&g| i.abs(i.module().graph(g).params[0]).to_string())
        .collect();
    assert!(
        shapes.contains(&"<Tensor[Float32], (-1,)>".to_string()),
        "{shapes:?}"
    );
    // (Small tensors built from constants are constants: `value=[...]`.)
    assert!(
        shapes
            .iter()
            .any(|s| s.starts_with("<Tensor[Float32], (8,)")),
        "{shapes:?}"
    );
}

#[test]
fn constants_fold() {
    let src = "def f():\n    a = 2\n    b = a * 3 + 1\n    c = b // 2 - a ** 3\n    s = 'x' + str(b)\n    return b, c, s, len((1, 2, 3)), 7 / 2, a < b\n";
    let i = infer(src, "f", &[]);
    assert_eq!(
        i.result().to_string(),
        "<Tuple[<Int64, 7>, <Int64, -5>, <String, 'x7'>, <Int64, 3>, <Float64, 3.5>, <Bool, True>]>"
    );
    for p in [
        Prim::Add,
        Prim::Mul,
        Prim::FloorDiv,
        Prim::Pow,
        Prim::Sub,
        Prim::Len,
        Prim::Lt,
    ] {
        assert!(i.prim_calls(p).is_empty(), "{p:?} is left:\n{}", i.ir());
    }
    // Shapes are constants too, and a small tensor built from constants is one.
    let src = "from anfora import ops\n\ndef f(x):\n    n = x.shape[0] * 2\n    return ops.zeros((n, x.ndim)), x.size\n";
    let i = infer(src, "f", &[zeros(&[4, 3])]);
    assert_eq!(
        i.result().to_string(),
        "<Tuple[<Tensor[Float32], (8, 2), value=[[0. 0.] [0. 0.] [0. 0.] [0. 0.] [0. 0.] [0. 0.] [0. 0.] [0. 0.]]>, <Int64, 12>]>"
    );
    // An operation that would raise is left for run time, where Python raises it.
    let src = "def f():\n    return 1 // 0\n";
    let i = infer(src, "f", &[]);
    assert_eq!(i.result(), anfora_ops::Abs::Bottom);
    assert_eq!(i.prim_calls(Prim::FloorDiv).len(), 1);
    // Arithmetic on values known only at run time is not folded.
    let src = "def f(a):\n    return a * 3 + 1\n";
    let i = infer(src, "f", &[mint(2)]);
    assert_eq!(i.result().to_string(), "<Int64>");
    assert_eq!(i.prim_calls(Prim::Mul).len(), 1);
}

#[test]
fn tensor_shapes_propagate_through_operations() {
    let src = "from anfora import ops\n\ndef f(x, w, b):\n    h = ops.relu(x @ w + b)\n    s = h.sum(axis=1, keepdims=True)\n    t = h.T\n    r = h.reshape((-1,))\n    m = ops.mean(h, 0)\n    c = ops.cast(h, anfora.int32)\n    z = ops.where(h > 0, h, 0.5)\n    return s, t, r, m, c, z, h[1:, None, 0], h.shape, h.dtype\n";
    let src = format!("import anfora\n{src}");
    let b = anfora_session::Arg::from(Value::Tensor(
        anfora_tensor::Tensor::zeros(&[5], anfora_tensor::DType::F64).unwrap(),
    ));
    let i = infer(&src, "f", &[zeros(&[4, 3]), zeros(&[3, 5]), b]);
    assert_eq!(i.var("h").to_string(), "<Tensor[Float64], (4, 5)>");
    assert_eq!(i.var("s").to_string(), "<Tensor[Float64], (4, 1)>");
    assert_eq!(i.var("t").to_string(), "<Tensor[Float64], (5, 4)>");
    assert_eq!(i.var("r").to_string(), "<Tensor[Float64], (20,)>");
    assert_eq!(i.var("m").to_string(), "<Tensor[Float64], (5,)>");
    assert_eq!(i.var("c").to_string(), "<Tensor[Int32], (4, 5)>");
    assert_eq!(i.var("z").to_string(), "<Tensor[Float64], (4, 5)>");
    assert_eq!(
        i.result().to_string(),
        "<Tuple[<Tensor[Float64], (4, 1)>, <Tensor[Float64], (5, 4)>, <Tensor[Float64], (20,)>, <Tensor[Float64], (5,)>, <Tensor[Int32], (4, 5)>, <Tensor[Float64], (4, 5)>, <Tensor[Float64], (3, 1)>, <Tuple[<Int64, 4>, <Int64, 5>]>, <DType, float64>]>"
    );
    // Every node of the specialized program has an abstract.
    for n in i.applies() {
        assert!(i.spec.abstracts.contains_key(&n), "{n:?}");
    }
}

#[test]
fn sizes_known_only_at_run_time_are_dynamic() {
    // A size computed from a value known only at run time.
    let src = "from anfora import ops\n\ndef f(x, k):\n    y = x.reshape((k, 4))\n    z = ops.arange(k)\n    return y, z, y.shape[1], y.shape[0]\n";
    let i = infer(src, "f", &[zeros(&[2, 6]), mint(3)]);
    assert_eq!(
        i.result().to_string(),
        "<Tuple[<Tensor[Float32], (-1, 4)>, <Tensor[Int64], (-1,)>, <Int64, 4>, <Int64>]>"
    );
    // A loop that changes a tensor's size from one iteration to the next.
    let src = "def f(x, n):\n    for i in range(n):\n        x = x[1:] * 2.0\n    return x\n";
    let i = infer(src, "f", &[zeros(&[5, 3]), mint(2)]);
    assert_eq!(i.result().to_string(), "<Tensor[Float32], (-1, 3)>");
    assert_eq!(
        repr(&run(src, "f", vec![zeros(&[5, 3]), mint(4)])),
        "Tensor([[0., 0., 0.]], dtype=float32)"
    );
    // Even with a constant trip count (the loop is not unrolled).
    let i = infer(src, "f", &[zeros(&[5, 3]), int(2)]);
    assert_eq!(i.result().to_string(), "<Tensor[Float32], (-1, 3)>");
    // Recursion over a shrinking tensor.
    let src = "def r(x, n):\n    if n == 0:\n        return x\n    return r(x[1:], n - 1)\n";
    let i = infer(src, "r", &[zeros(&[5, 3]), mint(2)]);
    assert_eq!(i.result().to_string(), "<Tensor[Float32], (-1, 3)>");
    assert_eq!(
        repr(&run(src, "r", vec![zeros(&[5, 3]), mint(4)])),
        "Tensor([[0., 0., 0.]], dtype=float32)"
    );
    // An `if` whose branches give a known and an unknown size joins to the unknown one.
    let src = "def f(x, k, c):\n    if c:\n        y = x.reshape((k, 3))\n    else:\n        y = x.reshape((2, 3))\n    return y\n";
    let i = infer(src, "f", &[zeros(&[6]), mint(2), mbool(true)]);
    assert_eq!(i.result().to_string(), "<Tensor[Float32], (-1, 3)>");
}

#[test]
fn closures_and_function_values() {
    // A closure called with two signatures, and one passed as a value.
    let src = "def apply(f, v):\n    return f(v)\n\ndef main(x):\n    def scale(y):\n        return y * x\n    return scale(2), scale(x), apply(scale, 3), apply(lambda t: t + 1, x)\n";
    let i = infer(src, "main", &[zeros(&[2])]);
    assert_eq!(
        i.result().to_string(),
        "<Tuple[<Tensor[Float32], (2,)>, <Tensor[Float32], (2,)>, <Tensor[Float32], (2,)>, <Tensor[Float32], (2,)>]>"
    );
    assert_eq!(
        repr(&run(src, "main", vec![zeros(&[2])])),
        "(Tensor([0., 0.], dtype=float32), Tensor([0., 0.], dtype=float32), Tensor([0., 0.], dtype=float32), Tensor([1., 1.], dtype=float32))"
    );
}

#[test]
fn a_block_reads_the_final_values_of_the_function_around_it() {
    // The blocks after the loop read `a`, `b` and `c` from `main` as free variables, two
    // levels of blocks down. The calls' results change from round to round; each block that
    // read one is evaluated again when it changes (before, the block kept the first round's
    // value, and the result claimed three constants `True`).
    let src = "def has(t, target):\n    found = False\n    for i in range(len(t)):\n        if t[i] == target:\n            found = True\n            break\n    return found\n\ndef main():\n    a = has((1, 4), 4)\n    b = has((1, 4), 5)\n    c = has((), 0)\n    n = 2\n    while n < 100:\n        if n * n > 200:\n            break\n        n += 1\n    if n < 100:\n        print(n)\n    return (a, b, c, n)\n";
    let i = infer(src, "main", &[]);
    assert_eq!(
        i.result().to_string(),
        "<Tuple[<Bool>, <Bool>, <Bool>, <Int64>]>",
        "{}",
        i.ir()
    );
    assert_eq!(repr(&run(src, "main", vec![])), "(True, False, False, 15)");
}

/// A function called with two shapes whose `if` reassigns a parameter: each specialization
/// has its own join block. The join (which has no free variables) was one for both, and its
/// phi mixed the two shapes: a spurious E0302, or an operation after it typed with the other
/// call's shape (MindSpore's LeNet-5 pooling twice through one Cell failed to compile).
#[test]
fn a_join_block_belongs_to_its_functions_specialization() {
    let src = "from anfora import ops\n\nFLAG = False\n\ndef pool(x):\n    if FLAG:\n        x = x * 2.0\n    return ops.sum(x, axis=0)\n\ndef two(x, y):\n    a = pool(x)\n    b = pool(y)\n    return ops.reshape(a, (-1,)).shape, b.shape\n";
    let r = run(src, "two", vec![zeros(&[2, 3]), zeros(&[4, 5])]);
    assert_eq!(repr(&r), "((3,), (5,))");
    // A branch without free variables in each specialization, joining with one that has.
    let src = "from anfora import ops\n\ndef f(x, c):\n    if c:\n        y = ops.zeros((2, 2))\n    else:\n        y = x\n    return y.shape\n\ndef g(x, z):\n    return f(x, False), f(z, False), f(x, True)\n";
    let r = run(src, "g", vec![zeros(&[2, 2]), zeros(&[3, 3])]);
    assert!(repr(&r).contains("(3, 3)"), "{}", repr(&r));
    // Loops: a function with a `while` and one with a `for`, each called with tensors of two
    // dtypes and ranks (the loop headers were shared: a spurious "changes between loop
    // iterations").
    let src = "from anfora import ops\n\ndef f(x):\n    i = 0\n    while i < 3:\n        x = x * 2.0\n        i += 1\n    return x\n\ndef g(x, n):\n    for k in range(n):\n        x = x + 1.0\n    return x\n\ndef main(a):\n    b = ops.ones((4,), dtype='float64')\n    return f(a).shape, f(b).shape, ops.sum(g(a, 2)), ops.sum(g(b, 3)), ops.sum(f(b)), f(b).dtype\n";
    let r = repr(&run(src, "main", vec![zeros(&[2, 3])]));
    assert!(
        r.starts_with("((2, 3), (4,), Tensor(12., dtype=float32), Tensor(16.), Tensor(32.)"),
        "{r}"
    );
}
