//! Golden `.ir` dumps of the seed programs (MindSpore's documentation examples), and their
//! values. Names and numbering are deterministic, so the text is stable.

mod common;

use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Session, repr};
use common::root;

fn session(file: &str) -> Session {
    let path = root().join("tests/corpus").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    Session::load(file, &text, Options::default())
}

/// The `.ir` text after each stage of the pipeline (parse, resolve, infer, optimize, lower),
/// compiled for `args`.
fn stages(file: &str, entry: &str, args: &[Arg]) -> Vec<(String, String)> {
    let mut s = session(file);
    let mut out = Vec::new();
    s.compile_pipeline(entry, Some(args), &mut |view| {
        if ["parse", "resolve", "infer", "optimize", "lower"].contains(&view.stage) {
            out.push((view.stage.to_string(), view.ir()));
        }
    })
    .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    let again = {
        let mut s = session(file);
        let mut texts = Vec::new();
        s.compile_pipeline(entry, Some(args), &mut |view| {
            if view.stage == "lower" {
                texts.push(view.ir());
            }
        })
        .unwrap();
        texts
    };
    assert_eq!(again.last(), out.last().map(|(_, t)| t), "deterministic");
    out
}

fn assert_stages(name: &str, file: &str, entry: &str, args: &[Arg]) {
    let stages = stages(file, entry, args);
    let names: Vec<&str> = stages.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(names, ["parse", "resolve", "infer", "optimize", "lower"]);
    for (stage, text) in stages {
        insta::assert_snapshot!(format!("{name}_{stage}"), text);
    }
}

/// Calls `entry` on the compiled engine and on the reference VM; both must agree.
fn call(file: &str, entry: &str, args: Vec<Arg>) -> String {
    let mut results = Vec::new();
    for engine in [Engine::Compiled, Engine::Reference] {
        let mut s = session(file);
        s.engine = engine;
        let v = s
            .call(entry, args.clone(), &mut std::io::sink())
            .unwrap_or_else(|f| panic!("{}", s.render(&f)));
        results.push(repr(&v));
    }
    assert_eq!(results[0], results[1], "compiled vs reference engine");
    results.pop().unwrap()
}

#[test]
fn seed_test_f() {
    let args = [
        Arg::mutable(Value::Float(2.0)),
        Arg::mutable(Value::Float(3.0)),
    ];
    assert_stages("seed_test_f", "seed_test_f.py", "test_f", &args);
    assert_eq!(call("seed_test_f.py", "test_f", args.to_vec()), "1.0");
    // With constant arguments the whole function folds to its value.
    let constant = [Arg::from(Value::Float(2.0)), Arg::from(Value::Float(3.0))];
    let optimized = stages("seed_test_f.py", "test_f", &constant)
        .into_iter()
        .find(|(s, _)| s == "optimize")
        .unwrap()
        .1;
    assert!(optimized.contains("Return(F64(1.0))"), "{optimized}");
    assert_eq!(call("seed_test_f.py", "test_f", constant.to_vec()), "1.0");
}

#[test]
fn seed_hof() {
    let args = [Arg::mutable(Value::Int(2))];
    assert_stages("seed_hof", "seed_hof.py", "hof", &args);
    assert_eq!(call("seed_hof.py", "hof", args.to_vec()), "25");
}

#[test]
fn seed_fibonacci() {
    let args = [Arg::mutable(Value::Int(10))];
    assert_stages("seed_fibonacci", "seed_fibonacci.py", "fibonacci", &args);
    assert_eq!(call("seed_fibonacci.py", "fibonacci", args.to_vec()), "55");
}

#[test]
fn seed_closure() {
    assert_stages("seed_closure", "seed_closure.py", "ms_closure", &[]);
    assert_eq!(call("seed_closure.py", "ms_closure", vec![]), "(4, 5)");
}

#[test]
fn seed_mains_print_the_same_on_both_engines() {
    for file in [
        "seed_test_f.py",
        "seed_hof.py",
        "seed_fibonacci.py",
        "seed_closure.py",
    ] {
        let mut outputs = Vec::new();
        for engine in [Engine::Compiled, Engine::Reference] {
            let mut s = session(file);
            s.engine = engine;
            let mut out = Vec::new();
            let v = s.call("main", vec![], &mut out).unwrap();
            outputs.push(format!("{}{}", String::from_utf8(out).unwrap(), repr(&v)));
        }
        assert_eq!(outputs[0], outputs[1], "{file}");
    }
}

#[test]
fn dot_dump_of_every_seed_renders_with_graphviz() {
    for (file, entry) in [
        ("seed_test_f.py", "test_f"),
        ("seed_hof.py", "hof"),
        ("seed_fibonacci.py", "fibonacci"),
        ("seed_closure.py", "ms_closure"),
    ] {
        let mut s = session(file);
        let g = s.compile(entry).unwrap();
        let dot = anfora_ir::dot::to_dot(&s.frontend.module, g);
        let mut child = std::process::Command::new("dot")
            .arg("-Tsvg")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("graphviz `dot` must be installed (scripts/setup.sh installs it)");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(dot.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "dot failed on {file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let svg = String::from_utf8(out.stdout).unwrap();
        assert!(
            svg.contains("<svg") && svg.contains(&format!("@{entry}")),
            "{file}"
        );
    }
}
