//! The memory a loop's gradient takes grows only with what each iteration keeps for the
//! backward pass (here one float and the link to the previous iteration's continuation), not
//! with frames. Alone in its test binary, so that the process's peak memory is this test's.

use anfora_ir::Options;
use anfora_ops::Value;
use anfora_session::{Arg, Engine, Session};

const SRC: &str = "from anfora import grad, ops\n\ndef f(x, n):\n    i = 0\n    while i < n:\n        x = ops.sin(x)\n        i += 1\n    return x\n\ndef main(x, n):\n    return grad(f, argnums=0)(x, n)\n";

/// The process's peak resident memory in bytes (Linux's `VmHWM`; `None` elsewhere).
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn run(s: &mut Session, n: i64) {
    let args = vec![Arg::from(Value::Float(0.5)), Arg::from(Value::Int(n))];
    if let Err(e) = s.call("main", args, &mut std::io::sink()) {
        panic!("{}", s.render(&e));
    }
}

/// Set in the child process that measures one engine.
const ENGINE_VAR: &str = "ANFORA_TEST_LOOP_MEMORY_ENGINE";

/// The growth of the peak memory per iteration of a loop's gradient on `engine`.
fn bytes_per_iteration(engine: Engine) -> Option<u64> {
    let mut s = Session::load("m.py", SRC, Options::default());
    s.engine = engine;
    // Compiled, and the allocator warmed up, before the peak is read.
    run(&mut s, 1_000);
    let before = peak_memory()?;
    let n = 500_000;
    run(&mut s, n);
    Some(peak_memory()?.saturating_sub(before) / n as u64)
}

/// Each engine is measured in a process of its own (this test binary run again for this test
/// alone), as memory freed by one run would hide the next one's growth.
#[test]
fn a_long_loop_s_gradient_keeps_a_few_hundred_bytes_per_iteration() {
    if let Ok(name) = std::env::var(ENGINE_VAR) {
        let engine = match name.as_str() {
            "compiled" => Engine::Compiled,
            _ => Engine::Reference,
        };
        if let Some(bytes) = bytes_per_iteration(engine) {
            assert!(bytes <= 400, "{name}: {bytes} bytes per iteration");
        }
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    for engine in ["compiled", "reference"] {
        let out = std::process::Command::new(&exe)
            .args([
                "a_long_loop_s_gradient_keeps_a_few_hundred_bytes_per_iteration",
                "--exact",
                "--nocapture",
            ])
            .env(ENGINE_VAR, engine)
            .output()
            .expect("the test binary runs");
        assert!(
            out.status.success(),
            "{engine}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
