//! Workloads shared by the benchmarks in `benches/benches/` (run with `cargo bench -p
//! anfora-benches`). Each is a Python source the benchmarks compile or run.

/// A function of 50 straight-line statements mixing scalar arithmetic.
pub fn straight_line_50() -> String {
    let mut src = String::from("def f(x, y):\n    a0 = x + y\n");
    for i in 1..50 {
        let op = ["+", "-", "*", "/"][i % 4];
        let rhs = if i % 3 == 0 { "x" } else { "y" };
        src.push_str(&format!("    a{i} = a{} {op} {rhs}\n", i - 1));
    }
    src.push_str("    return a49\n");
    src
}

/// A while loop of 10 iterations whose body holds an if/else and 20 arithmetic operations.
pub fn loop_with_branches() -> String {
    let mut src = String::from(
        "def f(x, y):\n    i = 0\n    acc = x\n    while i < 10:\n        if acc > y:\n",
    );
    for k in 0..10 {
        src.push_str(&format!("            acc = acc * 0.5 + {k}.0\n"));
    }
    src.push_str("        else:\n");
    for k in 0..10 {
        src.push_str(&format!("            acc = acc * 1.5 - {k}.0\n"));
    }
    src.push_str("        i = i + 1\n    return acc\n");
    src
}

/// A scalar while loop: `main(n)` sums `i * 2 + 1` for `i < n`.
pub const SCALAR_LOOP: &str = "def main(n):\n    i = 0\n    s = 0\n    while i < n:\n        s = s + i * 2 + 1\n        i = i + 1\n    return s\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_compile_and_run() {
        for (src, entry) in [(straight_line_50(), "f"), (loop_with_branches(), "f")] {
            let mut s = anfora_driver::Session::load("w.py", &src, anfora_vm::Options::default());
            let v = s
                .run(
                    entry,
                    vec![anfora_vm::Value::Float(1.5), anfora_vm::Value::Float(2.0)],
                    &mut std::io::sink(),
                )
                .unwrap_or_else(|f| panic!("{}", s.render(&f)));
            assert!(matches!(v, anfora_vm::Value::Float(_)));
        }
        let lines = straight_line_50().lines().count();
        assert_eq!(lines, 52, "def + 50 statements + return");
        let mut s =
            anfora_driver::Session::load("w.py", SCALAR_LOOP, anfora_vm::Options::default());
        let v = s
            .run(
                "main",
                vec![anfora_vm::Value::Int(1000)],
                &mut std::io::sink(),
            )
            .unwrap();
        assert_eq!(anfora_driver::repr(&v), "1000000");
    }
}
