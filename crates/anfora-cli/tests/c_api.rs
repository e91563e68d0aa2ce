//! The C API, its C++ wrapper and the C examples end to end, compiled with the system's C and
//! C++ compilers (`cc`, `c++`, or `$CC`/`$CXX`); each test is skipped, with a line saying so,
//! when the compiler is missing (`scripts/setup.sh` installs gcc and g++).
//!
//! The tests live in the CLI's crate because they need the `anfora` command
//! (`CARGO_BIN_EXE_anfora`) to export models. The runtime library is the one cargo built for
//! this test run: `anfora-runtime` is a dependency of the CLI and declares the `cdylib` and
//! `staticlib` crate types, so building this test builds `libanfora_runtime.so` and `.a` in
//! the target directory's `deps/` (the parent of this test binary's own directory). The
//! programs link against that `.so` with an rpath to it (one shared copy, fast links);
//! `examples_link_statically` links the examples once more against the `.a` beside it
//! (`-lpthread -ldl -lm`). `ANFORA_RUNTIME_LIB` names another library. The examples are built
//! by `examples/c/build.sh`, as a user would.
//!
//! `run_model` must write the same `.npy` bytes as `anfora run-model`; the values `anfora run`
//! prints are parsed and compared too (exactly where numpy's printing is exact, integers and
//! short binary fractions; to its 8 digits for the MLP).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use anfora_runtime::npy;
use anfora_tensor::Tensor;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs a command; panics with its output unless it succeeds.
fn run_ok(cmd: &mut Command) -> Output {
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        o.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        o.status,
        text(&o.stdout),
        text(&o.stderr)
    );
    o
}

fn anfora() -> Command {
    Command::new(env!("CARGO_BIN_EXE_anfora"))
}

/// A compiler that answers `--version`, from `$var` or `default`.
fn compiler(var: &str, default: &str) -> Option<String> {
    let cc = std::env::var(var).unwrap_or_else(|_| default.to_string());
    let works = Command::new(&cc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    works.then_some(cc)
}

/// The runtime library this test run built (see the module's comment).
fn runtime_library() -> PathBuf {
    if let Some(lib) = std::env::var_os("ANFORA_RUNTIME_LIB") {
        return PathBuf::from(lib);
    }
    // target/debug/deps/c_api-HASH is this test: cargo writes the library's cdylib into the
    // same deps/ (no hash in its name), or, after `cargo build -p anfora-runtime`, into the
    // profile's directory too.
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let candidates = [
        deps.join("libanfora_runtime.so"),
        deps.parent().unwrap().join("libanfora_runtime.so"),
    ];
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no libanfora_runtime.so in {} or its parent: cargo builds it with this test \
                 (set ANFORA_RUNTIME_LIB to use another)",
                deps.display()
            )
        })
}

/// The models every test uses, exported by the `anfora` command.
const MODELS: &str = r#"import anfora
from anfora import ops

anfora.set_seed(0)
W1 = ops.normal((4, 8)) * 0.5
b1 = ops.normal((8,)) * 0.1
W2 = ops.normal((8, 3)) * 0.5


def fib(n):
    if n < 2.0:
        return n
    return fib(n - 1.0) + fib(n - 2.0)


def halve(x):
    n = x * 0.0
    while ops.max(x) > 1.0:
        x = x * 0.5
        n = n + 1.0
    return x, n


def mlp(x):
    h = ops.tanh(x @ W1 + b1)
    return h @ W2


def classify(x):
    return x[:, 0:10] * 2.0


def checked(x):
    assert ops.max(x) <= 100.0, "too big"
    return x * 2.0
"#;

/// A training step: linear regression by SGD on two Parameters.
const TRAIN: &str = r#"import anfora
from anfora import ops, value_and_grad

W = anfora.Parameter(ops.zeros((4, 1)), name="W")
b = anfora.Parameter(ops.zeros((1,)), name="b")


def loss_fn(x, y):
    d = x @ W + b - y
    return ops.mean(d * d)


def step(x, y):
    loss, grads = value_and_grad(loss_fn, argnums=None, weights=(W, b))(x, y)
    ops.sgd(W, grads[0], 0.1)
    ops.sgd(b, grads[1], 0.1)
    return loss
"#;

const MLP_INPUT: &str = "[[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 0.25, 2.0]]";

/// The training data: 8 examples of y = x @ [1, -2, 0.5, 3] + 0.25.
fn train_data() -> (Vec<f32>, Vec<f32>) {
    let mut x = Vec::new();
    let mut y = Vec::new();
    for i in 0..8 {
        let row: Vec<f32> = (0..4)
            .map(|j| (((i * 7 + j * 3) % 11) as f32 - 5.0) / 4.0)
            .collect();
        y.push(row[0] - 2.0 * row[1] + 0.5 * row[2] + 3.0 * row[3] + 0.25);
        x.extend(row);
    }
    (x, y)
}

fn list_text(values: &[f32], cols: usize) -> String {
    let rows: Vec<String> = values
        .chunks(cols)
        .map(|r| {
            let items: Vec<String> = r.iter().map(|v| format!("{v:?}")).collect();
            format!("[{}]", items.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

struct Fixture {
    dir: PathBuf,
    bin: PathBuf,
    models: PathBuf,
    cc: String,
    cxx: Option<String>,
}

impl Fixture {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn program(&self, name: &str) -> Command {
        Command::new(self.bin.join(name))
    }
}

static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();

/// Builds the examples and test programs and exports the models, once; `None` (and a line on
/// stderr) without a C compiler.
fn fixture() -> Option<&'static Fixture> {
    FIXTURE.get_or_init(build_fixture).as_ref()
}

fn build_fixture() -> Option<Fixture> {
    let Some(cc) = compiler("CC", "cc") else {
        eprintln!("skipping the C API tests: no C compiler (cc, or $CC) answers --version");
        return None;
    };
    let root = root();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("anfora-c-api");
    let _ = std::fs::remove_dir_all(&dir);
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let lib = runtime_library();
    let include = root.join("crates/anfora-runtime/include");
    let link: Vec<String> = match lib.extension().and_then(|e| e.to_str()) {
        Some("so") => vec![
            lib.display().to_string(),
            format!("-Wl,-rpath,{}", lib.parent().unwrap().display()),
        ],
        _ => vec![
            lib.display().to_string(),
            "-lpthread".into(),
            "-ldl".into(),
            "-lm".into(),
        ],
    };

    // The examples, by their own build script.
    run_ok(
        Command::new("bash")
            .arg(root.join("examples/c/build.sh"))
            .arg(&bin)
            .env("CC", &cc)
            .env("CFLAGS", "-Werror")
            .env("ANFORA_LIB", &lib),
    );
    let tests = root.join("crates/anfora-cli/tests/c");
    run_ok(
        Command::new(&cc)
            .args([
                "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-pthread",
            ])
            .arg(format!("-I{}", include.display()))
            .arg(tests.join("api_errors.c"))
            .args(&link)
            .arg("-o")
            .arg(bin.join("api_errors")),
    );
    let cxx = compiler("CXX", "c++");
    match &cxx {
        Some(cxx) => {
            run_ok(
                Command::new(cxx)
                    .args(["-std=c++17", "-O1", "-g", "-Wall", "-Wextra", "-Werror"])
                    .arg(format!("-I{}", include.display()))
                    .arg(tests.join("api_wrapper.cpp"))
                    .args(&link)
                    .arg("-o")
                    .arg(bin.join("api_wrapper")),
            );
        }
        None => eprintln!("skipping the C++ wrapper test: no C++ compiler (c++, or $CXX)"),
    }

    // The models.
    let models = dir.join("models.py");
    std::fs::write(&models, MODELS).unwrap();
    let train = dir.join("train.py");
    std::fs::write(&train, TRAIN).unwrap();
    let (x, y) = train_data();
    let digits_example = list_text(&vec![0.0; 4 * 64], 64);
    let exports: [(&Path, &str, &str, Vec<String>); 6] = [
        (
            &models,
            "checked",
            "checked.anfora",
            vec!["[1.0, 2.0]".into()],
        ),
        (&models, "fib", "fib.anfora", vec!["[10.0]".into()]),
        (
            &models,
            "halve",
            "halve.anfora",
            vec!["[[3.0, 0.5], [9.0, 1.5]]".into()],
        ),
        (&models, "mlp", "mlp.anfora", vec![MLP_INPUT.into()]),
        (&models, "classify", "classify.anfora", vec![digits_example]),
        (
            &train,
            "step",
            "train.anfora",
            vec![list_text(&x, 4), list_text(&y, 1)],
        ),
    ];
    for (file, entry, out, args) in exports {
        run_ok(
            anfora()
                .arg("export")
                .arg(file)
                .args(["--entry", entry, "-o"])
                .arg(dir.join(out))
                .args(args),
        );
    }
    Some(Fixture {
        dir,
        bin,
        models,
        cc,
        cxx,
    })
}

fn write_npy(path: &Path, t: &Tensor) {
    std::fs::write(path, npy::write(t)).unwrap();
}

fn read_npy(path: &Path) -> Tensor {
    npy::read(&std::fs::read(path).unwrap()).unwrap()
}

/// The numbers in `anfora run`'s output (the repr of the result), in order.
fn printed_numbers(out: &str) -> Vec<f64> {
    let mut s = out.to_string();
    for d in ["float32", "float64", "int32", "int64"] {
        s = s.replace(&format!("dtype={d}"), "");
    }
    s.split(|c: char| !(c.is_ascii_digit() || "+-.e".contains(c)))
        .filter_map(|t| t.parse::<f64>().ok())
        .collect()
}

/// Runs `entry` with `anfora run` and returns the numbers it prints.
fn anfora_run(f: &Fixture, entry: &str, args: &[&str]) -> Vec<f64> {
    let o = run_ok(
        anfora()
            .arg("run")
            .arg(&f.models)
            .args(["--entry", entry])
            .args(args),
    );
    printed_numbers(&text(&o.stdout))
}

/// Runs `model` on `inputs` with the C `run_model` into `c/` and with `anfora run-model`
/// into `cli/`; asserts the `.npy` files are byte for byte the same; returns the outputs.
fn run_both(f: &Fixture, case: &str, model: &str, inputs: &[Tensor]) -> Vec<Tensor> {
    let dir = f.path(case);
    let (c_dir, cli_dir) = (dir.join("c"), dir.join("cli"));
    std::fs::create_dir_all(&c_dir).unwrap();
    std::fs::create_dir_all(&cli_dir).unwrap();
    let paths: Vec<PathBuf> = (inputs.iter().enumerate())
        .map(|(i, t)| {
            let p = dir.join(format!("in{i}.npy"));
            write_npy(&p, t);
            p
        })
        .collect();
    let c = run_ok(
        f.program("run_model")
            .arg(f.path(model))
            .args(&paths)
            .arg("-o")
            .arg(&c_dir),
    );
    run_ok(
        anfora()
            .arg("run-model")
            .arg(f.path(model))
            .args(&paths)
            .arg("-o")
            .arg(&cli_dir),
    );
    let mut outputs = Vec::new();
    for i in 0.. {
        let name = format!("out{i}.npy");
        let (from_c, from_cli) = (c_dir.join(&name), cli_dir.join(&name));
        if !from_cli.exists() {
            assert!(!from_c.exists(), "{case}: run_model wrote an extra {name}");
            break;
        }
        let c_bytes = std::fs::read(&from_c)
            .unwrap_or_else(|e| panic!("{case}: run_model did not write {name}: {e}"));
        assert_eq!(
            c_bytes,
            std::fs::read(&from_cli).unwrap(),
            "{case}: {name} differs between run_model (C) and anfora run-model"
        );
        let t = read_npy(&from_c);
        assert!(
            text(&c.stdout).contains(&format!(
                "{}: {}{:?}",
                from_c.display(),
                t.dtype().name(),
                t.shape()
            )),
            "{}",
            text(&c.stdout)
        );
        outputs.push(t);
    }
    outputs
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_f64_vec()
}

fn f32s(values: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_f32(values.to_vec(), shape).unwrap()
}

#[test]
fn recursive_fibonacci_matches_the_cli() {
    let Some(f) = fixture() else { return };
    for n in [10.0f32, 12.0, 1.0] {
        let out = run_both(f, &format!("fib{n}"), "fib.anfora", &[f32s(&[n], &[1])]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].shape(), &[1]);
        let expected = anfora_run(f, "fib", &[&format!("[{n:?}]")]);
        assert_eq!(values(&out[0]), expected, "fib({n})");
    }
    let out = run_both(f, "fib20", "fib.anfora", &[f32s(&[20.0], &[1])]);
    assert_eq!(values(&out[0]), vec![6765.0]);
}

#[test]
fn while_loop_matches_the_cli() {
    let Some(f) = fixture() else { return };
    let x = [3.0f32, 0.5, 9.0, 1.5];
    let out = run_both(f, "halve", "halve.anfora", &[f32s(&x, &[2, 2])]);
    assert_eq!(out.len(), 2, "a tuple result is two outputs");
    let mut got = values(&out[0]);
    got.extend(values(&out[1]));
    assert_eq!(got, anfora_run(f, "halve", &["[[3.0, 0.5], [9.0, 1.5]]"]));
    assert_eq!(values(&out[1]), vec![4.0; 4]);
    assert_eq!(values(&out[0]), vec![0.1875, 0.03125, 0.5625, 0.09375]);
    // Other values take another number of iterations.
    let out = run_both(
        f,
        "halve2",
        "halve.anfora",
        &[f32s(&[100.0, 1.0, 0.5, 2.0], &[2, 2])],
    );
    assert_eq!(values(&out[1]), vec![7.0; 4]);
    assert_eq!(
        values(&out[0]),
        vec![0.78125, 1.0 / 128.0, 0.5 / 128.0, 2.0 / 128.0]
    );
}

#[test]
fn mlp_with_module_level_weights_matches_the_cli() {
    let Some(f) = fixture() else { return };
    let x = [1.0f32, 2.0, 3.0, 4.0, 0.5, -1.0, 0.25, 2.0];
    let out = run_both(f, "mlp", "mlp.anfora", &[f32s(&x, &[2, 4])]);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].shape(), &[2, 3]);
    let expected = anfora_run(f, "mlp", &[MLP_INPUT]);
    let got = values(&out[0]);
    assert_eq!(got.len(), expected.len());
    // `anfora run` prints float32 with numpy's 8 significant digits: equal to that precision
    // (the .npy bytes above are the exact comparison, with `anfora run-model`).
    for (g, e) in got.iter().zip(&expected) {
        assert!(
            (g - e).abs() <= 1e-7 * e.abs().max(1.0) * 10.0,
            "{got:?} vs {expected:?}"
        );
    }
    assert!(got.iter().any(|v| *v != 0.0));
}

#[test]
fn run_model_reports_bad_inputs() {
    let Some(f) = fixture() else { return };
    let dir = f.path("bad-inputs");
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.npy");
    write_npy(&good, &f32s(&[1.0; 8], &[2, 4]));
    let not_npy = dir.join("not.npy");
    std::fs::write(&not_npy, "hello").unwrap();
    let mut cut = npy::write(&f32s(&[1.0; 8], &[2, 4]));
    cut.truncate(cut.len() - 4);
    let truncated = dir.join("cut.npy");
    std::fs::write(&truncated, cut).unwrap();
    let wide = dir.join("wide.npy");
    write_npy(&wide, &f32s(&[1.0; 12], &[3, 4]));
    let ints = dir.join("ints.npy");
    write_npy(&ints, &Tensor::from_i64(vec![1; 8], &[2, 4]).unwrap());
    let mut u16s = npy::write(&f32s(&[1.0; 8], &[2, 4]));
    let at = u16s.windows(3).position(|w| w == b"<f4").unwrap();
    u16s[at..at + 3].copy_from_slice(b"<u2");
    let unsigned = dir.join("u16.npy");
    std::fs::write(&unsigned, u16s).unwrap();
    let cases: [(&Path, &str); 6] = [
        (&dir.join("missing.npy"), "missing.npy: cannot open"),
        (&not_npy, "not an .npy file"),
        (&truncated, "needs 32 bytes of data, the file has 28"),
        (&wide, "must be"),
        (&ints, "int64"),
        (&unsigned, "dtype '<u2' is not supported"),
    ];
    for (input, message) in cases {
        let o = f
            .program("run_model")
            .arg(f.path("mlp.anfora"))
            .arg(input)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", input.display());
        assert!(
            text(&o.stderr).contains(message),
            "{}: {}",
            input.display(),
            text(&o.stderr)
        );
    }
    // A missing model, two inputs for one, no arguments.
    let o = f
        .program("run_model")
        .arg(dir.join("none.anfora"))
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("none.anfora"),
        "{}",
        text(&o.stderr)
    );
    let o = f
        .program("run_model")
        .arg(f.path("mlp.anfora"))
        .args([&good, &good])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("takes 1 inputs"),
        "{}",
        text(&o.stderr)
    );
    let o = f.program("run_model").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    // The program raises: its traceback.
    let big = dir.join("big.npy");
    write_npy(&big, &f32s(&[1.0, 500.0], &[2]));
    let o = f
        .program("run_model")
        .arg(f.path("checked.anfora"))
        .arg(&big)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("AssertionError: too big"), "{err}");
    assert!(err.contains("in checked"), "{err}");
    // Without -o, the outputs go beside the first input.
    run_ok(f.program("run_model").arg(f.path("mlp.anfora")).arg(&good));
    assert_eq!(read_npy(&dir.join("out0.npy")).shape(), &[2, 3]);
}

#[test]
fn classify_digits_counts_correct_predictions() {
    let Some(f) = fixture() else { return };
    let dir = f.path("digits");
    std::fs::create_dir_all(&dir).unwrap();
    // Image i lights pixel i % 10, which the model's logits pick; 7 of the 10 labels agree.
    let n = 10;
    let mut images = vec![0.0f32; n * 64];
    for i in 0..n {
        images[i * 64 + i % 10] = 1.0;
    }
    let labels: Vec<i64> = (0..n as i64)
        .map(|i| if i % 4 == 1 { (i + 1) % 10 } else { i })
        .collect();
    assert_eq!(
        labels
            .iter()
            .enumerate()
            .filter(|(i, l)| *i as i64 == **l)
            .count(),
        7
    );
    for (name, shape) in [("flat", vec![n, 64]), ("square", vec![n, 1, 8, 8])] {
        let x = dir.join(format!("{name}.npy"));
        write_npy(&x, &f32s(&images, &shape));
        let y = dir.join("labels.npy");
        write_npy(&y, &Tensor::from_i64(labels.clone(), &[n]).unwrap());
        let o = run_ok(
            f.program("classify_digits")
                .arg(f.path("classify.anfora"))
                .arg(&x)
                .arg(&y),
        );
        assert_eq!(text(&o.stdout), "accuracy: 0.7000 (7/10)\n", "{name}");
    }
    // Labels that do not match the images.
    let y = dir.join("short.npy");
    write_npy(&y, &Tensor::from_i64(vec![0; 3], &[3]).unwrap());
    let o = f
        .program("classify_digits")
        .arg(f.path("classify.anfora"))
        .arg(dir.join("flat.npy"))
        .arg(&y)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("labels"), "{}", text(&o.stderr));
}

/// Each step's loss as `train_on_device` prints it.
fn losses(o: &Output) -> Vec<String> {
    text(&o.stdout)
        .lines()
        .filter_map(|l| l.split_once(": loss ").map(|(_, v)| v.to_string()))
        .collect()
}

#[test]
fn train_on_device_learns_and_saves() {
    let Some(f) = fixture() else { return };
    let dir = f.path("train");
    std::fs::create_dir_all(&dir).unwrap();
    let (x, y) = train_data();
    let (xp, yp) = (dir.join("x.npy"), dir.join("y.npy"));
    write_npy(&xp, &f32s(&x, &[8, 4]));
    write_npy(&yp, &f32s(&y, &[8, 1]));
    let model = f.path("train.anfora");
    let train = |from: &Path, steps: &str, to: &Path| {
        run_ok(
            f.program("train_on_device")
                .arg(from)
                .args([&xp, &yp])
                .arg(steps)
                .arg(to),
        )
    };
    let six = train(&model, "6", &dir.join("six.anfora"));
    let all = losses(&six);
    assert_eq!(all.len(), 6, "{}", text(&six.stdout));
    assert!(text(&six.stdout).ends_with(&format!("saved {}\n", dir.join("six.anfora").display())));
    let l: Vec<f64> = all.iter().map(|v| v.parse().unwrap()).collect();
    // The first step starts from zero weights: the loss is mean(y^2).
    let first = y.iter().map(|v| (v * v) as f64).sum::<f64>() / 8.0;
    assert!((l[0] - first).abs() < 1e-5 * first, "{l:?} vs {first}");
    assert!(l.windows(2).all(|w| w[1] < w[0]), "the loss falls: {l:?}");
    assert!(l[5] < l[0] / 2.0, "{l:?}");
    // The CLI's own first step agrees (to the 8 digits it prints).
    let o = run_ok(anfora().arg("run").arg(f.dir.join("train.py")).args([
        "--entry",
        "step",
        &list_text(&x, 4),
        &list_text(&y, 1),
    ]));
    let cli = printed_numbers(&text(&o.stdout));
    assert_eq!(cli.len(), 1, "{}", text(&o.stdout));
    assert!((cli[0] - l[0]).abs() <= 1e-6 * l[0], "{cli:?} vs {l:?}");
    // Three steps, saved, then three more from the saved model: the same six losses, bit for
    // bit (each step trains on the same eight examples).
    train(&model, "3", &dir.join("three.anfora"));
    let resumed = train(&dir.join("three.anfora"), "3", &dir.join("resumed.anfora"));
    assert_eq!(losses(&resumed), all[3..].to_vec());
    assert_eq!(
        std::fs::read(dir.join("resumed.anfora")).unwrap(),
        std::fs::read(dir.join("six.anfora")).unwrap(),
        "the same Parameters give the same file"
    );
    // The trained model is a model file the CLI reads, with the Parameters changed.
    let o = run_ok(anfora().arg("inspect").arg(dir.join("six.anfora")));
    assert!(
        text(&o.stdout).contains("W: float32[4, 1]"),
        "{}",
        text(&o.stdout)
    );
    assert_ne!(
        std::fs::read(dir.join("six.anfora")).unwrap(),
        std::fs::read(&model).unwrap()
    );
    // Bad arguments.
    let o = f
        .program("train_on_device")
        .args(["a", "b", "c", "many", "d"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("STEPS"), "{}", text(&o.stderr));
}

#[test]
fn c_api_error_paths_and_threads() {
    let Some(f) = fixture() else { return };
    let bytes = std::fs::read(f.path("mlp.anfora")).unwrap();
    let truncated = f.path("truncated.anfora");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let scratch = f.path("api-errors");
    std::fs::create_dir_all(&scratch).unwrap();
    let o = run_ok(
        f.program("api_errors")
            .arg(f.path("mlp.anfora"))
            .arg(&truncated)
            .arg(f.path("train.anfora"))
            .arg(f.path("checked.anfora"))
            .arg(&scratch),
    );
    let out = text(&o.stdout);
    assert!(!out.contains("FAILED"), "{out}");
    assert!(out.trim_end().ends_with("checks passed"), "{out}");
    let count: usize = out
        .trim_end()
        .rsplit(' ')
        .nth(2)
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(count >= 94, "{out}");
}

#[test]
fn cpp_wrapper() {
    let Some(f) = fixture() else { return };
    if f.cxx.is_none() {
        return;
    }
    let scratch = f.path("wrapper");
    std::fs::create_dir_all(&scratch).unwrap();
    let o = run_ok(
        f.program("api_wrapper")
            .arg(f.path("mlp.anfora"))
            .arg(f.path("train.anfora"))
            .arg(&scratch),
    );
    let out = text(&o.stdout);
    assert!(!out.contains("FAILED"), "{out}");
    assert!(out.trim_end().ends_with("checks passed"), "{out}");
    // The wrapper's result is the CLI's, byte for byte.
    let x = [1.0f32, 2.0, 3.0, 4.0, 0.5, -1.0, 0.25, 2.0];
    let cli = run_both(f, "wrapper-mlp", "mlp.anfora", &[f32s(&x, &[2, 4])]);
    let hex: String = cli[0]
        .to_le_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert!(
        out.contains(&format!("out0 float32[2, 3] {hex}\n")),
        "{out}\n{hex}"
    );
}

#[test]
fn examples_link_statically() {
    let Some(f) = fixture() else { return };
    let lib = runtime_library().with_extension("a");
    if !lib.exists() {
        eprintln!("skipping the static link: no {}", lib.display());
        return;
    }
    let bin = f.path("bin-static");
    run_ok(
        Command::new("bash")
            .arg(root().join("examples/c/build.sh"))
            .arg(&bin)
            .env("CC", &f.cc)
            .env("CFLAGS", "-Werror")
            .env("ANFORA_LIB", &lib),
    );
    let program = std::fs::read(bin.join("run_model")).unwrap();
    let needs_so = program.windows(20).any(|w| w == b"libanfora_runtime.so");
    assert!(
        !needs_so,
        "the static run_model still names libanfora_runtime.so"
    );
    // The same bytes as the CLI's.
    let x = [1.0f32, 2.0, 3.0, 4.0, 0.5, -1.0, 0.25, 2.0];
    let cli = run_both(f, "static-mlp", "mlp.anfora", &[f32s(&x, &[2, 4])]);
    let out = f.path("static-mlp/static");
    std::fs::create_dir_all(&out).unwrap();
    run_ok(
        Command::new(bin.join("run_model"))
            .arg(f.path("mlp.anfora"))
            .arg(f.path("static-mlp/in0.npy"))
            .arg("-o")
            .arg(&out),
    );
    assert_eq!(
        std::fs::read(out.join("out0.npy")).unwrap(),
        npy::write(&cli[0])
    );
}
