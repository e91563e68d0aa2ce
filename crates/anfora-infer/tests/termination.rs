//! Inference terminates on every program: a recursion whose result (or argument) would nest
//! tuples or lists without bound is E0305 at the recursive call, found at once;
//! recursions with a finite type compile and run as before; specializations stay bounded when
//! arguments grow.

mod common;

use std::time::{Duration, Instant};

use anfora_ir::Options;
use anfora_ir::diag::Diagnostic;
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Failure, Session, repr};
use common::*;

/// A guard against a hang, not a performance bound: inference takes milliseconds here, and
/// before it terminated on every program it ran forever.
const LIMIT: Duration = Duration::from_secs(60);

/// `try_infer`, checking that it finished within `LIMIT`.
fn timed(
    src: &str,
    entry: &str,
    args: &[Arg],
) -> Result<Inferred, Box<(Session, Vec<Diagnostic>)>> {
    let start = Instant::now();
    let r = try_infer(src, entry, args);
    let took = start.elapsed();
    assert!(took < LIMIT, "inference took {took:?}:\n{src}");
    r
}

/// The one diagnostic of a program that must fail: (code, message, line, col), and the report.
fn unbounded(src: &str, entry: &str, args: &[Arg]) -> ((&'static str, String, u32, u32), String) {
    let (s, ds) = match timed(src, entry, args) {
        Ok(i) => panic!("inference succeeded:\n{}", i.ir()),
        Err(e) => *e,
    };
    single(&s, &ds)
}

/// Inference of a program that must compile, within `LIMIT`.
fn finite(src: &str, entry: &str, args: &[Arg]) -> Inferred {
    match timed(src, entry, args) {
        Ok(i) => i,
        Err(e) => {
            let (s, d) = *e;
            panic!("inference failed:\n{}", s.render(&Failure::Compile(d)))
        }
    }
}

/// `(source, entry, args, (message, line, col))`: a program whose inference gives one E0305.
type Case<'a> = (&'a str, &'a str, Vec<Arg>, (String, u32, u32));

fn message(subject: &str, what: &str) -> String {
    format!("{subject} nests {what} without bound: CPython would recurse until RecursionError")
}

// ---- E0305 ----------------------------------------------------------------------------------

#[test]
fn a_result_that_holds_itself() {
    let src = "def f(n):\n    return (f(n),)\n\ndef main():\n    return f(1)\n";
    let ((code, msg, line, col), text) = unbounded(src, "main", &[]);
    assert_eq!(code, "E0305");
    assert_eq!(msg, message("the result of 'f'", "tuples"));
    assert_eq!((line, col), (2, 13));
    assert_eq!(
        text,
        "  × error[E0305]: the result of 'f' nests tuples without bound: CPython would recurse until
  │ RecursionError
   ╭─[model.py:2:13]
 1 │ def f(n):
 2 │     return (f(n),)
   ·             ──┬─
   ·               ╰── a recursive call that never returns
 3 │ 
   ╰────
  help: give 'f' a base case, a path that returns without recursing (as `return 0 if n == 0 else
        (f(n - 1),)` does)
  note: called from model.py:2:13 in f
  note: called from model.py:5:12 in main

error: could not compile: 1 error
"
    );
}

#[test]
fn results_and_arguments_that_nest_without_bound() {
    let result = |f: &str, what: &str| message(&format!("the result of '{f}'"), what);
    let cases: Vec<Case> = vec![
        // A list.
        (
            "def f(n):\n    return [f(n)]\n\ndef main():\n    return f(1)\n",
            "main",
            vec![],
            (result("f", "lists"), 2, 13),
        ),
        // A string argument (each call gets another string, all broadened to one).
        (
            "def is_pal(s):\n    return (is_pal(s[1:-1]), 1)\n\ndef main():\n    return is_pal('noon')\n",
            "main",
            vec![],
            (result("is_pal", "tuples"), 2, 13),
        ),
        // The entry itself, with a value known only at run time.
        (
            "def f(n):\n    return (f(n - 1),)\n",
            "f",
            vec![mint(3)],
            (result("f", "tuples"), 2, 13),
        ),
        // Mutual recursion: one error for the two functions, naming both kinds.
        (
            "def f(n):\n    return (g(n),)\n\ndef g(n):\n    return [f(n)]\n\ndef main():\n    return f(1)\n",
            "main",
            vec![],
            (result("f", "tuples and lists"), 2, 13),
        ),
        // The result is held through a variable, many times over.
        (
            "def f(n):\n    r = f(n)\n    return (r, r, r, r, r, r, r, r, r, r)\n\ndef main():\n    return f(1)\n",
            "main",
            vec![],
            (result("f", "tuples"), 2, 9),
        ),
        // Through operations: the tuple also gets wider every round.
        (
            "def f(n):\n    return (f(n) * 1000,)\n\ndef main():\n    return f(1)\n",
            "main",
            vec![],
            (result("f", "tuples"), 2, 13),
        ),
        (
            "def f(n):\n    r = f(n)\n    return (r[1], (r[0],))\n\ndef main():\n    return f(1)\n",
            "main",
            vec![],
            (result("f", "tuples"), 2, 9),
        ),
        // A lambda calling the function that defines it.
        (
            "def f(n):\n    g = lambda: (f(n),)\n    return g()\n\ndef main():\n    return f(1)\n",
            "main",
            vec![],
            (result("<lambda>", "tuples"), 2, 18),
        ),
        // Where the branches of an `if` join, and a value a loop carries.
        (
            "def f(n):\n    if n > 0:\n        x = (f(n),)\n    else:\n        x = (f(n - 1),)\n    return x\n\ndef main():\n    return f(1)\n",
            "main",
            vec![],
            (message("'x' in 'f'", "tuples"), 5, 14),
        ),
        (
            "def f(n):\n    x = [f(n)]\n    while n > 0:\n        x = [x]\n    return x\n",
            "f",
            vec![mint(1)],
            (message("'x' in 'f'", "lists"), 2, 10),
        ),
    ];
    let mut bad = Vec::new();
    for (src, entry, args, (msg, line, col)) in &cases {
        let want = ("E0305", msg.as_str(), *line, *col);
        compare_diagnostic(&mut bad, src, want, unbounded(src, entry, args).0);
    }
    assert_no_differences(&bad);
}

#[test]
fn the_reference_engine_still_raises_recursion_error() {
    // The oracle runs the program as written: RecursionError, as CPython.
    let src = "def f(n):\n    return (f(n),)\n\ndef main():\n    return f(1)\n";
    let mut s = Session::load(FILE, src, Options { max_depth: 200 });
    s.engine = Engine::Reference;
    match s.call("main", vec![], &mut std::io::sink()) {
        Err(Failure::Runtime(e)) => {
            assert_eq!(e.kind, "RecursionError");
            let (_, loc) = s.frontend.module.sources.location(e.span).unwrap();
            assert_eq!((loc.line, loc.col), (2, 13));
        }
        Err(f) => panic!("{}", s.render(&f)),
        Ok(v) => panic!("returned {}", repr(&v)),
    }
}

// ---- recursions with a finite type ------------------------------------------------------------

#[test]
fn nested_tuples_of_a_depth_the_argument_gives() {
    let src = "def f(n):\n    return 0 if n == 0 else (f(n - 1),)\n";
    // A constant argument and one known only at run time compile, and return what CPython does.
    for arg in [int(5), mint(5)] {
        finite(src, "f", std::slice::from_ref(&arg));
        assert_eq!(repr(&run(src, "f", vec![arg])), "(((((0,),),),),)");
    }
    // The depth varies with `n`: its type is known only at run time.
    assert_eq!(finite(src, "f", &[mint(5)]).result().to_string(), "<Any>");
    assert_eq!(repr(&run(src, "f", vec![mint(0)])), "0");
    // Each level built by a loop, below a recursion not yet returned in the analysis's first
    // round: the loop's tuple holds it for a round, then the recursion's result.
    let src = "def f(n):\n    if n == 0:\n        return 0\n    x = (f(n - 1),)\n    i = 0\n    while i < 2:\n        x = (x,)\n        i = i + 1\n    return x\n";
    assert_eq!(repr(&run(src, "f", vec![mint(1)])), "(((0,),),)");
    assert_eq!(repr(&run(src, "f", vec![int(2)])), "((((((0,),),),),),)");
    // Mutual recursion through a tuple and a list.
    let src =
        "def f(n):\n    return 0 if n == 0 else (g(n - 1),)\n\ndef g(n):\n    return [f(n)]\n";
    finite(src, "f", &[mint(2)]);
    assert_eq!(repr(&run(src, "f", vec![mint(2)])), "([([0],)],)");
    // A closure that captures a growing value.
    let src = "def f(g, n):\n    if n == 0:\n        return g()\n    return f(lambda: (g(),), n - 1)\n\ndef main(n):\n    return f(lambda: 0, n)\n";
    finite(src, "main", &[mint(3)]);
    assert_eq!(repr(&run(src, "main", vec![mint(3)])), "(((0,),),)");
}

#[test]
fn a_tuple_that_always_raises_is_not_a_recursion() {
    // The tuple is never built (1 // 0 raises first), but not because of the recursion: it
    // compiles, and raises at run time as CPython does.
    let src = "def f(n):\n    return (1 // 0, f(n - 1)) if n > 0 else 0\n";
    finite(src, "f", &[mint(2)]);
    assert_eq!(repr(&run(src, "f", vec![mint(0)])), "0");
    let mut s = load(src);
    match s.call("f", vec![mint(2)], &mut std::io::sink()) {
        Err(Failure::Runtime(e)) => assert_eq!(e.kind, "ZeroDivisionError"),
        Err(f) => panic!("{}", s.render(&f)),
        Ok(v) => panic!("returned {}", repr(&v)),
    }
}

// ---- specializations stay bounded as arguments grow ---------------------------------------------

#[test]
fn growing_arguments_get_one_specialization_for_the_recursion() {
    // Each call gets a new constant, a longer string or a deeper tuple: the recursive calls
    // share one specialization for the argument's type (and the entry keeps its constant).
    for src in [
        "def f(n):\n    return f(n + 1)\n\ndef main():\n    return f(1)\n",
        "def f(s):\n    return f(s + 'a')\n\ndef main():\n    return f('x')\n",
        "def f(n):\n    return f((n,))\n\ndef main():\n    return f(1)\n",
        "def f(n):\n    return f([n, n])\n\ndef main():\n    return f(1)\n",
        "def f(x):\n    return f(lambda: x)\n\ndef main():\n    return f(1)\n",
    ] {
        let i = finite(src, "main", &[]);
        assert_eq!(i.functions_named("f").len(), 2, "{src}\n{}", i.ir());
    }
    // Mutual recursion with growing arguments.
    let src = "def f(n):\n    return g(n + 'a')\n\ndef g(n):\n    return f(n + 'b')\n\ndef main():\n    return f('')\n";
    let i = finite(src, "main", &[]);
    assert!(i.functions_named("f").len() <= 2, "{}", i.ir());
    assert!(i.functions_named("g").len() <= 2, "{}", i.ir());
    // The values themselves are Python's (the recursion above never ends; this one does).
    let src = "def f(s, n):\n    return s if n == 0 else f(s + 'a', n - 1)\n";
    assert_eq!(
        repr(&run(
            src,
            "f",
            vec![Arg::from(Value::Str("x".into())), int(3)]
        )),
        "'xaaa'"
    );
}
