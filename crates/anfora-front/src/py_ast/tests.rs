use super::*;

fn parse(src: &str) -> (Module, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let m = parse_module(
        src,
        FileId(0),
        crate::py_ast::Sink {
            diags: &mut diags,
            placements: &mut Vec::new(),
        },
    );
    (m, diags)
}

#[test]
fn converts_supported_code_without_diagnostics() {
    let (m, d) = parse(
        "from anfora import ops\nimport anfora as af\nN = 3\n\ndef f(x, y=2, *, k=1):\n    a, (b, c) = x, (y, 3)\n    while a < N:\n        a += 1\n        if a == 2:\n            continue\n        elif a > 5:\n            break\n        else:\n            pass\n    return lambda z: z + a if b else -c\n\nif __name__ == \"__main__\":\n    print(f(1))\n",
    );
    assert!(d.is_empty(), "{d:?}");
    assert_eq!(m.body.len(), 5);
    assert!(matches!(m.body[4].kind, StmtKind::MainGuard));
    let StmtKind::FunctionDef(f) = &m.body[3].kind else {
        panic!()
    };
    assert_eq!(f.params.len(), 3);
    assert_eq!(f.params[2].kind, ParamKind::KeywordOnly);
}

#[test]
fn reports_every_unsupported_construct() {
    let (_, d) = parse(
        "def f(*a):\n    b, *c, *d = a\n    try:\n        pass\n    except E:\n        pass\n    with x:\n        pass\n    for i in y:\n        pass\n    else:\n        pass\n    g = (i for i in x)\n    global q\n    f(x)[1] = 1\n    return {1: 2}\n",
    );
    let codes: Vec<&str> = d.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        vec![
            "E0109", "E0101", "E0107", "E0105", "E0110", "E0104", "E0118", "E0111"
        ]
    );
}

#[test]
fn syntax_errors_are_reported() {
    let (m, d) = parse("def f(:\n    return 1\n");
    assert!(m.body.is_empty());
    assert!(d.iter().all(|d| d.code == codes::SYNTAX));
    assert!(!d.is_empty());
}

#[test]
fn newer_syntax_is_refused() {
    let (_, d) = parse("type X = int\n");
    assert!(d.iter().any(|d| d.code == codes::SYNTAX_VERSION), "{d:?}");
}

#[test]
fn literals_parse_like_literal_eval() {
    assert_eq!(parse_literal("-3").unwrap().to_string(), "I64(-3)");
    assert_eq!(
        parse_literal("(1, 'a', [2.5, None])").unwrap().to_string(),
        "(I64(1), \"a\", [F64(2.5), None])"
    );
    assert!(parse_literal("x + 1").is_err());
    assert!(parse_literal("99999999999999999999").is_err());
}
