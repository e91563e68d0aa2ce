//! The `anfora` command: output, exit status and files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn anfora(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anfora"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run anfora")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// This binary's scratch folder, under the target's (so nothing accumulates in the system's
/// temp folder).
fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("anfora-cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn temp(name: &str, text: &str) -> PathBuf {
    let p = scratch().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn run_prints_output_then_the_repr_of_the_result() {
    let o = anfora(&["run", "examples/demo.py"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("step 0 mean True\n"), "{out}");
    assert!(
        out.ends_with("(Tensor([ 1.,  8., 27.], dtype=float32), (2,), anfora.float32)\n"),
        "{out}"
    );
}

#[test]
fn arguments_are_python_literals_and_lists_become_tensors() {
    let p = temp(
        "args.py",
        "def main(a, b, c, t, s=None):\n    return a + b, c, t * 2, s\n",
    );
    let o = anfora(&[
        "run",
        p.to_str().unwrap(),
        "1",
        "-2.5",
        "(1, 'x')",
        "[[1, 2], [3, 4]]",
        "'hi'",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "(-1.5, (1, 'x'), Tensor([[2, 4],\n        [6, 8]]), 'hi')\n"
    );
    let o = anfora(&[
        "run",
        p.to_str().unwrap(),
        "--entry",
        "main",
        "1",
        "2",
        "3",
        "[1.5]",
    ]);
    assert_eq!(stdout(&o), "(3, 3, Tensor([3.], dtype=float32), None)\n");
}

#[test]
fn a_bad_argument_is_a_usage_error() {
    let p = temp("bad_arg.py", "def main(x):\n    return x\n");
    let o = anfora(&["run", p.to_str().unwrap(), "x + 1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("argument `x + 1`: not a Python literal"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn compile_errors_go_to_stderr_with_exit_1() {
    let p = temp(
        "bad.py",
        "def main():\n    try:\n        pass\n    except E:\n        pass\n    return [x for x in y]\n",
    );
    let o = anfora(&["run", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).is_empty());
    let err = stderr(&o);
    assert!(err.contains("error[E0101]"), "{err}");
    assert!(err.contains("error[E0110]"), "{err}");
    assert!(err.contains("bad.py:2:5"), "{err}");
    assert!(err.contains("could not compile: 2 errors"), "{err}");
}

#[test]
fn runtime_errors_go_to_stderr_with_exit_1() {
    let p = temp(
        "div.py",
        "def main():\n    print('start')\n    return 1 / 0\n",
    );
    let o = anfora(&["run", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "start\n");
    let err = stderr(&o);
    assert!(err.contains("ZeroDivisionError: division by zero"), "{err}");
    assert!(err.contains("div.py:3:12"), "{err}");
}

#[test]
fn check_lists_every_problem() {
    let p = temp(
        "check.py",
        "def f():\n    with a:\n        pass\n\ndef g():\n    global x\n    return undefined\n",
    );
    let o = anfora(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    for code in ["E0107", "E0104", "E0201"] {
        assert!(
            err.contains(&format!("error[{code}]")),
            "{code} missing:\n{err}"
        );
    }
    let o = anfora(&["check", "examples/demo.py"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("no problems found"));
}

#[test]
fn dump_writes_ir_and_dot() {
    let o = anfora(&[
        "dump",
        "tests/corpus/seed_fibonacci.py",
        "--entry",
        "fibonacci",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ir = stdout(&o);
    assert!(
        ir.starts_with("# IR entry: @fibonacci\n# Total subgraphs: 5\n"),
        "{ir}"
    );
    assert!(ir.contains("Switch(%1, @✓fibonacci, @✗fibonacci)"), "{ir}");
    let out = scratch().join("fibonacci.dot");
    let o = anfora(&[
        "dump",
        "tests/corpus/seed_fibonacci.py",
        "--entry",
        "fibonacci",
        "--format",
        "dot",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dot = std::fs::read_to_string(&out).unwrap();
    assert!(dot.starts_with("digraph anfora {"));
    assert!(dot.contains("label=\"@✗✗fibonacci\""));
}

#[test]
fn unreadable_files_and_missing_entries_are_clear_errors() {
    let o = anfora(&["run", "does/not/exist.py"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("error: cannot read does/not/exist.py"),
        "{}",
        stderr(&o)
    );
    let p = temp("binary.py", "");
    std::fs::write(&p, [0xffu8, 0xfe, 0x00]).unwrap();
    let o = anfora(&["run", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(":1:1: not valid UTF-8 text (byte 0xff)"),
        "{}",
        stderr(&o)
    );
    let p = temp("noentry.py", "def f():\n    return 1\n");
    let o = anfora(&["run", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no function named 'main'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn main_guard_is_ignored_so_files_also_run_under_cpython() {
    let p = temp(
        "guard.py",
        "import anfora\n\ndef main():\n    return 7\n\nif __name__ == \"__main__\":\n    print(main())\n",
    );
    let o = anfora(&["run", p.to_str().unwrap()]);
    assert_eq!(stdout(&o), "7\n");
}

#[test]
fn deeply_nested_expressions_do_not_crash() {
    let expr = format!("{}1{}", "(".repeat(3000), ")".repeat(3000));
    let p = temp("deep.py", &format!("def main():\n    return {expr}\n"));
    let o = anfora(&["run", p.to_str().unwrap()]);
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{:?} {}",
        o.status,
        stderr(&o)
    );
    let sum = format!("def main():\n    return {}\n", vec!["1"; 20000].join(" + "));
    let p = temp("long.py", &sum);
    let o = anfora(&["run", p.to_str().unwrap()]);
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{:?} {}",
        o.status,
        stderr(&o)
    );
    if o.status.success() {
        assert_eq!(stdout(&o), "20000\n");
    }
}

#[test]
fn tensors_larger_than_memory_are_a_memory_error() {
    for (src, want) in [
        (
            "from anfora import ops\ndef main():\n    return ops.zeros((2**40, 2**40))\n",
            "ValueError: array is too big",
        ),
        (
            "from anfora import ops\ndef main():\n    a = ops.ones((2**21, 1))\n    b = ops.ones((1, 2**21))\n    return (a + b)[0, 0]\n",
            "MemoryError: cannot allocate 16.0 TiB",
        ),
    ] {
        let p = temp("mem.py", src);
        let o = anfora(&["run", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
}

#[test]
fn dump_all_writes_one_numbered_file_per_stage() {
    let dir = scratch().join("stages");
    let _ = std::fs::remove_dir_all(&dir);
    for format in ["ir", "dot"] {
        let o = anfora(&[
            "dump",
            "tests/corpus/seed_fibonacci.py",
            "--entry",
            "fibonacci",
            "--stage",
            "all",
            "--format",
            format,
            "-o",
            dir.to_str().unwrap(),
            "mutable(10)",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ir"))
        .collect();
    names.sort();
    assert_eq!(names.first().map(String::as_str), Some("00_parse.ir"));
    assert_eq!(names.get(1).map(String::as_str), Some("01_resolve.ir"));
    assert_eq!(names.get(2).map(String::as_str), Some("02_grad.ir"));
    assert_eq!(names.get(3).map(String::as_str), Some("03_infer.ir"));
    let last = names.last().unwrap();
    assert!(last.ends_with("_lower.ir"), "{names:?}");
    assert!(
        names.iter().any(|n| n.ends_with("_optimize.ir")),
        "{names:?}"
    );
    // Every optimizer pass that ran has its own file between infer and optimize.
    assert!(names.len() > 5, "{names:?}");
    let infer = std::fs::read_to_string(dir.join("03_infer.ir")).unwrap();
    assert!(
        infer.contains(": <Int64>"),
        "abstracts are printed: {infer}"
    );
    let lower = std::fs::read_to_string(dir.join(last)).unwrap();
    assert!(lower.starts_with("# program: 1 units"), "{lower}");
    let dot = std::fs::read_to_string(dir.join(last.replace(".ir", ".dot"))).unwrap();
    assert!(dot.starts_with("digraph program {"), "{dot}");
    // A single stage goes to standard output.
    let o = anfora(&[
        "dump",
        "tests/corpus/seed_fibonacci.py",
        "--entry",
        "fibonacci",
        "--stage",
        "lower",
        "mutable(10)",
    ]);
    assert!(stdout(&o).contains("= call @fibonacci"), "{}", stdout(&o));
    let o = anfora(&["dump", "tests/corpus/seed_fibonacci.py", "--stage", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "unknown stage 'nope' (parse, resolve, grad, infer, auto_monad, optimize, lower or all)"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn timings_and_compile_explanations_go_to_stderr() {
    let p = temp("timed.py", "def main(n):\n    return n * 2\n");
    let o = anfora(&[
        "run",
        p.to_str().unwrap(),
        "--timings",
        "--explain-compile",
        "mutable(21)",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "42\n");
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines[0], "compiling 'main' for (<Int64>): first call",
        "{err}"
    );
    let stage_names: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(
        stage_names,
        [
            "parse",
            "resolve",
            "grad",
            "infer",
            "auto_monad",
            "optimize",
            "lower",
            "compile total",
            "run"
        ],
        "{err}"
    );
    for line in &lines[1..] {
        let (_, value) = line.split_once(": ").unwrap();
        let ms = value
            .strip_suffix(" ms")
            .unwrap_or_else(|| panic!("{line}"));
        assert!(ms.parse::<f64>().unwrap() >= 0.0, "{line}");
    }
    // Without the flags, stderr stays empty.
    let o = anfora(&["run", p.to_str().unwrap(), "2"]);
    assert_eq!(stderr(&o), "");
    assert_eq!(stdout(&o), "4\n");
}

/// `examples/train_mlp.py` (issue 6's W1 example) trains from the CLI: three epochs of four
/// compiled steps each, a progress line per epoch, and the loss falls.
#[test]
fn the_mlp_example_trains_from_the_cli() {
    let o = anfora(&["run", "examples/train_mlp.py", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let losses: Vec<f64> = out
        .lines()
        .filter(|l| l.starts_with("epoch "))
        .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(losses.len(), 3, "{out}");
    assert!(losses[0] > losses[1] && losses[1] > losses[2], "{out}");
    assert!(out.contains("epoch 3 [####################] loss"), "{out}");
    assert!(out.ends_with("True\n"), "{out}");
}

#[test]
fn devices_lists_the_cpu_and_run_refuses_a_device_without_a_backend() {
    let o = anfora(&["devices"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("cpu\tcpu: "), "{out}");
    assert!(out.contains(" threads, SIMD "), "{out}");

    let src = temp("device.py", "def main(x):\n    return x * 2\n");
    let file = src.to_str().unwrap();
    let o = anfora(&["run", file, "--device", "cpu", "21"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "42\n");
    let o = anfora(&["run", file, "--device", "cuda:1", "21"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: no backend is registered for device 'cuda:1' (available: cpu)\n"
    );
    let o = anfora(&["run", file, "--device", "npu", "21"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: unknown device 'npu': expected 'cpu', 'cuda' or 'cuda:N' (N a device index)\n"
    );
}

#[test]
fn output_that_cannot_be_written_is_exit_1_not_an_abort() {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for (args, stdout_full) in [
        (&["run", "missing.py"][..], false),
        (&["run", "examples/demo.py"][..], true),
        (&["check", "examples/demo.py"][..], true),
        (&["devices"][..], true),
    ] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_anfora"));
        cmd.args(args).current_dir(root()).stderr(full());
        if stdout_full {
            cmd.stdout(full());
        }
        let o = cmd.output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{args:?}");
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_anfora"));
    let o = cmd
        .args(["run", "examples/demo.py"])
        .current_dir(root())
        .stdout(full())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("error: cannot write to standard output: No space left on device"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn dump_refuses_to_overwrite_its_own_source() {
    let text = "def main():\n    return 1\n";
    let p = temp("own.py", text);
    let o = anfora(&["dump", p.to_str().unwrap(), "-o", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is the source file itself"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
}

#[test]
fn reprs_and_literals_are_cpythons() {
    let p = temp(
        "repr.py",
        "def main(n, s):\n    print(repr('\\u0378'), repr('\\u061c'), repr('\\U000e0001'))\n    \
         print(1000000000000000.25, -1000000000000000.75, -9223372036854775808)\n    return n, s\n",
    );
    let o = anfora(&[
        "run",
        p.to_str().unwrap(),
        "-9223372036854775808",
        "'\\u00e9\\x00'",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "'\\u0378' '\\u061c' '\\U000e0001'\n1000000000000000.2 -1000000000000000.8 \
         -9223372036854775808\n(-9223372036854775808, 'é\\x00')\n"
    );
    let o = anfora(&["run", p.to_str().unwrap(), "1", "'\\ud800'"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("a lone surrogate"), "{}", stderr(&o));
}

#[test]
fn deep_recursion_tracebacks_collapse_repeats_as_cpython() {
    let p = temp(
        "rec.py",
        "def f(n):\n    return f(n + 1) + 1\n\n\ndef main():\n    return f(0)\n",
    );
    let frame = "  File \"PATH\", line 2, in f\n    return f(n + 1) + 1\n           ^^^^^^^^\n";
    let want = format!(
        "Traceback (most recent call last):\n  File \"PATH\", line 6, in main\n    return f(0)\n           \
         ^^^^\n{}  [Previous line repeated 9997 more times]\nRecursionError: maximum recursion \
         depth exceeded (10000 nested calls)\nerror: runtime error at PATH:2:12\n",
        frame.repeat(3)
    )
    .replace("PATH", p.to_str().unwrap());
    let o = anfora(&["run", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), want);
    // The reference VM: the same lines, the first call of `f` (which `main` makes in tail
    // position) counted as a level where the compiled engine inlined it.
    let o = anfora(&["run", p.to_str().unwrap(), "--engine", "reference"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), want.replace("9997 more", "9996 more"));
}

#[test]
fn a_file_that_is_not_utf8_is_refused_at_its_first_bad_byte() {
    let p = scratch().join("latin1.py");
    std::fs::write(&p, b"def main():\n    return '\xe9t\xe9'\n").unwrap();
    let o = anfora(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {}:2:13: not valid UTF-8 text (byte 0xe9); Python source is UTF-8\n",
            p.display()
        )
    );
}

#[test]
fn unbounded_recursion_of_a_large_function_is_a_memory_error_under_a_cap() {
    let mut src = String::from("def f(n):\n");
    for i in 0..500 {
        src += &format!("    a{i} = n + {i}\n");
    }
    src += "    return f(a0) + a499\n\n\ndef main():\n    return f(0)\n";
    let p = temp("deep_frames.py", &src);
    for engine in ["compiled", "reference"] {
        // 1.5 GB of address space, and no limit on the depth of calls.
        let script = format!(
            "ulimit -v 1500000; exec '{}' run '{}' --engine {engine} --max-depth {}",
            env!("CARGO_BIN_EXE_anfora"),
            p.display(),
            u64::MAX
        );
        let o = Command::new("sh").args(["-c", &script]).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{engine}: {}", stderr(&o));
        let err = stderr(&o);
        // The frame storage refuses to grow, or the memory poll stops the recursion first.
        assert!(
            err.contains("\nMemoryError: cannot ")
                || err.contains("\nMemoryError: out of memory: "),
            "{engine}: {err}"
        );
        assert!(err.contains("more times]\n"), "{engine}: {err}");
    }
}

/// `anfora run` of `src` on `engine` with `args`, under `sh -c` so that `prefix` (a `ulimit`, an
/// environment variable) applies to it alone.
fn run_limited(prefix: &str, name: &str, src: &str, engine: &str, args: &str) -> (Output, PathBuf) {
    let p = temp(name, src);
    let script = format!(
        "{prefix} exec '{}' run '{}' --engine {engine} {args}",
        env!("CARGO_BIN_EXE_anfora"),
        p.display()
    );
    let o = Command::new("sh").args(["-c", &script]).output().unwrap();
    (o, p)
}

/// The last lines of a located runtime error: the failing line underlined, the exception, and
/// where it happened.
fn error_tail(line: &str, marks: &str, headline: &str, path: &Path, at: &str) -> String {
    format!(
        "    {line}\n    {marks}\n{headline}\nerror: runtime error at {}:{at}\n",
        path.display()
    )
}

#[test]
fn growing_values_past_a_memory_cap_are_a_located_memory_error() {
    // 1,000,000 bytes per allocation: every builder's refusal without gigabytes.
    let cap = "ANFORA_MAX_TENSOR_BYTES=1000000";
    let limit = "more than the 976.6 KiB limit set by ANFORA_MAX_TENSOR_BYTES";
    let doubling = |init: &str| {
        format!(
            "def main():\n    s = {init}\n    for i in range(40):\n        s = s + s\n    return len(s)\n"
        )
    };
    let cases = [
        (
            doubling("'ab'"),
            "s = s + s",
            "    ^^^^^",
            "1.0 MiB for a str of 1048576 bytes",
            "4:13",
        ),
        (
            doubling("(1, 2)"),
            "s = s + s",
            "    ^^^^^",
            "1.0 MiB for a tuple of 32768 items",
            "4:13",
        ),
        (
            doubling("[1, 2]"),
            "s = s + s",
            "    ^^^^^",
            "1.0 MiB for a list of 32768 items",
            "4:13",
        ),
        (
            "def main():\n    return len('ab' * 600000)\n".to_string(),
            "return len('ab' * 600000)",
            "           ^^^^^^^^^^^^^",
            "1.1 MiB for a str of 1200000 bytes",
            "2:16",
        ),
        (
            "def main():\n    return len((1,) * 40000)\n".to_string(),
            "return len((1,) * 40000)",
            "           ^^^^^^^^^^^^",
            "1.2 MiB for a tuple of 40000 items",
            "2:16",
        ),
    ];
    for (src, line, marks, what, at) in cases {
        for engine in ["compiled", "reference"] {
            let (o, p) = run_limited(cap, "cap.py", &src, engine, "");
            let headline = format!("MemoryError: cannot allocate {what} ({limit})");
            let want = error_tail(line, marks, &headline, &p, at);
            assert_eq!(o.status.code(), Some(1), "{engine}: {}", stderr(&o));
            assert!(
                stderr(&o).ends_with(&want),
                "{engine}:\n{}\nwant:\n{want}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn copies_and_values_the_allocator_refuses_are_a_located_memory_error() {
    // 1.5 GB of address space: the allocator fails before the memory cap refuses.
    let ulimit = "ulimit -v 1500000;";
    let view = "from anfora import ops\ndef main():\n    x = ops.broadcast_to(ops.ones((1, 1)), (30000, 30000))\n    return ops.reshape(ops.transpose(x, (1, 0)), (-1,))\n";
    let doubling = |init: &str| {
        format!(
            "def main():\n    s = {init}\n    for i in range(40):\n        s = s + s\n    return len(s)\n"
        )
    };
    let cases = [
        (
            view.to_string(),
            "4:12",
            "cannot allocate 3.4 GiB for a tensor of shape (30000, 30000) and dtype float32",
        ),
        (doubling("'ab'"), "4:13", "for a str of "),
        (doubling("(1, 2)"), "4:13", "for a tuple of "),
    ];
    for (src, at, what) in cases {
        for engine in ["compiled", "reference"] {
            let (o, p) = run_limited(ulimit, "refused.py", &src, engine, "");
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{engine}: {err}");
            assert!(err.contains(what), "{engine}: {err}");
            let end = format!(
                " (the allocation failed)\nerror: runtime error at {}:{at}\n",
                p.display()
            );
            assert!(err.ends_with(&end), "{engine}: {err}");
        }
    }
    // Printing the view copies nothing, as numpy's printing.
    let print = "from anfora import ops\ndef main():\n    return ops.broadcast_to(ops.ones((1, 1)), (30000, 30000))\n";
    for engine in ["compiled", "reference"] {
        let (o, _) = run_limited(ulimit, "view.py", print, engine, "");
        assert_eq!(o.status.code(), Some(0), "{engine}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.ends_with("shape=(30000, 30000), dtype=float32)\n"),
            "{engine}: {out}"
        );
    }
}

#[test]
fn tail_recursion_counts_toward_the_recursion_limit_as_cpythons_frames() {
    let forever = "def f(n):\n    return f(n + 1)\n\n\ndef main():\n    return f(0)\n";
    let nesting = "def f(n):\n    return f((n,))\n\n\ndef main():\n    return f(0)\n";
    let countdown = |n: u32| {
        format!(
            "def f(n, acc):\n    if n == 0:\n        return acc\n    return f(n - 1, acc + n)\n\n\ndef main():\n    return f({n}, 0)\n"
        )
    };
    let mutual = |n: u32| {
        format!(
            "def f(n):\n    if n == 0:\n        return 'f'\n    return g(n - 1)\n\n\ndef g(n):\n    if n == 0:\n        return 'g'\n    return f(n - 1)\n\n\ndef main():\n    return f({n})\n"
        )
    };
    let headline = "RecursionError: maximum recursion depth exceeded (1000 nested calls)";
    let failing = [
        (forever.to_string(), "return f(n + 1)", "2:12"),
        (nesting.to_string(), "return f((n,))", "2:12"),
        (countdown(1100), "return f(n - 1, acc + n)", "4:12"),
        (mutual(1100), "return ", ""),
    ];
    for (src, line, at) in &failing {
        for engine in ["compiled", "reference"] {
            let (o, p) = run_limited("", "tail.py", src, engine, "--max-depth 1000");
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{engine}: {err}");
            let end = format!("{headline}\nerror: runtime error at {}:{at}", p.display());
            assert!(err.contains(&end), "{engine}: {err}");
            assert!(err.contains(&format!("    {line}")), "{engine}: {err}");
            assert!(err.contains("more times]\n"), "{engine}: {err}");
        }
    }
    // Within the limit the recursion returns its value; loops count nothing.
    let looping = "def main():\n    s = 0\n    i = 0\n    while i < 1000000:\n        s = s + i\n        i = i + 1\n    return s\n";
    for (src, want) in [
        (countdown(900), "405450\n"),
        (mutual(900), "'f'\n"),
        (mutual(901), "'g'\n"),
        (looping.to_string(), "499999500000\n"),
    ] {
        for engine in ["compiled", "reference"] {
            let (o, _) = run_limited("", "tail.py", &src, engine, "--max-depth 1000");
            assert_eq!(o.status.code(), Some(0), "{engine}: {}", stderr(&o));
            assert_eq!(stdout(&o), want, "{engine}");
        }
    }
}

#[test]
fn values_grown_in_small_steps_are_a_memory_error_at_the_process_limit() {
    // 150 MB of resident memory: each step allocates a few dozen bytes, so only the process's
    // budget, polled at calls and loop iterations, can stop it before an allocation aborts.
    let cap = "ANFORA_MAX_MEMORY_BYTES=150000000";
    let limit = "more than 143.1 MiB (the limit set by ANFORA_MAX_MEMORY_BYTES)";
    let cases = [
        (
            "def main():\n    t = ()\n    while True:\n        t = (t, t)\n",
            "",
        ),
        (
            "def f(n):\n    return f((n,)) + 1\n\n\ndef main():\n    return f(0)\n",
            "--max-depth 1000000000",
        ),
    ];
    for (src, args) in cases {
        for engine in ["compiled", "reference"] {
            let (o, _) = run_limited(cap, "small_steps.py", src, engine, args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{engine}: {err}");
            assert!(
                err.contains("\nMemoryError: out of memory: the process holds "),
                "{engine}: {err}"
            );
            assert!(err.contains(limit), "{engine}: {err}");
        }
    }
}

#[test]
fn memory_exhausted_where_anfora_cannot_unwind_is_a_memory_error_line_not_an_abort() {
    // 100,000 statements need a few hundred MB to compile; 700 MB of address space (most of it
    // the command's 512 MiB stack) runs a small program but not this one.
    let src = format!(
        "def main():\n    x = 0\n{}    return x\n",
        "    x = x + 1\n".repeat(100_000)
    );
    for (src, ok) in [(src.as_str(), false), ("def main():\n    return 1\n", true)] {
        let (o, _) = run_limited("ulimit -v 700000;", "exhausted.py", src, "compiled", "");
        let err = stderr(&o);
        if ok {
            assert_eq!(o.status.code(), Some(0), "{err}");
            continue;
        }
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.starts_with("\nMemoryError: out of memory: an allocation of ")
                && err.ends_with(" bytes failed where anfora cannot recover\n"),
            "{err}"
        );
    }
}

/// `anfora export` writes anfora's model file (which `inspect` and `run-model` read) or ONNX,
/// and refuses what a format cannot hold at the source line.
#[test]
fn export_writes_model_files_and_onnx() {
    let src = temp(
        "export.py",
        "from anfora import ops\n\ndef double(x):\n    return x * 2.0 + 1.0\n\ndef down(n, x):\n    if n <= 0:\n        return x\n    return down(n - 1, x * 2.0)\n\ndef name(s):\n    return s\n",
    );
    let dir = src.parent().unwrap();
    let (model, onnx) = (dir.join("double.anfora"), dir.join("double.onnx"));
    let (src, model_s, onnx_s) = (
        src.to_str().unwrap(),
        model.to_str().unwrap(),
        onnx.to_str().unwrap(),
    );
    let o = anfora(&[
        "export",
        src,
        "--entry",
        "double",
        "-o",
        model_s,
        "[1.0, 2.0]",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let size = std::fs::metadata(&model).unwrap().len();
    assert_eq!(stdout(&o), format!("wrote {model_s} ({size} bytes)\n"));
    let o = anfora(&["inspect", model_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("inputs:\n  x: float32[2]\noutputs:\n  output0: float32[2]\n"),
        "{text}"
    );
    assert!(text.contains("entry @double"), "{text}");

    let o = anfora(&[
        "export",
        src,
        "--entry",
        "double",
        "--format",
        "onnx",
        "-o",
        onnx_s,
        "[1.0, 2.0]",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&onnx).unwrap();
    // A ModelProto starts with its ir_version (field 1, a varint) and names its operators.
    assert_eq!(bytes[0], 0x08);
    assert!(bytes.windows(3).any(|w| w == b"Mul") && bytes.windows(3).any(|w| w == b"Add"));

    let o = anfora(&[
        "export", src, "--entry", "down", "--format", "onnx", "-o", onnx_s, "3", "[1.0]",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("error[E0602]") && err.contains("`down` calls itself"),
        "{err}"
    );
    assert!(
        err.contains("export.py:9:12") && err.contains("return down(n - 1, x * 2.0)"),
        "{err}"
    );

    let o = anfora(&["export", src, "--entry", "name", "-o", model_s, "'text'"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("error[E0601]") && err.contains("the result holds"),
        "{err}"
    );
    assert!(err.contains("export.py:11:10"), "{err}");

    let o = anfora(&[
        "export", src, "--entry", "double", "--format", "tflite", "-o", model_s, "[1.0]",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: the export format must be 'anfora' or 'onnx', not 'tflite'\n"
    );
}

const COLLECTIVE: &str = "\
from anfora import ops

def main(x):
    return ops.all_reduce(ops.ones((2,)) * x, 'sum')
";

#[test]
fn distributed_runs_the_program_in_every_process_of_an_mpi_job() {
    let file = temp("collective.py", COLLECTIVE);
    let o = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "3"])
        .arg(env!("CARGO_BIN_EXE_anfora"))
        .args(["--distributed", "run"])
        .arg(&file)
        .arg("1.5")
        .output()
        .expect("mpirun runs (scripts/setup.sh installs OpenMPI)");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "Tensor([4.5, 4.5], dtype=float32)\n".repeat(3));
}

#[test]
fn a_collective_without_distributed_is_a_runtime_error_saying_what_to_do() {
    let file = temp("collective_alone.py", COLLECTIVE);
    let o = anfora(&["run", file.to_str().unwrap(), "1.5"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "RuntimeError: no process group: call anfora.distributed.init() (Python) or pass \
             --distributed (the CLI), in a program started by mpirun"
        ),
        "{}",
        stderr(&o)
    );
}
