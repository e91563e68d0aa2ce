//! The adversarial suite: programs generated at scale from a fixed seed (random token soups,
//! mutated corpus programs, deeply nested and very flat programs, programs that grow values
//! without bound), each run by the CLI under a memory cap and a timeout. Whatever the input,
//! anfora must answer with a result or a clean error: exit status 0, 1 or 2, never a signal
//! (an abort), a timeout (a hang), or an internal error (a panic).
//!
//! `ANFORA_ADVERSARIAL_SEED` replaces the seed; a failure prints the program's file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Address space for each run: far below the machine's memory, above what any sane program
/// here needs.
const MEMORY_KB: u64 = 2_000_000;

/// A small deterministic generator (xorshift64*): the suite must not depend on a crate's
/// stream staying the same across versions.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = std::env::var("ANFORA_ADVERSARIAL_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed_2025_a4f0_0001);
        Rng(seed | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("anfora-adversarial");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(name: &str, src: &str) -> PathBuf {
    let p = dir().join(name);
    std::fs::write(&p, src).unwrap();
    p
}

/// `anfora ARGS...` under the memory cap, killed after `seconds`, with `env` (`NAME=value ...`)
/// in its environment.
fn anfora(env: &str, args: &[&str], seconds: u32) -> Output {
    let quoted: Vec<String> = args
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let script = format!(
        "ulimit -v {MEMORY_KB}; {env} exec timeout -s KILL {seconds} '{}' {}",
        env!("CARGO_BIN_EXE_anfora"),
        quoted.join(" ")
    );
    Command::new("sh").args(["-c", &script]).output().unwrap()
}

/// What a run ended with, or why it is a defect.
fn verdict(o: &Output) -> Result<i32, String> {
    let err = String::from_utf8_lossy(&o.stderr);
    let code = match o.status.code() {
        Some(c @ 0..=2) => c,
        Some(c) => {
            return Err(format!(
                "exit status {c} (a hang killed at the timeout is 137)"
            ));
        }
        None => return Err(format!("killed by a signal: {:?}", o.status)),
    };
    for bad in [
        "internal error",
        "panicked",
        "memory allocation of",
        "stack overflow",
    ] {
        if err.contains(bad) {
            return Err(format!("stderr says {bad:?}"));
        }
    }
    Ok(code)
}

/// Runs `args` on `file`: its exit status and stderr, or the defect with the file, the command
/// and the end of stderr.
fn try_clean(env: &str, file: &Path, args: &[&str], seconds: u32) -> Result<(i32, String), String> {
    let mut all = args.to_vec();
    let path = file.to_str().unwrap();
    all.insert(1, path);
    let o = anfora(env, &all, seconds);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    verdict(&o).map(|code| (code, err.clone())).map_err(|why| {
        format!(
            "anfora {}: {why}\nstderr (end): {}",
            all.join(" "),
            tail(&err)
        )
    })
}

/// [`try_clean`], failing the test at once.
fn clean(file: &Path, args: &[&str], seconds: u32) -> (i32, String) {
    try_clean("", file, args, seconds).unwrap_or_else(|e| panic!("{e}"))
}

/// Fails with every defect found, not only the first.
fn report(defects: Vec<String>) {
    assert!(
        defects.is_empty(),
        "{} defects:\n\n{}",
        defects.len(),
        defects.join("\n\n")
    );
}

fn tail(s: &str) -> &str {
    let mut start = s.len().saturating_sub(2000);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

// ---------------------------------------------------------------------------------------------
// Token soups.

const TOKENS: &[&str] = &[
    "def",
    "main",
    "(",
    ")",
    ":",
    "return",
    "if",
    "elif",
    "else",
    "while",
    "for",
    "in",
    "range",
    "lambda",
    "x",
    "y",
    "f",
    "ops",
    "anfora",
    "import",
    "from",
    "as",
    "=",
    "+=",
    "==",
    "<",
    "+",
    "-",
    "*",
    "/",
    "//",
    "%",
    "**",
    "@",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "0",
    "1",
    "-1",
    "2.5",
    "1e308",
    "'s'",
    "\"\\x00\"",
    "None",
    "True",
    "and",
    "or",
    "not",
    "is",
    "pass",
    "break",
    "continue",
    "print",
    "len",
    "tuple",
    "list",
    "yield",
    "global",
    "nonlocal",
    "assert",
    "del",
    "with",
    "class",
    "try",
    "except",
    "raise",
    "async",
    "await",
    "...",
    ";",
    "\\",
    "#",
    "\n",
    "\n    ",
    "\n        ",
    "\t",
    "'''",
    "\u{1F600}",
    "\u{0}",
];

fn token_soup(rng: &mut Rng, n: usize) -> String {
    let mut s = String::new();
    for _ in 0..n {
        let token: &&str = rng.pick(TOKENS);
        s.push_str(token);
        if rng.below(3) > 0 {
            s.push(' ');
        }
    }
    s
}

#[test]
fn random_token_soups_get_clean_errors() {
    let mut rng = Rng::new();
    for k in 0..120 {
        let n = 1 + rng.below(120);
        // Half free-standing, half in a function body, where more of the compiler is reached.
        let body = token_soup(&mut rng, n);
        let src = if k % 2 == 0 {
            body
        } else {
            format!(
                "def main(x):\n    {}\n    return x\n",
                body.replace('\n', "\n    ")
            )
        };
        let p = write(&format!("soup_{k}.py"), &src);
        clean(&p, &["check"], 60);
        clean(&p, &["run", "1"], 60);
    }
}

// ---------------------------------------------------------------------------------------------
// Mutated corpus programs: close to valid, so they reach inference, the optimizer and lowering.

fn corpus() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    files
}

/// The `# args:` line of a corpus program, split at top-level commas.
fn corpus_args(src: &str) -> Vec<String> {
    let Some(line) = src
        .lines()
        .take(5)
        .find_map(|l| l.trim().strip_prefix("# args:"))
    else {
        return vec![];
    };
    let mut out = vec![String::new()];
    let mut depth = 0i32;
    for c in line.trim().chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().unwrap().push(c);
    }
    out.into_iter()
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty())
        .collect()
}

const REPLACEMENTS: &[&str] = &[
    "0",
    "-1",
    "1e308",
    "2**62",
    "'a'",
    "None",
    "()",
    "[]",
    "(1, 2)",
    "x",
    "main",
    "ops",
    "True",
    "-0.0",
    "float('nan')",
    "len",
    "range(3)",
    "lambda: 1",
    "(yield)",
    "*",
    "**",
];

/// One random change: a word replaced, a line removed, doubled, moved or indented.
fn mutate(rng: &mut Rng, src: &str) -> String {
    let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return src.to_string();
    }
    let i = rng.below(lines.len());
    match rng.below(6) {
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(rng.below(lines.len() + 1), l);
        }
        2 => lines[i] = format!("    {}", lines[i]),
        3 => {
            let j = rng.below(lines.len());
            lines.swap(i, j);
        }
        _ => {
            let words: Vec<&str> = lines[i]
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .filter(|w| !w.is_empty())
                .collect();
            if !words.is_empty() {
                let w = rng.pick(&words).to_string();
                let r = *rng.pick(REPLACEMENTS);
                lines[i] = lines[i].replacen(&w, r, 1);
            }
        }
    }
    lines.join("\n") + "\n"
}

/// Compiled through every stage (`dump --stage lower` specializes for the arguments, infers,
/// optimizes and lowers) without running: a mutation may well make a program loop forever,
/// which is not the compiler's to refuse, but compiling must always end.
#[test]
fn mutated_corpus_programs_compile_or_get_clean_errors() {
    let mut rng = Rng::new();
    let files = corpus();
    for k in 0..150 {
        let file = rng.pick(&files);
        let mut src = std::fs::read_to_string(file).unwrap();
        for _ in 0..1 + rng.below(3) {
            src = mutate(&mut rng, &src);
        }
        let p = write(&format!("mutant_{k}.py"), &src);
        let args = corpus_args(&src);
        let mut cmd = vec!["dump", "--stage", "lower", "-o", "/dev/null"];
        cmd.extend(args.iter().map(String::as_str));
        // `dump` takes the file before the arguments.
        let o = {
            let mut all: Vec<&str> = cmd[..5].to_vec();
            all.push(p.to_str().unwrap());
            all.extend(&cmd[5..]);
            anfora("", &all, 60)
        };
        if let Err(why) = verdict(&o) {
            panic!(
                "{} (from {}): {why}\n{}",
                p.display(),
                file.display(),
                tail(&String::from_utf8_lossy(&o.stderr))
            );
        }
        clean(&p, &["check"], 60);
    }
}

// ---------------------------------------------------------------------------------------------
// Deeply nested and very flat programs.

fn repeat(s: &str, n: usize) -> String {
    s.repeat(n)
}

/// (name, source): each is compiled and run.
fn shapes() -> Vec<(&'static str, String)> {
    let main = |body: String| format!("def main():\n    return {body}\n");
    let n = 100_000;
    let mut v = vec![
        (
            "parens",
            main(format!("{}1{}", repeat("(", n), repeat(")", n))),
        ),
        (
            "lists",
            main(format!("{}1{}", repeat("[", n), repeat("]", n))),
        ),
        ("unary_minus", main(format!("{}1", repeat("-", n)))),
        ("not_chain", main(format!("{}True", repeat("not ", n)))),
        (
            "calls",
            main(format!("{}1{}", repeat("abs(", n), repeat(")", n))),
        ),
        (
            "right_sum",
            main(format!("{}1{}", repeat("1 + (", n), repeat(")", n))),
        ),
        ("left_sum", main(format!("1{}", repeat(" + 1", n)))),
        ("compare_chain", main(format!("1{}", repeat(" < 2", n)))),
        ("and_chain", main(format!("1{}", repeat(" and 1", n)))),
        ("tuple", main(format!("({})", repeat("1, ", n)))),
        ("string", main(format!("'{}'", repeat("a", 10 * n)))),
        (
            "lambdas",
            main(format!(
                "{}1{}",
                repeat("(lambda: ", 2_000),
                repeat(")()", 2_000)
            )),
        ),
    ];
    let mut ifs = String::from("def main():\n    x = 7\n");
    for d in 0..5_000 {
        ifs += &format!("{}if x > {d}:\n", repeat("    ", d + 1));
    }
    ifs += &format!("{}return x\n{}return 0\n", repeat("    ", 5_001), "    ");
    v.push(("nested_ifs", ifs));
    let mut defs = String::new();
    for d in 0..1_000 {
        defs += &format!("{}def f{d}():\n", repeat("    ", d));
    }
    defs += &format!("{}return 1\n", repeat("    ", 1_000));
    v.push(("nested_defs", defs + "\ndef main():\n    return 0\n"));
    let mut statements = String::from("def main():\n    x = 0\n");
    for _ in 0..20_000 {
        statements += "    x = x + 1\n";
    }
    v.push(("statements", statements + "    return x\n"));
    let mut elifs = String::from("def main():\n    x = 3\n    if x == 0:\n        return 0\n");
    for k in 1..10_000 {
        elifs += &format!("    elif x == {k}:\n        return {k}\n");
    }
    v.push(("elifs", elifs + "    return -1\n"));
    let mut chain = String::from("def f0(x):\n    return x\n");
    for k in 1..2_000 {
        chain += &format!("def f{k}(x):\n    return f{}(x) + 1\n", k - 1);
    }
    v.push((
        "function_chain",
        chain + "def main():\n    return f1999(0)\n",
    ));
    v
}

#[test]
fn deeply_nested_and_very_flat_programs_get_results_or_clean_errors() {
    let mut defects = vec![];
    for (name, src) in shapes() {
        let p = write(&format!("shape_{name}.py"), &src);
        defects.extend(try_clean("", &p, &["check"], 120).err());
        for engine in ["compiled", "reference"] {
            defects.extend(try_clean("", &p, &["run", "--engine", engine], 120).err());
        }
    }
    report(defects);
}

// ---------------------------------------------------------------------------------------------
// Programs that grow values without bound: each must end with Python's error.

const GROWTH_ENV: &str = "ANFORA_MAX_MEMORY_BYTES=400000000";

#[test]
fn programs_that_grow_without_bound_end_with_python_errors() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "string_doubling",
            "def main():\n    s = 'ab'\n    while True:\n        s = s + s\n",
            "MemoryError",
        ),
        (
            "string_repeat",
            "def main():\n    s = 'ab'\n    while True:\n        s = s * 3\n",
            "MemoryError",
        ),
        (
            "tuple_doubling",
            "def main():\n    t = (1, 2)\n    while True:\n        t = t + t\n",
            "MemoryError",
        ),
        (
            "list_doubling",
            "def main():\n    t = [1, 2]\n    while True:\n        t = t + t\n",
            "MemoryError",
        ),
        (
            "tensor_doubling",
            "from anfora import ops\n\ndef main():\n    t = ops.ones((2,))\n    while True:\n        t = ops.concat((t, t))\n",
            "MemoryError",
        ),
        (
            "int_squaring",
            "def main():\n    x = 3\n    while True:\n        x = x * x\n",
            "OverflowError",
        ),
        (
            "recursion",
            "def f(n):\n    return f(n + 1) + 1\n\ndef main():\n    return f(0)\n",
            "RecursionError",
        ),
        (
            "tail_recursion",
            "def f(n):\n    return f(n + 1)\n\ndef main():\n    return f(0)\n",
            "RecursionError",
        ),
        (
            "growing_tuple_recursion",
            "def f(n):\n    return f((n,))\n\ndef main():\n    return f(0)\n",
            "RecursionError",
        ),
        (
            "nesting_tuples",
            "def main():\n    t = ()\n    while True:\n        t = (t, t)\n",
            "MemoryError",
        ),
    ];
    let mut defects = vec![];
    for (name, src, error) in cases {
        let p = write(&format!("grow_{name}.py"), src);
        for engine in ["compiled", "reference"] {
            // Resident memory capped lower too: the small-step growth ends sooner.
            match try_clean(GROWTH_ENV, &p, &["run", "--engine", engine], 120) {
                Err(e) => defects.push(e),
                Ok((code, err)) if code != 1 || !err.contains(&format!("\n{error}")) => {
                    defects.push(format!("{name} on {engine}: not {error}: {}", tail(&err)));
                }
                Ok(_) => {}
            }
        }
    }
    report(defects);
}
