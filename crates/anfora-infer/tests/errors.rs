//! Inference errors: every kind with its exact code, message, `file:line:col` and rendered
//! report; the chain of calls as notes; several errors reported at once.

mod common;

use anfora_session::Arg;
use common::*;

/// The single diagnostic inference gives: (code, message, line, col) and the rendered text.
fn one(src: &str, entry: &str, args: &[Arg]) -> ((&'static str, String, u32, u32), String) {
    let (s, ds) = errors(src, entry, args);
    single(&s, &ds)
}

/// `(source, args, (code, message, line, col))`: a program whose inference gives one error.
type Case<'a> = (&'a str, Vec<Arg>, (&'a str, &'a str, u32, u32));

/// Checks a table of single-error programs.
fn expect(entry: &str, cases: Vec<Case>) {
    let mut bad = Vec::new();
    for (src, args, want) in &cases {
        compare_diagnostic(&mut bad, src, *want, one(src, entry, args).0);
    }
    assert_no_differences(&bad);
}

const HINT: &str =
    "help: tensor shapes and dtypes are checked when compiling, before the program runs";

// ---- E0301: tensor operations whose shapes or dtypes do not fit ---------------------------

#[test]
fn matmul_shapes_that_do_not_align() {
    let src =
        "from anfora import ops\n\ndef f(a, b):\n    y = a * 2.0\n    return ops.matmul(y, b)\n";
    let ((code, msg, line, col), text) = one(src, "f", &[zeros(&[3, 4]), zeros(&[5, 6])]);
    assert_eq!(code, "E0301");
    assert_eq!(
        msg,
        "matmul: shapes (3, 4) and (5, 6) do not align (4 != 5)"
    );
    assert_eq!((line, col), (5, 12));
    assert_eq!(
        text,
        "  × error[E0301]: matmul: shapes (3, 4) and (5, 6) do not align (4 != 5)
   ╭─[model.py:5:12]
 4 │     y = a * 2.0
 5 │     return ops.matmul(y, b)
   ·            ────────┬───────
   ·                    ╰── here
   ╰────
  help: tensor shapes and dtypes are checked when compiling, before the program runs

error: could not compile: 1 error
"
    );
}

#[test]
fn matmul_variants() {
    let src1 = "def f(a, b):\n    return a @ b\n";
    let src2 = "from anfora import ops\n\ndef f(a, b):\n    return ops.matmul(a, b)\n";
    expect(
        "f",
        vec![
            (
                src1,
                vec![zeros(&[3, 4]), zeros(&[5, 6])],
                (
                    "E0301",
                    "matmul: shapes (3, 4) and (5, 6) do not align (4 != 5)",
                    2,
                    12,
                ),
            ),
            // A vector on the right aligns with the last dimension of the left.
            (
                src1,
                vec![zeros(&[2, 3]), zeros(&[4])],
                (
                    "E0301",
                    "matmul: shapes (2, 3) and (4,) do not align (3 != 4)",
                    2,
                    12,
                ),
            ),
            (
                src2,
                vec![zeros(&[]), zeros(&[4])],
                (
                    "E0301",
                    "matmul: Input operand does not have enough dimensions (a scalar is not allowed)",
                    4,
                    12,
                ),
            ),
            // Batch dimensions broadcast.
            (
                src1,
                vec![zeros(&[2, 3, 4]), zeros(&[5, 4, 2])],
                (
                    "E0301",
                    "matmul: operands could not be broadcast together with shapes (2,) (5,)",
                    2,
                    12,
                ),
            ),
        ],
    );
}

#[test]
fn broadcasting_mismatch() {
    let src = "def f(x, y):\n    z = x + 1.0\n    return z * y\n";
    let ((code, msg, line, col), text) = one(src, "f", &[zeros(&[2, 3]), zeros(&[4])]);
    assert_eq!(code, "E0301");
    assert_eq!(
        msg,
        "mul: operands could not be broadcast together with shapes (2,3) (4,)"
    );
    assert_eq!((line, col), (3, 12));
    assert!(text.contains("   ╭─[model.py:3:12]\n"), "{text}");
    assert!(text.contains(" 3 │     return z * y\n"), "{text}");
    assert!(text.contains(HINT), "{text}");
    let src = "from anfora import ops\n\ndef f(x, y, c):\n    a = x - y\n    b = x < y\n    d = ops.maximum(x, y)\n    e = ops.where(c, x, y)\n    return a, b, d, e\n";
    let (s, ds) = errors(src, "f", &[zeros(&[2, 3]), zeros(&[3, 2]), zeros(&[2, 3])]);
    assert_eq!(
        summary(&s, &ds),
        vec![
            (
                "E0301",
                "sub: operands could not be broadcast together with shapes (2,3) (3,2)".to_string(),
                4,
                9
            ),
            (
                "E0301",
                "less: operands could not be broadcast together with shapes (2,3) (3,2)"
                    .to_string(),
                5,
                9
            ),
            (
                "E0301",
                "maximum: operands could not be broadcast together with shapes (2,3) (3,2)"
                    .to_string(),
                6,
                9
            ),
            (
                "E0301",
                "where: operands could not be broadcast together with shapes (2,3) (2,3) (3,2)"
                    .to_string(),
                7,
                9
            ),
        ]
    );
    // clip names its three operands' shapes as well (a number is `()`), as numpy does.
    let src = "from anfora import ops\n\ndef f(x, hi):\n    return ops.clip(x, 0, hi)\n";
    let ((code, msg, line, col), _) = one(src, "f", &[zeros(&[2, 3]), zeros(&[4])]);
    assert_eq!(
        (code, msg.as_str(), line, col),
        (
            "E0301",
            "clip: operands could not be broadcast together with shapes (2,3) () (4,)",
            4,
            12
        )
    );
}

#[test]
fn broadcasting_with_unknown_dimensions() {
    // `x` is (?, 5): its first size depends on `k`, known only at run time. The size that is
    // known still has to fit.
    let src = "def f(x, k, y):\n    x = x.reshape((k, 5))\n    return x + y\n";
    let ((code, msg, line, col), _) = one(src, "f", &[zeros(&[10]), mint(2), zeros(&[4])]);
    assert_eq!(
        (code, msg.as_str(), line, col),
        (
            "E0301",
            "add: operands could not be broadcast together with shapes (?,5) (4,)",
            3,
            12
        )
    );
    // A recursive function's tensor arguments widen to unknown sizes; the first error found is
    // reported once, with the sizes of the first call.
    let src =
        "def r(x, y, n):\n    if n == 0:\n        return x + y\n    return r(x[1:], y, n - 1)\n";
    let ((code, msg, line, col), _) = one(src, "r", &[zeros(&[5, 3]), zeros(&[4]), mint(2)]);
    assert_eq!(
        (code, msg.as_str(), line, col),
        (
            "E0301",
            "add: operands could not be broadcast together with shapes (5,3) (4,)",
            3,
            16
        )
    );
}

#[test]
fn reshape_to_an_incompatible_size() {
    let src = "from anfora import ops\n\ndef f(x):\n    return ops.reshape(x, (5,))\n\ndef g(x):\n    return x.reshape((4, -1))\n\ndef h(x):\n    return x.reshape(-1, -1)\n\ndef k(x):\n    return x.reshape(7, 1)\n";
    let ((code, msg, line, col), text) = one(src, "f", &[zeros(&[2, 3])]);
    assert_eq!(
        (code, msg.as_str(), line, col),
        (
            "E0301",
            "reshape: cannot reshape array of size 6 into shape (5,)",
            4,
            12
        )
    );
    assert!(
        text.contains(" 4 │     return ops.reshape(x, (5,))\n"),
        "{text}"
    );
    expect(
        "g",
        vec![(
            src,
            vec![zeros(&[2, 3])],
            (
                "E0301",
                "reshape: cannot reshape array of size 6 into shape (4,newaxis)",
                7,
                12,
            ),
        )],
    );
    expect(
        "h",
        vec![(
            src,
            vec![zeros(&[2, 3])],
            (
                "E0301",
                "reshape: can only specify one unknown dimension",
                10,
                12,
            ),
        )],
    );
    expect(
        "k",
        vec![(
            src,
            vec![zeros(&[2, 3])],
            (
                "E0301",
                "reshape: cannot reshape array of size 6 into shape (7,1)",
                13,
                12,
            ),
        )],
    );
}

#[test]
fn reduction_axis_out_of_range() {
    let src = "from anfora import ops\n\ndef f(x):\n    return x.sum(axis=2)\n\ndef g(x):\n    return ops.mean(x, -3)\n\ndef h(x):\n    return ops.max(x, (0, 0), True)\n\ndef k(x):\n    return x.min(0)\n";
    let ((code, msg, line, col), text) = one(src, "f", &[zeros(&[2, 3])]);
    assert_eq!(
        (code, msg.as_str(), line, col),
        (
            "E0301",
            "sum: axis 2 is out of bounds for array of dimension 2",
            4,
            12
        )
    );
    assert_eq!(
        text,
        "  × error[E0301]: sum: axis 2 is out of bounds for array of dimension 2
   ╭─[model.py:4:12]
 3 │ def f(x):
 4 │     return x.sum(axis=2)
   ·            ──────┬──────
   ·                  ╰── here
 5 │ 
   ╰────
  help: tensor shapes and dtypes are checked when compiling, before the program runs

error: could not compile: 1 error
"
    );
    expect(
        "g",
        vec![(
            src,
            vec![zeros(&[2, 3])],
            (
                "E0301",
                "mean: axis -3 is out of bounds for array of dimension 2",
                7,
                12,
            ),
        )],
    );
    expect(
        "h",
        vec![(
            src,
            vec![zeros(&[2, 3])],
            ("E0301", "max: duplicate value in 'axis'", 10, 12),
        )],
    );
    expect(
        "k",
        vec![(
            src,
            vec![zeros(&[0, 3])],
            (
                "E0301",
                "min: zero-size array to reduction operation minimum which has no identity",
                13,
                12,
            ),
        )],
    );
}

#[test]
fn transpose_axes() {
    let src = "from anfora import ops\n\ndef f(x, axes):\n    return ops.transpose(x, axes)\n";
    let tuple = |v: &[i64]| {
        Arg::from(anfora_ops::Value::tuple(
            v.iter().map(|&i| anfora_ops::Value::Int(i)).collect(),
        ))
    };
    expect(
        "f",
        vec![
            (
                src,
                vec![zeros(&[2, 3]), tuple(&[0])],
                ("E0301", "transpose: axes don't match array", 4, 12),
            ),
            (
                src,
                vec![zeros(&[2, 3]), tuple(&[1, 1])],
                ("E0301", "transpose: repeated axis in transpose", 4, 12),
            ),
            (
                src,
                vec![zeros(&[2, 3]), tuple(&[0, 2])],
                (
                    "E0301",
                    "transpose: axis 2 is out of bounds for array of dimension 2",
                    4,
                    12,
                ),
            ),
        ],
    );
}

#[test]
fn indexing() {
    let src = "def f(x):\n    return x[0, 0, 0]\n\ndef g(x):\n    return x[1:][5]\n\ndef h(x):\n    return x[..., 0, ...]\n\ndef k(x):\n    return x[-4]\n";
    expect(
        "f",
        vec![(
            src,
            vec![zeros(&[2, 3])],
            (
                "E0301",
                "index: too many indices for array: array is 2-dimensional, but 3 were indexed",
                2,
                12,
            ),
        )],
    );
    expect(
        "g",
        vec![(
            src,
            vec![zeros(&[4])],
            (
                "E0301",
                "index: index 5 is out of bounds for axis 0 with size 3",
                5,
                12,
            ),
        )],
    );
    expect(
        "h",
        vec![(
            src,
            vec![zeros(&[2, 3])],
            (
                "E0301",
                "index: an index can only have a single ellipsis ('...')",
                8,
                12,
            ),
        )],
    );
    expect(
        "k",
        vec![(
            src,
            vec![zeros(&[3])],
            (
                "E0301",
                "index: index -4 is out of bounds for axis 0 with size 3",
                11,
                12,
            ),
        )],
    );
}

#[test]
fn dtypes_an_operation_does_not_support() {
    let src = "from anfora import ops\n\ndef f(x, b):\n    p = x & x\n    q = ~x\n    r = -b\n    s = b - b\n    t = ops.relu(b)\n    u = x << 1\n    return p, q, r, s, t, u\n";
    let bools = tensor("[True, False]");
    let (s, ds) = errors(src, "f", &[zeros(&[2]), bools]);
    let unsupported = |name: &str| {
        format!(
            "ufunc '{name}' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''"
        )
    };
    assert_eq!(
        summary(&s, &ds),
        vec![
            ("E0301", format!("bitwise_and: {}", unsupported("bitwise_and")), 4, 9),
            ("E0301", format!("invert: {}", unsupported("invert")), 5, 9),
            (
                "E0301",
                "neg: The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the logical_not function instead.".to_string(),
                6,
                9
            ),
            (
                "E0301",
                "sub: numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead.".to_string(),
                7,
                9
            ),
            ("E0301", "relu: relu is not supported for boolean tensors".to_string(), 8, 9),
            ("E0301", format!("left_shift: {}", unsupported("left_shift")), 9, 9),
        ]
    );
}

/// Every E0301 is an error the program would raise when it runs: the reference VM raises at
/// the same place.
#[test]
fn shape_errors_are_errors_at_run_time_too() {
    let cases: Vec<(&str, Vec<Arg>)> = vec![
        (
            "def f(a, b):\n    return a @ b\n",
            vec![zeros(&[3, 4]), zeros(&[5, 6])],
        ),
        (
            "def f(a, b):\n    return a + b\n",
            vec![zeros(&[2, 3]), zeros(&[4])],
        ),
        (
            "def f(a, b):\n    return a.reshape((5,))\n",
            vec![zeros(&[2, 3]), zeros(&[1])],
        ),
        (
            "def f(a, b):\n    return a.sum(axis=2)\n",
            vec![zeros(&[2, 3]), zeros(&[1])],
        ),
        (
            "def f(a, b):\n    return a[3]\n",
            vec![zeros(&[2, 3]), zeros(&[1])],
        ),
        (
            "def f(a, b):\n    return a.transpose(0, 0)\n",
            vec![zeros(&[2, 3]), zeros(&[1])],
        ),
        (
            "def f(a, b):\n    return ~a\n",
            vec![zeros(&[2, 3]), zeros(&[1])],
        ),
    ];
    for (src, args) in cases {
        let (s, ds) = errors(src, "f", &args);
        let (_, line, col) = location(&s, &ds[0]);
        let mut r = load(src);
        r.engine = anfora_session::Engine::Reference;
        match r.call("f", args, &mut std::io::sink()) {
            Err(anfora_session::Failure::Runtime(e)) => {
                let loc = r.frontend.module.sources.location(e.span).unwrap().1;
                assert_eq!((loc.line, loc.col), (line, col), "{src}");
            }
            other => panic!("{src}: the reference VM gives {other:?}"),
        }
    }
}

// ---- the chain of calls ---------------------------------------------------------------------

#[test]
fn errors_in_called_functions_show_the_chain_of_calls() {
    let src = "from anfora import ops\n\ndef layer(x, w):\n    return ops.matmul(x, w)\n\ndef block(x, w):\n    if x.ndim == 2:\n        y = layer(x, w)\n    else:\n        y = x\n    return y\n\ndef model(x, w):\n    i = 0\n    while i < 2:\n        i = i + 1\n    return block(x, w)\n";
    let (s, ds) = errors(src, "model", &[zeros(&[3, 4]), zeros(&[5, 6])]);
    assert_eq!(ds.len(), 1);
    let d = &ds[0];
    assert_eq!(
        d.message,
        "matmul: shapes (3, 4) and (5, 6) do not align (4 != 5)"
    );
    assert_eq!(location(&s, d), (FILE.to_string(), 4, 12));
    // One note per call of a function, innermost first; the blocks of `if` and `while` are
    // not calls of the program.
    assert_eq!(
        d.notes,
        vec![
            "called from model.py:8:13 in block".to_string(),
            "called from model.py:17:12 in model".to_string(),
        ]
    );
    let text = render(&s, &ds);
    assert!(
        text.ends_with(
            "  note: called from model.py:8:13 in block\n  note: called from model.py:17:12 in model\n\nerror: could not compile: 1 error\n"
        ),
        "{text}"
    );
}

#[test]
fn the_chain_of_calls_is_kept_when_an_error_appears_in_a_later_round() {
    // `main` calls `r` with n = 5, which returns before the reshape. The recursive call
    // `r(x, 4)` is compiled for any n; in its first round the recursion has no value yet, so
    // `y.reshape` is not checked. The error appears when `r` is evaluated again once the
    // recursion's result is known, outside the evaluation of its callers.
    let src = "def r(x, n):\n    if n == 0:\n        return x\n    y = r(x, n - 1)\n    if n == 5:\n        return y\n    return y.reshape((5,))\n\ndef main(x):\n    return r(x, 5)\n";
    let (s, ds) = errors(src, "main", &[zeros(&[6])]);
    assert_eq!(
        summary(&s, &ds),
        vec![(
            "E0301",
            "reshape: cannot reshape array of size 6 into shape (5,)".to_string(),
            7,
            12
        )],
        "{}",
        render(&s, &ds)
    );
    assert_eq!(
        ds[0].notes,
        vec![
            "called from model.py:4:9 in r".to_string(),
            "called from model.py:10:12 in main".to_string()
        ]
    );
    // A reshape whose known sizes cannot divide the number of elements, whatever the others.
    let src = "def f(x, k):\n    return x.reshape((k, 5))\n";
    let ((code, msg, line, col), _) = one(src, "f", &[zeros(&[2, 3]), mint(2)]);
    assert_eq!(
        (code, msg.as_str(), line, col),
        (
            "E0301",
            "reshape: cannot reshape array of size 6 into shape (?,5)",
            2,
            12
        )
    );
}

#[test]
fn several_independent_errors_are_all_reported() {
    let src = "from anfora import ops\n\ndef f(a, b):\n    x = ops.matmul(a, b)\n    y = a + b\n    z = a.reshape((7,))\n    w = a.sum(axis=3)\n    return x, y, z, w\n";
    let (s, ds) = errors(src, "f", &[zeros(&[3, 4]), zeros(&[5, 6])]);
    assert_eq!(
        summary(&s, &ds),
        vec![
            (
                "E0301",
                "matmul: shapes (3, 4) and (5, 6) do not align (4 != 5)".to_string(),
                4,
                9
            ),
            (
                "E0301",
                "add: operands could not be broadcast together with shapes (3,4) (5,6)".to_string(),
                5,
                9
            ),
            (
                "E0301",
                "reshape: cannot reshape array of size 12 into shape (7,)".to_string(),
                6,
                9
            ),
            (
                "E0301",
                "sum: axis 3 is out of bounds for array of dimension 2".to_string(),
                7,
                9
            ),
        ]
    );
    let text = render(&s, &ds);
    assert!(
        text.ends_with("error: could not compile: 4 errors\n"),
        "{text}"
    );
    // An error does not cascade: the result of a failed operation is unknown, not wrong.
    let src = "def f(a, b):\n    x = a @ b\n    y = x + a\n    return y.sum(axis=5)\n";
    let (s, ds) = errors(src, "f", &[zeros(&[3, 4]), zeros(&[5, 6])]);
    assert_eq!(summary(&s, &ds).len(), 1, "{}", render(&s, &ds));
}

#[test]
fn the_same_error_reached_twice_is_reported_once() {
    let src = "def g(x):\n    return x.reshape((5,))\n\ndef f(x):\n    return g(x), g(x + 1.0)\n";
    let (s, ds) = errors(src, "f", &[zeros(&[6])]);
    assert_eq!(summary(&s, &ds).len(), 1, "{}", render(&s, &ds));
}

// ---- E0302: values that do not join ---------------------------------------------------------

#[test]
fn if_branches_returning_tensors_of_different_shapes() {
    let src = "from anfora import ops\n\ndef f(c):\n    if c:\n        return ops.zeros((2, 3))\n    return ops.zeros((3, 2))\n";
    let ((code, msg, line, col), text) = one(src, "f", &[mbool(true)]);
    assert_eq!(code, "E0302");
    assert_eq!(
        msg,
        "the branches of this `if` give tensors of different shapes: <Tensor[Float32], (2, 3)> in the true branch and <Tensor[Float32], (3, 2)> in the false branch"
    );
    assert_eq!((line, col), (4, 5));
    assert!(text.contains("<Tensor[Float32], (2, 3)> here"), "{text}");
    assert!(text.contains("<Tensor[Float32], (3, 2)> here"), "{text}");
    assert!(
        text.contains(
            "help: the branches of an `if` must give tensors of the same dtype and shape"
        ),
        "{text}"
    );
    // The labels point at the value of each branch.
    let (s, ds) = errors(src, "f", &[mbool(true)]);
    let related: Vec<(u32, u32)> = ds[0]
        .related
        .iter()
        .map(|(span, _)| {
            let loc = s.frontend.module.sources.location(*span).unwrap().1;
            (loc.line, loc.col)
        })
        .collect();
    assert_eq!(related, vec![(5, 16), (6, 12)]);
}

#[test]
fn if_branches_assigning_tensors_of_different_shapes() {
    let src = "from anfora import ops\n\ndef f(c, x):\n    if c:\n        y = ops.zeros((2, 3))\n    else:\n        y = x.T\n    return y\n";
    let ((code, msg, line, col), text) = one(src, "f", &[mbool(false), zeros(&[2, 3])]);
    assert_eq!(code, "E0302");
    assert_eq!(
        msg,
        "'y' is <Tensor[Float32], (2, 3)> in the true branch and <Tensor[Float32], (3, 2)> in the false branch (shapes differ)"
    );
    assert_eq!((line, col), (4, 5));
    assert_eq!(
        text,
        "  × error[E0302]: 'y' is <Tensor[Float32], (2, 3)> in the true branch and <Tensor[Float32], (3,
  │ 2)> in the false branch (shapes differ)
   ╭─[model.py:4:5]
 3 │     def f(c, x):
 4 │ ╭─▶     if c:
 5 │ │           y = ops.zeros((2, 3))
   · │               ────────┬────────
   · │                       ╰── <Tensor[Float32], (2, 3)> here
 6 │ │       else:
 7 │ ├─▶         y = x.T
   · ╰───            ─┬─
   · ╰───             ╰── <Tensor[Float32], (3, 2)> here
   · ╰──── where the paths join
 8 │         return y
   ╰────
  help: the branches of an `if` must give tensors of the same dtype and shape

error: could not compile: 1 error
"
    );
    // Different dtypes, and a value assigned before an `if` without `else`.
    let src = "import anfora\n\ndef f(c, x):\n    y = x\n    if c:\n        y = x.astype(anfora.float64)\n    return y\n";
    let ((code, msg, line, col), _) = one(src, "f", &[mbool(false), zeros(&[2])]);
    assert_eq!(
        (code, msg.as_str(), line, col),
        (
            "E0302",
            "'y' is <Tensor[Float64], (2,)> in the true branch and <Tensor[Float32], (2,)> in the false branch (dtypes differ)",
            5,
            5
        )
    );
    // A conditional expression.
    let src =
        "from anfora import ops\n\ndef f(c):\n    return ops.ones(3) if c else ops.ones((1, 3))\n";
    let ((code, msg, line, col), _) = one(src, "f", &[mbool(false)]);
    assert_eq!(
        (code, msg.as_str(), line, col),
        (
            "E0302",
            "the value is <Tensor[Float32], (3,)> in the true branch and <Tensor[Float32], (1, 3)> in the false branch (ranks differ)",
            4,
            12
        )
    );
}

#[test]
fn join_errors_in_called_functions_show_the_chain_of_calls() {
    let src = "from anfora import ops\n\ndef pick(c):\n    if c:\n        return ops.zeros((2, 3))\n    return ops.zeros((3, 2))\n\ndef f(c):\n    return pick(c) + 1.0\n";
    let (s, ds) = errors(src, "f", &[mbool(true)]);
    assert_eq!(ds.len(), 1);
    assert_eq!(location(&s, &ds[0]), (FILE.to_string(), 4, 5));
    assert_eq!(
        ds[0].notes,
        vec!["called from model.py:9:12 in f".to_string()]
    );
}

#[test]
fn a_constant_condition_joins_nothing() {
    // With a compile-time constant condition only one branch exists: no error.
    let src = "from anfora import ops\n\ndef f(c):\n    if c:\n        return ops.zeros((2, 3))\n    return ops.zeros((3, 2))\n";
    let i = infer(src, "f", &[boolean(false)]);
    assert_eq!(
        i.result().to_string(),
        "<Tensor[Float32], (3, 2), value=[[0. 0.] [0. 0.] [0. 0.]]>"
    );
}

#[test]
fn functions_called_through_one_value_must_agree() {
    let src = "from anfora import ops\n\ndef a():\n    return ops.zeros(2)\n\ndef b():\n    return ops.zeros(3)\n\ndef f(c):\n    g = a if c else b\n    return g()\n";
    let ((code, msg, line, col), _) = one(src, "f", &[mbool(true)]);
    assert_eq!(
        (code, msg.as_str(), line, col),
        (
            "E0302",
            "the functions called here give tensors of different shapes: <Tensor[Float32], (2,)> from 'a' and <Tensor[Float32], (3,)> from 'b'",
            11,
            12
        )
    );
}

#[test]
fn a_loop_that_changes_a_tensors_dtype() {
    let src = "from anfora import ops\nimport anfora\n\ndef f(x, n):\n    i = 0\n    while i < n:\n        x = ops.cast(x, anfora.float64)\n        i = i + 1\n    return x\n";
    let ((code, msg, line, col), text) = one(src, "f", &[zeros(&[2]), mint(3)]);
    assert_eq!(code, "E0302");
    assert_eq!(
        msg,
        "'x' changes from <Tensor[Float32], (2,)> to <Tensor[Float64], (2,)> between loop iterations (dtypes differ)"
    );
    assert_eq!((line, col), (6, 5));
    assert!(
        text.contains(
            "help: a tensor carried through a loop must keep its dtype and rank (its sizes may change)"
        ),
        "{text}"
    );
    assert!(text.contains("in this loop"), "{text}");
    // No notes: the loop is part of the entry function.
    assert!(!text.contains("note:"), "{text}");
    // The same with a constant trip count (a `for` loop), and with a shape that changes.
    let src = "def f(x):\n    for i in range(3):\n        x = x.sum(axis=0)\n    return x\n";
    let ((code, msg, line, col), _) = one(src, "f", &[zeros(&[2, 3, 4])]);
    assert_eq!(
        (code, msg.as_str(), line, col),
        (
            "E0302",
            "'x' changes from <Tensor[Float32], (2, 3, 4)> to <Tensor[Float32], (3, 4)> between loop iterations (ranks differ)",
            2,
            5
        )
    );
}

#[test]
fn a_variable_shared_with_closures_that_changes_a_tensors_rank() {
    // `t` lives in a cell (the lambda escapes into a list and reads `t` after it is assigned
    // again): every value stored in it must join, as a loop's carried values must.
    let src =
        "def f(x):\n    t = x\n    fs = [lambda: t.sum()]\n    t = x[0]\n    return fs[0]()\n";
    let ((code, msg, line, col), text) = one(src, "f", &[zeros(&[2, 2])]);
    assert_eq!(
        (code, msg.as_str(), line, col),
        (
            "E0302",
            "variable 't', which a closure shares, holds <Tensor[Float32], (2,)> here and <Tensor[Float32], (2, 2)> elsewhere",
            4,
            5
        )
    );
    assert!(
        text.contains("help: a tensor in a variable that closures read after it is assigned again"),
        "{text}"
    );
    // Sizes may change, and so may the kind of value (it becomes dynamic), as in loops.
    for src in [
        "def f(x):\n    t = x\n    fs = [lambda: t.sum()]\n    t = x[:1]\n    return fs[0]()\n",
        "def f(x):\n    t = x\n    fs = [lambda: t]\n    t = 1\n    return fs[0]()\n",
    ] {
        infer(src, "f", &[zeros(&[2, 2])]);
    }
}

#[test]
fn dict_keys_known_only_at_run_time_and_loops_over_dicts() {
    // A dict's items are read by keys known at compile time; a `for` loop reads items by
    // position, which a dict does not have.
    let src = "def f(x, k):\n    d = {'a': x, 'b': 2}\n    return d[k]\n";
    let ((code, msg, line, col), _) = one(
        src,
        "f",
        &[zeros(&[2]), Arg::mutable(anfora_ops::Value::str("a"))],
    );
    assert_eq!(
        (code, msg.as_str(), line, col),
        (
            "E0301",
            "index: a dict's key must be known at compile time (a string constant, or a variable that holds one)",
            3,
            12
        )
    );
    // Over its keys as a tuple, each key is a constant.
    let src = "def f(x):\n    d = {'a': x, 'b': 2.0}\n    s = 0.0\n    for k in tuple(d):\n        s = s + d[k]\n    return s\n";
    infer(src, "f", &[zeros(&[2])]);
}

#[test]
fn values_of_different_kinds_join_to_a_dynamic_value() {
    // A loop-carried value that changes kind (tensor to int) is not an error: it becomes a
    // value known only at run time, and the program runs as Python does.
    let src = "def f(x, n):\n    i = 0\n    while i < n:\n        x = 1\n        i = i + 1\n    return x\n";
    let i = infer(src, "f", &[zeros(&[2]), mint(3)]);
    assert_eq!(i.result().to_string(), "<Any>");
    assert_eq!(
        anfora_session::repr(&run(src, "f", vec![zeros(&[2]), mint(3)])),
        "1"
    );
    assert_eq!(
        anfora_session::repr(&run(src, "f", vec![zeros(&[2]), mint(0)])),
        "Tensor([0., 0.], dtype=float32)"
    );
    // Branches that give an int and a tensor, or None and a tensor.
    let src = "from anfora import ops\n\ndef f(c):\n    y = None\n    if c:\n        y = ops.ones(2)\n    return y\n";
    let i = infer(src, "f", &[mbool(true)]);
    assert_eq!(i.result().to_string(), "<Any>");
    assert_eq!(
        anfora_session::repr(&run(src, "f", vec![mbool(false)])),
        "None"
    );
}

// ---- E0303 ----------------------------------------------------------------------------------

#[test]
fn recursion_whose_argument_types_grow_converges() {
    // The argument grows on every call: (), ((),), (((),),) ... Inference does not follow it:
    // recursive calls drop constants and join their arguments, and tuples of different shapes
    // join to a value known only at run time, so the analysis reaches a fixpoint (no E0303).
    let src = "def r(t, n):\n    if n == 0:\n        return t\n    return r((t,), n - 1)\n";
    let i = infer(
        src,
        "r",
        &[Arg::from(anfora_ops::Value::tuple(vec![])), mint(3)],
    );
    assert_eq!(i.functions_named("r").len(), 2, "{}", i.ir());
    assert_eq!(
        anfora_session::repr(&run(
            src,
            "r",
            vec![Arg::from(anfora_ops::Value::tuple(vec![])), mint(3)]
        )),
        "((((),),),)"
    );
    // Growing tensors, and a growing tuple of tensors.
    let src =
        "def r(t, x, n):\n    if n == 0:\n        return t\n    return r(t + (x,), x, n - 1)\n";
    let i = infer(
        src,
        "r",
        &[
            Arg::from(anfora_ops::Value::tuple(vec![])),
            zeros(&[2]),
            mint(3),
        ],
    );
    assert!(i.functions_named("r").len() <= 3, "{}", i.ir());
}

// ---- E0304: arguments that must be known at compile time -------------------------------------

#[test]
fn a_pad_mode_known_only_at_run_time() {
    let src = "from anfora import ops\n\ndef f(x, flag):\n    mode = 'edge'\n    if flag:\n        mode = 'reflect'\n    return ops.pad(x, 1, mode)\n";
    let mflag = Arg::mutable(anfora_ops::Value::Bool(true));
    let ((code, msg, line, col), text) = one(src, "f", &[zeros(&[2, 3]), mflag]);
    assert_eq!(code, "E0304");
    assert_eq!(
        msg,
        "pad: the mode must be known at compile time (a constant such as 'reflect'), got a str \
         computed at run time"
    );
    assert_eq!((line, col), (7, 12));
    assert_eq!(
        text,
        "  × error[E0304]: pad: the mode must be known at compile time (a constant such as 'reflect'), got
  │ a str computed at run time
   ╭─[model.py:7:12]
 6 │         mode = 'reflect'
 7 │     return ops.pad(x, 1, mode)
   ·            ─────────┬─────────
   ·                     ╰── not known at compile time
   ╰────
  help: write the value as a literal (or a module-level constant) at the call, or pass it as an
        argument that is a compile-time constant; a value chosen at run time (by a branch on a
        tensor, or as the variable of a loop over several strings) is not

error: could not compile: 1 error
"
    );
    // A constant flag decides the branch, and each mode compiles.
    for flag in [true, false] {
        let i = infer(
            src,
            "f",
            &[zeros(&[2, 3]), Arg::from(anfora_ops::Value::Bool(flag))],
        );
        assert_eq!(
            i.result().to_string(),
            "<Tensor[Float32], (4, 5)>",
            "{}",
            i.ir()
        );
    }
    // Through a keyword, a value known only at run time and the mode of a function value.
    expect(
        "f",
        vec![
            (
                "from anfora import ops\n\ndef f(x, m):\n    return ops.pad(x, 2, mode=m)\n",
                vec![zeros(&[3]), Arg::mutable(anfora_ops::Value::str("edge"))],
                (
                    "E0304",
                    "pad: the mode must be known at compile time (a constant such as \
                     'reflect'), got a str computed at run time",
                    4,
                    12,
                ),
            ),
            (
                "from anfora import ops\n\ndef f(x, n):\n    p = ops.pad\n    return p(x, 2, ('edge', 'reflect')[n])\n",
                vec![zeros(&[3]), mint(1)],
                (
                    "E0304",
                    "pad: the mode must be known at compile time (a constant such as \
                     'reflect'), got a str computed at run time",
                    5,
                    12,
                ),
            ),
        ],
    );
}

// ---- neural-network operations --------------------------------------------------------------

#[test]
fn conv2d_shapes_that_do_not_fit() {
    let call = |args: &str| {
        format!(
            "from anfora import ops\n\ndef f(x, w):\n    y = x + 1.0\n    return ops.conv2d({args})\n"
        )
    };
    let (ch, wide) = (call("y, w"), call("y, w, padding=1, dilation=3"));
    let strided_same = call("y, w, stride=2, padding='same'");
    let bad_string = call("y, w, padding='full'");
    let bad_groups = call("y, w, groups=2");
    expect(
        "f",
        vec![
            (
                ch.as_str(),
                vec![zeros(&[2, 3, 8, 8]), zeros(&[4, 4, 3, 3])],
                (
                    "E0301",
                    "conv2d: input has 3 channels but weight expects 4 (groups=1)",
                    5,
                    12,
                ),
            ),
            (
                ch.as_str(),
                vec![zeros(&[3, 8]), zeros(&[4, 3, 3, 3])],
                (
                    "E0301",
                    "conv2d: expected a 4-D input (N, C, H, W) or a 3-D one (C, H, W), got shape \
                     (3, 8)",
                    5,
                    12,
                ),
            ),
            (
                ch.as_str(),
                vec![zeros(&[1, 3, 8, 8]), zeros(&[4, 3, 3])],
                (
                    "E0301",
                    "conv2d: expected a 4-D weight (out_channels, in_channels / groups, kH, kW), \
                     got shape (4, 3, 3)",
                    5,
                    12,
                ),
            ),
            (
                wide.as_str(),
                vec![zeros(&[1, 3, 4, 4]), zeros(&[4, 3, 3, 3])],
                (
                    "E0301",
                    "conv2d: the padded input (6, 6) is smaller than the dilated kernel (7, 7)",
                    5,
                    12,
                ),
            ),
            (
                strided_same.as_str(),
                vec![zeros(&[1, 3, 8, 8]), zeros(&[4, 3, 3, 3])],
                (
                    "E0301",
                    "conv2d: padding='same' is not supported for strided convolutions",
                    5,
                    12,
                ),
            ),
            (
                bad_string.as_str(),
                vec![zeros(&[1, 3, 8, 8]), zeros(&[4, 3, 3, 3])],
                (
                    "E0301",
                    "conv2d: invalid padding string 'full', should be one of {'valid', 'same'}",
                    5,
                    12,
                ),
            ),
            (
                bad_groups.as_str(),
                vec![zeros(&[1, 4, 8, 8]), zeros(&[3, 2, 3, 3])],
                (
                    "E0301",
                    "conv2d: out_channels (3) must be divisible by groups (2)",
                    5,
                    12,
                ),
            ),
        ],
    );
}

// ---- E0306 and in-place updates ------------------------------------------------------------

/// The E0306 message for an in-place update of `name`, whose `kind` others may hold.
fn shared(name: &str, kind: &str) -> String {
    format!(
        "in-place update of '{name}', whose {kind} may also be held elsewhere (an argument, another name, a tuple, a view or a closure)"
    )
}

/// Each entry of `src` called with `arg` fails with `code`, its message, line and column.
fn refusals(src: &str, code: &str, arg: Arg, cases: &[(&str, String, u32, u32)]) {
    let mut bad = Vec::new();
    for (entry, message, line, col) in cases {
        let got = one(src, entry, std::slice::from_ref(&arg)).0;
        compare_diagnostic(&mut bad, src, (code, message, *line, *col), got);
    }
    assert_no_differences(&bad);
}

#[test]
fn in_place_updates_of_objects_others_may_hold() {
    let src = "from anfora import ops\n\ndef arg(x):\n    x += 1.0\n    return x\n\ndef alias(x):\n    y = x * 1.0\n    z = y\n    y[0] = 5.0\n    return z\n\ndef view(x):\n    y = x * 1.0\n    r = y[0]\n    y -= 1.0\n    return r\n\ndef tup(x):\n    y = x + 0.0\n    t = (y, 1)\n    y *= 2.0\n    return t\n\ndef listed(x):\n    xs = [x * 1.0]\n    xs[0] += 1.0\n    return xs\n";
    let cases = [
        ("arg", shared("x", "array"), 4, 5),
        ("alias", shared("y", "array"), 10, 5),
        ("view", shared("y", "array"), 16, 5),
        ("tup", shared("y", "array"), 22, 5),
        ("listed", shared("xs[...]", "array"), 27, 5),
    ];
    refusals(src, "E0306", zeros(&[3]), &cases);
}

#[test]
fn arguments_updated_in_place_by_a_call_that_others_may_hold() {
    // `bump` updates its argument in place: a call by name writes the array back to the
    // caller's variable, which must be its only holder.
    let src = "from anfora import ops\n\ndef bump(x):\n    x += 1.0\n\ndef tupled(x):\n    a = x * 1.0\n    t = (a, 1)\n    bump(a)\n    return t\n\ndef view(x):\n    a = x * 1.0\n    bump(a[1:])\n    return a\n\ndef entry(x):\n    bump(x)\n    return x\n\ndef add_into(x, y):\n    x += 1.0\n    return y * 1.0\n\ndef twice(x):\n    a = x * 1.0\n    return add_into(a, a)\n";
    let cases = [
        ("tupled", shared("a", "array"), 9, 5),
        ("view", shared("an argument", "array"), 14, 5),
        // The entry's own argument is its caller's, outside compiled code.
        ("entry", shared("x", "array"), 18, 5),
        // The same array passed twice: the callee would update one name and read the other.
        ("twice", shared("a", "array"), 27, 12),
    ];
    refusals(src, "E0306", zeros(&[3]), &cases);
}

#[test]
fn in_place_updates_of_zero_d_tensors_where_numpy_scalars_differ_from_arrays() {
    // numpy rebinds a scalar (a reduction's result) but changes a 0-d array for every holder,
    // and casts only into the array; anfora has one 0-d tensor type, so it refuses both.
    let src = "from anfora import ops\n\ndef alias(x):\n    s = x.sum()\n    t = s\n    s += 1.0\n    return t\n\ndef widened(x):\n    n = ops.argmax(x)\n    n += 0.5\n    return n\n\ndef bump(v):\n    v += 1.0\n\ndef passed(x):\n    s = x.sum()\n    bump(s)\n    return s\n";
    let zero_d = anfora_ops::indexing::ZERO_D.to_string();
    // The callee's update is where the caller's 0-d tensor would change.
    let cases = [
        ("alias", zero_d.clone(), 6, 5),
        ("passed", zero_d.clone(), 15, 5),
    ];
    refusals(src, "E0306", zeros(&[3]), &cases);
    // A 0-d update that changes the dtype is the in-place operation's own error.
    let widened = [("widened", format!("in-place operation: {zero_d}"), 11, 5)];
    refusals(src, "E0301", zeros(&[3]), &widened);
}

#[test]
fn items_of_items_are_assigned_only_through_views() {
    let src = "from anfora import ops\n\ndef copied(x):\n    y = x * 1.0\n    y[[0, 1]][0] = 5.0\n    return y\n\ndef listed(x):\n    xs = [[1, 2], [3, 4]]\n    xs[0][1] += 5\n    return xs\n";
    let through = |what: &str| {
        format!(
            "`x[i][j] = v` writes through `x[i]` only where it is a view of an array; here {what}"
        )
    };
    let copy = "`x[i]` is a copy (an integer-array or mask index), which numpy would change instead of `x`";
    let cases = [
        ("copied", through(copy), 5, 5),
        (
            "listed",
            through("`x[i]` is an item of a list, an object other names may hold"),
            10,
            5,
        ),
    ];
    refusals(src, "E0118", zeros(&[2, 2]), &cases);
}

#[test]
fn in_place_updates_keep_numpy_dtype_and_shape() {
    let src = "from anfora import ops\n\ndef widen(x):\n    y = x * 1\n    y += 0.5\n    return y\n\ndef grow(x):\n    y = x * 1.0\n    y += ops.ones((2, 3))\n    return y\n\ndef past(x):\n    y = x * 1.0\n    y[3] = 1.0\n    return y\n";
    let ((code, msg, line, _), _) = one(src, "widen", &[tensor("[1, 2, 3]")]);
    assert_eq!((code, line), ("E0301", 5));
    assert!(msg.contains("Cannot cast ufunc output from dtype('float64') to dtype('int64') with casting rule 'same_kind'"), "{msg}");
    let ((code, msg, line, _), _) = one(src, "grow", &[zeros(&[3])]);
    assert_eq!((code, line), ("E0301", 10));
    assert!(msg.contains("non-broadcastable output operand with shape (3,) doesn't match the broadcast shape (2,3)"), "{msg}");
    let ((code, msg, line, _), _) = one(src, "past", &[zeros(&[3])]);
    assert_eq!((code, line), ("E0301", 15));
    assert!(
        msg.contains("index 3 is out of bounds for axis 0 with size 3"),
        "{msg}"
    );
}

#[test]
fn gradients_of_functions_updating_arguments_that_cannot_write_back() {
    // `grad(f)(a, w)` writes the update back where `grad(f)` is called at once; a gradient
    // function kept in a variable, or one taking `sens_param`, cannot.
    let src = "from anfora import ops, grad\n\ndef f(x, w):\n    x *= w\n    return ops.sum(x)\n\ndef kept(x):\n    a = x * 1.0\n    gf = grad(f)\n    return gf(a, x)\n\ndef sens(x):\n    a = x * 1.0\n    return grad(f, sens_param=True)(a, x, 1.0)\n\ndef written(x):\n    a = x * 1.0\n    return grad(f)(a, x), a\n";
    let cases = [
        ("kept", shared("x", "array"), 4, 5),
        ("sens", shared("x", "array"), 4, 5),
    ];
    refusals(src, "E0306", zeros(&[3]), &cases);
    infer(src, "written", &[zeros(&[3])]);
}

#[test]
fn gradient_arguments_and_results_that_the_transform_refuses() {
    let src = "from anfora import ops, grad\n\ndef apply(f, x):\n    return ops.sum(f(x))\n\ndef pair(x):\n    return ops.sum(x), x, 1.0\n\ndef by_value(g, x):\n    return grad(apply, argnums=1)(g, x)\n\ndef chosen(x):\n    return by_value(ops.exp, x) + by_value(ops.tanh, x)\n\ndef aux(x):\n    return grad(pair, has_aux=True)(x)\n";
    let cases = [(
        "chosen",
        "argument 0 of the differentiated function holds a function known only when the program runs, which its gradient cannot call".to_string(),
        10,
        12,
    )];
    refusals(src, "E0501", zeros(&[3]), &cases);
    let cases = [(
        "aux",
        "has_aux=True: the function must return a pair (value, aux), got a tuple of 3".to_string(),
        16,
        12,
    )];
    refusals(src, "E0301", zeros(&[3]), &cases);
}
