//! Golden `.ir` dumps of the seed programs (MindSpore's documentation examples), and their
//! values. Names and numbering are deterministic, so the text is stable.

mod common;

use anfora_driver::{Session, repr};
use anfora_vm::{Options, Value};
use common::root;

fn session(file: &str) -> Session {
    let path = root().join("tests/corpus").join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    Session::load(file, &text, Options::default())
}

fn dump(file: &str, entry: &str) -> String {
    let mut s = session(file);
    let g = s
        .compile(entry)
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    let text = anfora_ir::print::print_module(&s.frontend.module, g);
    assert_eq!(
        text,
        anfora_ir::print::print_module(&s.frontend.module, g),
        "deterministic"
    );
    text
}

fn call(file: &str, entry: &str, args: Vec<Value>) -> String {
    let mut s = session(file);
    let v = s
        .run(entry, args, &mut std::io::sink())
        .unwrap_or_else(|f| panic!("{}", s.render(&f)));
    repr(&v)
}

#[test]
fn seed_test_f() {
    insta::assert_snapshot!(dump("seed_test_f.py", "test_f"));
    assert_eq!(
        call(
            "seed_test_f.py",
            "test_f",
            vec![Value::Float(2.0), Value::Float(3.0)]
        ),
        "1.0"
    );
}

#[test]
fn seed_hof() {
    insta::assert_snapshot!(dump("seed_hof.py", "hof"));
    assert_eq!(call("seed_hof.py", "hof", vec![Value::Int(2)]), "25");
}

#[test]
fn seed_fibonacci() {
    insta::assert_snapshot!(dump("seed_fibonacci.py", "fibonacci"));
    assert_eq!(
        call("seed_fibonacci.py", "fibonacci", vec![Value::Int(10)]),
        "55"
    );
}

#[test]
fn seed_closure() {
    insta::assert_snapshot!(dump("seed_closure.py", "ms_closure"));
    assert_eq!(call("seed_closure.py", "ms_closure", vec![]), "(4, 5)");
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
