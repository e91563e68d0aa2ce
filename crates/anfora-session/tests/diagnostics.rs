//! Every unsupported construct and compile error: exact code, line and column, and that all of
//! them in a file are reported at once.

use anfora_ir::Options;
use anfora_session::Session;

/// (code, line, col) of every diagnostic `anfora check` gives for `src`.
fn check(src: &str) -> Vec<(&'static str, u32, u32)> {
    let mut s = Session::load("t.py", src, Options::default());
    let diags = s.check();
    diags
        .iter()
        .map(|d| {
            let (_, loc) = d.location(&s.frontend.module.sources).expect("a location");
            (d.code, loc.line, loc.col)
        })
        .collect()
}

/// Checks each (source, expected single diagnostic) pair, reporting every mismatch.
fn expect(cases: &[(&str, (&str, u32, u32))]) {
    let mut bad = Vec::new();
    for (src, want) in cases {
        let got = check(src);
        if got.len() != 1 || got[0] != *want {
            bad.push(format!("{src}\n  want {want:?}\n  got  {got:?}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} cases differ:\n{}",
        bad.len(),
        cases.len(),
        bad.join("\n")
    );
}

fn one(src: &str) -> (&'static str, u32, u32) {
    let d = check(src);
    assert_eq!(d.len(), 1, "expected one diagnostic for:\n{src}\ngot {d:?}");
    d[0]
}

#[test]
fn unsupported_statements() {
    expect(&[
        (
            "def f():\n    try:\n        pass\n    except E:\n        pass\n",
            ("E0101", 2, 5),
        ),
        ("def f():\n    class A:\n        pass\n", ("E0102", 2, 11)),
        ("def f():\n    yield 1\n", ("E0103", 2, 5)),
        ("def f():\n    x = yield from g()\n", ("E0103", 2, 9)),
        ("def f():\n    global x\n", ("E0104", 2, 5)),
        // `nonlocal` of a variable no enclosing function assigns, and of one two functions out.
        (
            "def f():\n    def g():\n        nonlocal y\n        y = 2\n    g()\n",
            ("E0104", 3, 18),
        ),
        (
            "def f():\n    z = 0\n    def g():\n        def h():\n            nonlocal z\n            z = 1\n        h()\n    g()\n",
            ("E0104", 5, 22),
        ),
        (
            "def f(n):\n    while n:\n        n -= 1\n    else:\n        pass\n",
            ("E0105", 4, 5),
        ),
        (
            "def f(n):\n    for i in n:\n        pass\n    else:\n        pass\n",
            ("E0105", 4, 5),
        ),
        ("async def f():\n    pass\n", ("E0106", 1, 1)),
        ("def f(c):\n    with c:\n        pass\n", ("E0107", 2, 5)),
        (
            "def f(c):\n    match c:\n        case 1:\n            pass\n",
            ("E0108", 2, 5),
        ),
        ("def f(x):\n    del x\n", ("E0112", 2, 5)),
        ("def f():\n    raise ValueError(1)\n", ("E0113", 2, 5)),
        ("def f():\n    import math\n", ("E0114", 2, 5)),
        ("import numpy as np\n", ("E0114", 1, 8)),
        ("def f(x):\n    f(x)[1] = 1\n", ("E0118", 2, 5)),
        ("X = (1, 2)\nX[0] = 1\n", ("E0118", 2, 1)),
        ("def f(x):\n    a, x.b = 1, 2\n", ("E0118", 2, 8)),
        ("while True:\n    pass\n", ("E0119", 1, 1)),
        ("for i in range(3):\n    pass\n", ("E0119", 1, 1)),
        ("def f():\n    break\n", ("E0123", 2, 5)),
    ]);
}

#[test]
fn unsupported_expressions() {
    expect(&[
        // Starred targets: one per tuple, and a name.
        ("def f(t):\n    a, *b, *c = t\n", ("E0109", 2, 12)),
        ("def f(t, x):\n    a, *x[0] = t\n", ("E0109", 2, 8)),
        ("def f(t):\n    return [x for x in t]\n", ("E0110", 2, 12)),
        (
            "def f(t):\n    return sum(x for x in t)\n",
            ("E0110", 2, 16),
        ),
        ("def f():\n    return {1: 2}\n", ("E0111", 2, 13)),
        ("def f(d):\n    return {'a': 1, 2: d}\n", ("E0111", 2, 21)),
        ("def f():\n    return {1, 2}\n", ("E0111", 2, 12)),
        ("@deco\ndef f():\n    pass\n", ("E0115", 1, 1)),
        (
            "def f(x):\n    if (y := x):\n        return y\n",
            ("E0116", 2, 9),
        ),
        ("def f(x):\n    return f\"{x}\"\n", ("E0117", 2, 12)),
        ("def f():\n    return b\"x\"\n", ("E0120", 2, 12)),
        ("def f():\n    return 1j\n", ("E0120", 2, 12)),
        (
            "def f():\n    return 99999999999999999999\n",
            ("E0120", 2, 12),
        ),
        ("def f(a, b):\n    return a is b\n", ("E0121", 2, 12)),
        // A lone surrogate, at its escape; raw strings and escaped backslashes have none.
        ("def f():\n    return 'ab' 'x\\ud800y'\n", ("E0120", 2, 19)),
        ("def f():\n    return '\\U0000dfff'\n", ("E0120", 2, 13)),
        // CPython's builtins that compiled code lacks, and a call CPython's builtin accepts.
        ("def f(x):\n    return round(x)\n", ("E0124", 2, 12)),
        ("def f(t):\n    return sorted(t)\n", ("E0124", 2, 12)),
        ("def f():\n    return pow(2, 3, 5)\n", ("E0124", 2, 12)),
        ("def f():\n    return len((1,), 2)\n", ("E0203", 2, 12)),
        ("def f():\n    await g()\n", ("E0106", 2, 5)),
    ]);
}

#[test]
fn syntax_errors() {
    let d = check("def f(:\n    return 1\n");
    assert!(!d.is_empty());
    assert!(d.iter().all(|(c, _, _)| *c == "E0001"), "{d:?}");
    assert_eq!((d[0].1, d[0].2), (1, 7));
    assert_eq!(one("type X = int\n").0, "E0002");
}

#[test]
fn compile_errors() {
    expect(&[
        ("def f():\n    return y + 1\n", ("E0201", 2, 12)),
        (
            "def g(a, b):\n    return a\n\ndef f():\n    return g(1)\n",
            ("E0203", 5, 12),
        ),
        ("def f(x):\n    return len(x, 2)\n", ("E0203", 2, 12)),
        (
            "def f(x):\n    return g(x, z=1)\n\ndef g(x, y=2):\n    return x\n",
            ("E0203", 2, 12),
        ),
        (
            "def f(x):\n    e = enumerate(x)\n    return e\n",
            ("E0204", 2, 9),
        ),
        ("def f(x=[1]):\n    return x\n", ("E0205", 1, 9)),
        (
            "from anfora import ops\n\ndef f(x):\n    return ops.nothing(x)\n",
            ("E0206", 4, 12),
        ),
        (
            "from anfora import ops\n\ndef f():\n    return ops\n",
            ("E0207", 4, 12),
        ),
    ]);
}

#[test]
fn module_level_values_must_be_constants() {
    let src = "def make(k):\n    return lambda x: x + k\n\nADD1 = make(1)\n\ndef main():\n    return ADD1(2)\n";
    assert_eq!(one(src), ("E0208", 4, 1));
    // Module-level functions, tensors and nested data are fine.
    let ok = "from anfora import ops\n\ndef f(x):\n    return x\n\nG = f\nT = ops.ones((2,))\nD = ((1, 'a'), [2.5])\n\ndef main():\n    return G(1), T, D\n";
    assert!(check(ok).is_empty(), "{:?}", check(ok));
}

#[test]
fn allowed_closure_patterns_are_not_refused() {
    // Capture of a variable assigned only before the definition.
    assert!(
        check("def f():\n    a = 1\n    def g():\n        return a\n    return g()\n").is_empty()
    );
    // Recursive nested function and adjacent mutually recursive nested functions.
    assert!(check("def f(n):\n    def even(k):\n        return True if k == 0 else odd(k - 1)\n    def odd(k):\n        return False if k == 0 else even(k - 1)\n    return even(n)\n").is_empty());
    // A closure inside a loop reading only loop-invariant values.
    assert!(check("def f(n):\n    t = 0\n    k = 3\n    for i in range(n):\n        g = lambda x: x * k\n        t = t + g(i)\n    return t\n").is_empty());
    // Closures only called by name: late binding by passing the current value, and
    // `nonlocal` by returning the new one.
    for src in [
        "def f():\n    a = 1\n    def g():\n        return a\n    a = 2\n    return g()\n",
        "def f(n):\n    t = 0\n    for i in range(n):\n        g = lambda x: x + i\n        t += g(1)\n    return t\n",
        "def f(n):\n    j = 0\n    while j < n:\n        g = lambda: j\n        j += 1\n        n = n + g()\n    return n\n",
        "def f():\n    c = 0\n    def inc():\n        nonlocal c\n        c += 1\n    inc()\n    inc()\n    return c\n",
        // Closures that escape (returned, stored, passed) share the variable through a cell.
        "def f():\n    a = 1\n    def g():\n        return a\n    a = 2\n    return g\n",
        "def f():\n    a = 1\n    g = lambda: a\n    h = g\n    a = 2\n    return h()\n",
        "def f():\n    fs = ()\n    for i in range(3):\n        fs = fs + (lambda: i,)\n    return fs[0]()\n",
        "def f():\n    x = 1\n    def g():\n        nonlocal x\n        x = 2\n    return g\n",
    ] {
        assert!(check(src).is_empty(), "{src}: {:?}", check(src));
    }
}

#[test]
fn strings_without_surrogates_and_the_smallest_int_compile() {
    for src in [
        "def f():\n    return r'\\ud800' + '\\\\ud800' + '\\ue000'\n",
        "def f():\n    return -9223372036854775808\n",
    ] {
        assert_eq!(check(src), vec![], "{src}");
    }
}

#[test]
fn every_problem_in_a_file_is_reported_at_once() {
    let src = "\
import os
def f(x):
    try:
        pass
    finally:
        pass
    return [y for y in x]

def g():
    with open('a') as h:
        pass
    return undefined_name

class C:
    pass
";
    let got: Vec<&str> = check(src).iter().map(|d| d.0).collect();
    assert_eq!(
        got,
        vec!["E0114", "E0101", "E0110", "E0107", "E0102", "E0201"]
    );
}

#[test]
fn rendered_diagnostics_show_file_line_source_underline_and_hint() {
    let mut s = Session::load(
        "prog.py",
        "def main():\n    x = 1\n    try:\n        pass\n    except E:\n        pass\n",
        Options::default(),
    );
    let diags = s.check();
    let text = anfora_ir::diag::render_all(&diags, &s.frontend.module.sources);
    assert!(
        text.contains("error[E0101]: `try` statements are not supported in compiled code"),
        "{text}"
    );
    assert!(text.contains("[prog.py:3:5]"), "{text}");
    assert!(text.contains(" 3 │     try:"), "{text}");
    assert!(text.contains("───"), "{text}");
    assert!(
        text.contains("help: exceptions cannot be caught inside compiled code"),
        "{text}"
    );
    assert!(text.contains("error: could not compile: 1 error"), "{text}");
}
