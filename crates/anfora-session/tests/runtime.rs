//! Runtime guarantees of the default (compiled) engine: tail calls (loops) use constant native stack, deep
//! recursion is a clean RecursionError with a Python-level trace, and every runtime error
//! names its source location.

use anfora_ir::{Options, RuntimeError};
use anfora_ops::Value;
use anfora_session::{Engine, Failure, Session, repr};

fn run_with(
    src: &str,
    entry: &str,
    args: Vec<Value>,
    options: Options,
) -> (Session, Result<Value, Failure>, String) {
    let mut s = Session::load("prog.py", src, options);
    let mut out = Vec::new();
    let r = s.run(entry, args, &mut out);
    (s, r, String::from_utf8(out).unwrap())
}

fn runtime_error(src: &str, args: Vec<Value>) -> (Session, RuntimeError) {
    let (s, r, _) = run_with(src, "main", args, Options::default());
    match r {
        Err(Failure::Runtime(e)) => (s, e),
        Err(f) => panic!("expected a runtime error, got {}", s.render(&f)),
        Ok(v) => panic!("expected a runtime error, got {}", repr(&v)),
    }
}

/// Runs `f` on a thread with a small stack: anything that recursed natively would overflow.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .expect("the run must not overflow a 256 KiB stack")
}

#[test]
fn a_million_iteration_while_loop_runs_in_constant_stack() {
    let v = on_small_stack(|| {
        let src = "def main(n):\n    i = 0\n    s = 0\n    while i < n:\n        if i % 2 == 0:\n            s += i\n        i += 1\n    return s\n";
        let (_, r, _) = run_with(src, "main", vec![Value::Int(1_000_000)], Options::default());
        repr(&r.unwrap())
    });
    assert_eq!(v, "249999500000");
}

#[test]
fn for_loops_run_in_constant_stack_and_user_recursion_on_the_vm_stack() {
    let v = on_small_stack(|| {
        let src = "def count(n, acc):\n    if n == 0:\n        return acc\n    return count(n - 1, acc + 1)\n\ndef main():\n    t = 0\n    for i in range(200000):\n        t += 1\n    return count(9000, t)\n";
        let (_, r, _) = run_with(src, "main", vec![], Options::default());
        repr(&r.unwrap())
    });
    assert_eq!(v, "209000");
}

#[test]
fn deep_recursion_is_a_clean_error_with_a_python_trace() {
    let (headline, trace_len, first, last, text) = on_small_stack(|| {
        let src = "def down(n):\n    if n == 0:\n        return 0\n    return 1 + down(n - 1)\n\ndef main():\n    return down(50000)\n";
        let (s, e) = runtime_error(src, vec![]);
        let text = e.render(&s.frontend.module.sources);
        (
            e.headline(),
            e.trace.len(),
            e.trace[0].function.to_string(),
            e.trace.last().unwrap().function.to_string(),
            text,
        )
    });
    assert_eq!(
        headline,
        "RecursionError: maximum recursion depth exceeded (10000 nested calls)"
    );
    // Frames count toward the limit; calls the optimizer inlined (the first specializations
    // of `down` for constant arguments) add traceback lines without frames.
    assert!((10_000..10_020).contains(&trace_len), "{trace_len}");
    assert_eq!(first, "main");
    assert_eq!(last, "down");
    assert!(text.starts_with("Traceback (most recent call last):\n  File \"prog.py\", line 7, in main\n    return down(50000)\n           ^^^^^^^^^^^\n  File \"prog.py\", line 4, in down\n"), "{text}");
}

#[test]
fn the_recursion_limit_is_configurable() {
    let src = "def down(n):\n    if n == 0:\n        return 0\n    return 1 + down(n - 1)\n\ndef main(n):\n    return down(n)\n";
    let opts = Options { max_depth: 50 };
    let (_, ok, _) = run_with(src, "main", vec![Value::Int(40)], opts.clone());
    assert_eq!(repr(&ok.unwrap()), "40");
    let (_, err, _) = run_with(src, "main", vec![Value::Int(60)], opts);
    assert!(matches!(err, Err(Failure::Runtime(e)) if e.kind == "RecursionError"));
}

#[test]
fn runtime_errors_name_the_failing_operation() {
    let src = "def f(x):\n    y = x + 1\n    return 10 // (y - 3)\n\ndef main():\n    print('before')\n    return f(2)\n";
    let (s, e) = runtime_error(src, vec![]);
    assert_eq!(
        e.headline(),
        "ZeroDivisionError: integer division or modulo by zero"
    );
    let (file, loc) = s.frontend.module.sources.location(e.span).unwrap();
    assert_eq!((file.name.as_str(), loc.line, loc.col), ("prog.py", 3, 12));
    let names: Vec<&str> = e.trace.iter().map(|t| &*t.function).collect();
    assert_eq!(names, vec!["main", "f"]);
    let text = e.render(&s.frontend.module.sources);
    assert_eq!(
        text,
        "Traceback (most recent call last):\n  File \"prog.py\", line 7, in main\n    return f(2)\n           ^^^^\n  File \"prog.py\", line 3, in f\n    return 10 // (y - 3)\n           ^^^^^^^^^^^^^\nZeroDivisionError: integer division or modulo by zero\nerror: runtime error at prog.py:3:12\n"
    );
}

#[test]
fn output_before_an_error_is_kept_in_order() {
    let src = "def main():\n    for i in range(5):\n        print('i =', i)\n        if i == 3:\n            assert i < 3, 'too far'\n    return 0\n";
    let (_, r, out) = run_with(src, "main", vec![], Options::default());
    assert_eq!(out, "i = 0\ni = 1\ni = 2\ni = 3\n");
    assert!(matches!(r, Err(Failure::Runtime(e)) if e.headline() == "AssertionError: too far"));
}

#[test]
fn unbound_locals_and_free_variables() {
    let (_, e) = runtime_error(
        "def main(c):\n    if c:\n        x = 1\n    return x\n",
        vec![Value::Bool(false)],
    );
    assert_eq!(
        e.headline(),
        "UnboundLocalError: cannot access local variable 'x' where it is not associated with a value"
    );
    let (_, e) = runtime_error(
        "def main(c):\n    if c:\n        x = 1\n    def g():\n        return x\n    return g()\n",
        vec![Value::Bool(false)],
    );
    assert_eq!(
        e.headline(),
        "NameError: cannot access free variable 'x' where it is not associated with a value in enclosing scope"
    );
    let (_, r, _) = run_with(
        "def main(c):\n    if c:\n        x = 1\n    return x\n",
        "main",
        vec![Value::Bool(true)],
        Options::default(),
    );
    assert_eq!(repr(&r.unwrap()), "1");
}

#[test]
fn int_overflow_is_an_error_not_a_wrap() {
    let (_, e) = runtime_error("def main():\n    x = 2 ** 62\n    return x * 4\n", vec![]);
    assert_eq!(e.kind, "OverflowError");
    assert!(e.message.contains("64 bits"), "{}", e.message);
}

#[test]
fn module_level_constants_are_evaluated_once_in_order() {
    let src =
        "N = 3\nM = N * 2\nNAMES = ('a', 'b')\nN = 10\n\ndef main():\n    return N, M, NAMES\n";
    let (_, r, _) = run_with(src, "main", vec![], Options::default());
    assert_eq!(repr(&r.unwrap()), "(10, 6, ('a', 'b'))");
}

#[test]
fn keyword_arguments_and_defaults() {
    let src = "def f(a, b=2, *, c=3):\n    return a * 100 + b * 10 + c\n\ndef main():\n    g = f\n    return f(1), f(1, c=5), f(b=4, a=2), g(1, c=0), g(7)\n";
    let (_, r, _) = run_with(src, "main", vec![], Options::default());
    assert_eq!(repr(&r.unwrap()), "(123, 125, 243, 120, 723)");
    // A call through a parameter is bound at run time.
    let (_, e) = runtime_error(
        "def f(a):\n    return a\n\ndef call(g):\n    return g(1, 2)\n\ndef main():\n    return call(f)\n",
        vec![],
    );
    assert_eq!(
        e.headline(),
        "TypeError: f() takes 1 positional argument but 2 were given"
    );
}

#[test]
fn entry_problems_are_usage_errors() {
    let (s, r, _) = run_with("X = 1\n", "main", vec![], Options::default());
    assert!(
        matches!(&r, Err(Failure::Usage(m)) if m == "no function named 'main' in prog.py"),
        "{}",
        s.render(r.as_ref().unwrap_err())
    );
    let (_, r, _) = run_with("X = 1\n", "X", vec![], Options::default());
    assert!(matches!(r, Err(Failure::Usage(m)) if m.contains("not a function")));
}

#[test]
fn module_level_runtime_errors_are_reported() {
    let (_, r, _) = run_with(
        "X = 1 // 0\n\ndef main():\n    return X\n",
        "main",
        vec![],
        Options::default(),
    );
    assert!(matches!(r, Err(Failure::Runtime(e)) if e.kind == "ZeroDivisionError"));
}

#[test]
fn deeply_nested_values_and_sources_need_no_large_stack() {
    let out = on_small_stack(|| {
        // A tuple nested 100,000 deep and a chain of 50,000 closures are built, printed in part,
        // compared and dropped without recursion on the native stack.
        let src = "def compose(f, g):\n    return lambda x: f(g(x))\n\ndef inc(x):\n    return x + 1\n\ndef main():\n    t = ()\n    for i in range(100000):\n        t = (t, i)\n    u = t\n    h = inc\n    for i in range(50000):\n        h = compose(inc, h)\n    return t == u, t[1], len(t[0])\n";
        let (_, r, _) = run_with(src, "main", vec![], Options::default());
        repr(&r.unwrap())
    });
    assert_eq!(out, "(True, 99999, 2)");
    let out = on_small_stack(|| {
        let expr = format!("{}1{}", "(".repeat(2000), ")".repeat(2000));
        let sum = vec!["1"; 1500].join(" + ");
        let src = format!(
            "def main():\n    return {expr}, {sum}, -{}\n",
            "-".repeat(1500) + "1"
        );
        let (s, r, _) = run_with(&src, "main", vec![], Options::default());
        r.map(|v| repr(&v)).unwrap_or_else(|f| s.render(&f))
    });
    assert_eq!(out, "(1, 1500, -1)");
    // Deeper than CPython compiles: a clean diagnostic.
    let out = on_small_stack(|| {
        let src = format!("def main():\n    return {}\n", vec!["1"; 50000].join(" + "));
        let (s, r, _) = run_with(&src, "main", vec![], Options::default());
        s.render(&r.unwrap_err())
    });
    assert!(
        out.contains("error[E0001]: code is nested too deeply (more than 2000 levels)"),
        "{out}"
    );
}

#[test]
fn primitives_called_as_values_get_their_defaults_on_both_engines() {
    // The callee is one of two primitives chosen at run time, called without its optional
    // arguments: both engines bind the call to the primitive's signature.
    let src = "from anfora import ops\n\ndef main(n):\n    fs = (ops.sum, ops.mean)\n    x = ops.tensor([[1.0, -2.0]])\n    r = 0.0\n    for i in range(n):\n        r = r + fs[i % 2](x) + fs[i % 2](x, 1, keepdims=True)[0]\n    return r\n";
    for engine in [
        anfora_session::Engine::Compiled,
        anfora_session::Engine::Reference,
    ] {
        let mut s = Session::load("prog.py", src, Options::default());
        s.engine = engine;
        let r = s.run("main", vec![Value::Int(5)], &mut std::io::sink());
        let v = r.unwrap_or_else(|f| panic!("{engine:?}: {}", s.render(&f)));
        assert_eq!(repr(&v), "Tensor([-8.], dtype=float32)", "{engine:?}");
    }
}

/// The result of `main(n)` on `engine` under a recursion limit of 1000, on a small stack.
fn tail_run(src: &'static str, n: i64, engine: Engine) -> Result<String, (String, usize)> {
    on_small_stack(move || {
        let mut s = Session::load("prog.py", src, Options { max_depth: 1000 });
        s.engine = engine;
        match s.run("main", vec![Value::Int(n)], &mut Vec::new()) {
            Ok(v) => Ok(repr(&v)),
            Err(Failure::Runtime(e)) => Err((e.headline(), e.trace.len())),
            Err(f) => panic!("{}", s.render(&f)),
        }
    })
}

#[test]
fn tail_calls_of_functions_count_toward_the_recursion_limit_and_loops_do_not() {
    let countdown = "def f(n, acc):\n    if n == 0:\n        return acc\n    return f(n - 1, acc + n)\n\ndef main(n):\n    return f(n, 0)\n";
    let mutual = "def f(n):\n    if n == 0:\n        return 0\n    return g(n - 1)\n\ndef g(n):\n    if n == 0:\n        return 1\n    return f(n - 1)\n\ndef main(n):\n    return f(n)\n";
    let forever = "def f(n):\n    return f(n + 1)\n\ndef main(n):\n    return f(n)\n";
    let nesting = "def f(n):\n    return f((n,))\n\ndef main(n):\n    return f(n)\n";
    let looping = "def main(n):\n    s = 0\n    for i in range(n):\n        s += i\n    while n > 0:\n        n -= 1\n    return s\n";
    let limit = "RecursionError: maximum recursion depth exceeded (1000 nested calls)".to_string();
    for engine in [Engine::Compiled, Engine::Reference] {
        assert_eq!(tail_run(countdown, 900, engine), Ok("405450".into()));
        assert_eq!(tail_run(mutual, 901, engine), Ok("1".into()));
        assert_eq!(
            tail_run(looping, 1_000_000, engine),
            Ok("499999500000".into())
        );
        for (src, n) in [
            (countdown, 1100),
            (mutual, 1100),
            (forever, 0),
            (nesting, 0),
        ] {
            let (headline, frames) = tail_run(src, n, engine).expect_err("too deep");
            assert_eq!(headline, limit, "{engine:?}");
            // A line per level, as CPython's traceback (calls the optimizer inlined add a few).
            assert!((1000..1010).contains(&frames), "{engine:?}: {frames}");
        }
    }
}
