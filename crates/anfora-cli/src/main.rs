//! `anfora`: compile and run Python files.
//!
//! * `anfora run FILE [--entry NAME] [ARG ...]` calls a module-level function and prints its
//!   result with `repr()`.
//! * `anfora dump FILE [--entry NAME] --format ir|dot [-o PATH]` writes the IR.
//! * `anfora check FILE` lists every unsupported construct in the file.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anfora_driver::pipeline::millis;
use anfora_driver::{DumpSpec, Dumps, stage_names};
use anfora_ir::Options;
use anfora_session::{Arg, Engine, Failure, Session, literal_value, repr};

use clap::{Args, Parser, Subcommand, ValueEnum};

mod convert;
mod model;

#[derive(Parser)]
#[command(
    name = "anfora",
    version,
    about = "A graph compiler for a subset of Python"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Join the MPI job's process group first (run under `mpirun`), so the program's
    /// collectives (`ops.all_reduce`, ...) run across the job's processes.
    #[arg(long, global = true)]
    distributed: bool,
    /// Seconds one collective waits for the other processes before it fails.
    #[arg(long, global = true, default_value_t = 300.0)]
    dist_timeout: f64,
}

/// Starts MPI for `--distributed`.
fn join_process_group(cli: &Cli) -> Result<(), String> {
    if !cli.distributed {
        return Ok(());
    }
    if !(cli.dist_timeout.is_finite() && cli.dist_timeout > 0.0) {
        return Err(format!(
            "--dist-timeout must be a positive number of seconds, not {}",
            cli.dist_timeout
        ));
    }
    #[cfg(feature = "mpi")]
    {
        anfora_dist::init(std::time::Duration::from_secs_f64(cli.dist_timeout)).map(drop)
    }
    #[cfg(not(feature = "mpi"))]
    {
        Err("this build of anfora has no MPI: build it with the `mpi` feature".into())
    }
}

#[derive(Subcommand)]
enum Command {
    /// Compile a function of FILE for ARGs and write it as a model file.
    Export {
        file: PathBuf,
        #[arg(long, default_value = "main")]
        entry: String,
        /// The model file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// `anfora` (the model file `anfora run-model`, `anfora.load` and the C runtime load)
        /// or `onnx` (programs without recursion or escaping closures).
        #[arg(long, default_value = "anfora")]
        format: String,
        /// Example arguments (Python literals; lists become tensors): the model takes
        /// tensors of their dtypes and shapes, and Python numbers are fixed at their values.
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Show what a model file holds: inputs, outputs, graphs, Parameters, sizes.
    Inspect { model: PathBuf },
    /// Optimize and quantize a model file offline; prints what changed and the sizes.
    Convert(convert::Args),
    /// Run a model file on .npy inputs; writes out0.npy, ... beside the first input or in -o.
    RunModel {
        model: PathBuf,
        inputs: Vec<PathBuf>,
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Compile a function of FILE and call it with ARGs (Python literals).
    Run {
        file: PathBuf,
        /// The function to call.
        #[arg(long, default_value = "main")]
        entry: String,
        #[command(flatten)]
        flags: RunFlags,
        /// Arguments: ints, floats, True/False/None, strings, tuples; lists become tensors;
        /// `mutable(x)` compiles for any value of x's type and shape instead of its value.
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Write the IR of a function and every graph it reaches, after a stage of the pipeline.
    Dump {
        file: PathBuf,
        #[arg(long, default_value = "main")]
        entry: String,
        #[arg(long, value_enum, default_value_t = Format::Ir)]
        format: Format,
        /// `parse`, `resolve`, `grad`, `infer`, `auto_monad`, `optimize`, `lower` (the linear program), or `all`
        /// (one numbered file per stage and optimizer pass, in the directory given by -o).
        #[arg(long, default_value = "resolve")]
        stage: String,
        /// Output file, or directory for `--stage all` (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Arguments the function is specialized for (the infer and optimize stages).
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// List every unsupported construct and compile error in FILE.
    Check { file: PathBuf },
    /// List the devices that have a backend, and what each runs on.
    Devices,
}

#[derive(Clone, Copy, ValueEnum)]
enum EngineArg {
    Compiled,
    Reference,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Ir,
    Dot,
}

fn read(path: &PathBuf) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        // Located in the valid text before the bad byte, as diagnostics locate offsets.
        let valid = String::from_utf8_lossy(&bytes[..at]);
        let loc = anfora_ir::SourceFile::new("", &*valid, 0).location(at as u32);
        format!(
            "{}:{}:{}: not valid UTF-8 text (byte 0x{:02x}); Python source is UTF-8",
            path.display(),
            loc.line,
            loc.col,
            bytes[at]
        )
    })
}

/// Parses command-line arguments: Python literals, optionally wrapped in `mutable(...)` to
/// compile once for any value of that type and shape.
fn parse_args(args: &[String]) -> Result<Vec<Arg>, String> {
    args.iter()
        .map(|a| {
            let text = a.trim();
            let (inner, mutable) = match text
                .strip_prefix("mutable(")
                .and_then(|r| r.strip_suffix(')'))
            {
                Some(inner) => (inner, true),
                None => (text, false),
            };
            let value = literal_value(inner).map_err(|e| format!("argument `{a}`: {e}"))?;
            Ok(Arg { value, mutable })
        })
        .collect()
}

/// A command's failure: the exit status and what to print on stderr.
struct Exit(u8, String);

fn read_source(path: &PathBuf) -> Result<String, Exit> {
    read(path).map_err(|e| Exit(1, format!("error: {e}\n")))
}

fn failure(session: &Session, f: &Failure) -> Exit {
    let code = if matches!(f, Failure::Usage(_)) { 2 } else { 1 };
    Exit(code, session.render(f))
}

/// The options of `anfora run` (flattened into its arguments).
#[derive(Args)]
struct RunFlags {
    /// Deepest chain of nested (non-tail) calls before RecursionError.
    #[arg(long, default_value_t = 10_000)]
    max_depth: usize,
    /// `compiled` (the optimizing pipeline) or `reference` (the reference VM on the
    /// parsed graphs, the oracle).
    #[arg(long, value_enum, default_value_t = EngineArg::Compiled)]
    engine: EngineArg,
    /// Print why the function compiled (its signature, or what changed) on stderr.
    #[arg(long)]
    explain_compile: bool,
    /// Print the time of each compile stage and of the run on stderr.
    #[arg(long)]
    timings: bool,
    /// The device to compile for: `cpu`, or `cuda:N` when a backend for it is registered.
    #[arg(long, default_value = "cpu")]
    device: String,
}

fn run(file: PathBuf, entry: String, flags: RunFlags, args: Vec<String>) -> Result<(), Exit> {
    let RunFlags {
        max_depth,
        engine,
        explain_compile,
        timings,
        device,
    } = flags;
    let device = anfora_tensor::Device::parse(&device)
        .map_err(|e| Exit(2, format!("error: {}\n", e.message)))?;
    anfora_ops::kernels::set_default_device(device)
        .map_err(|e| Exit(2, format!("error: {e}\n")))?;
    let text = read_source(&file)?;
    let args = parse_args(&args).map_err(|e| Exit(2, format!("error: {e}\n")))?;
    let mut session = Session::load(&file.display().to_string(), &text, Options { max_depth });
    session.time_runs = timings;
    session.engine = match engine {
        EngineArg::Compiled => Engine::Compiled,
        EngineArg::Reference => Engine::Reference,
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = session.call(&entry, args, &mut out);
    let flushed = out.flush();
    for w in session.take_warnings() {
        warn(&format!("{w}\n"));
    }
    if explain_compile && let Some(why) = session.last_explanation() {
        warn(&format!("{why}\n"));
    }
    if timings {
        if let Some(c) = session.last_compiled() {
            warn(&c.timing_report());
        }
        if let Some(d) = session.last_run_time() {
            warn(&format!("run: {} ms\n", millis(d)));
        }
    }
    let value = result.map_err(|f| failure(&session, &f))?;
    flushed
        .and_then(|()| writeln!(out, "{}", repr(&value)))
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

fn dump(
    file: PathBuf,
    entry: String,
    format: Format,
    stage: String,
    output: Option<PathBuf>,
    args: Vec<String>,
) -> Result<(), Exit> {
    let all = stage == "all";
    if !all && !stage_names().any(|s| s == stage) {
        let names: Vec<&str> = stage_names().collect();
        return Err(Exit(
            2,
            format!(
                "error: unknown stage '{stage}' ({} or all)\n",
                names.join(", ")
            ),
        ));
    }
    if let Some(path) = &output
        && is_same_file(path, &file)
    {
        return Err(Exit(
            2,
            format!(
                "error: the output {} is the source file itself; choose another path with -o\n",
                path.display()
            ),
        ));
    }
    let text = read_source(&file)?;
    let args = parse_args(&args).map_err(|e| Exit(2, format!("error: {e}\n")))?;
    let mut session = Session::load(&file.display().to_string(), &text, Options::default());
    let specialize = !matches!(stage.as_str(), "parse" | "resolve" | "grad");
    let mut dumps = Dumps::new(DumpSpec {
        stage: (!all).then(|| stage.clone()),
        ir: matches!(format, Format::Ir),
        dot: matches!(format, Format::Dot),
    });
    let result =
        session.compile_pipeline(&entry, specialize.then_some(args.as_slice()), &mut |view| {
            dumps.observe(&view)
        });
    let dir = || {
        output
            .clone()
            .unwrap_or_else(|| PathBuf::from("anfora_dump"))
    };
    let write_all = |dumps: &Dumps| {
        dumps
            .write(&dir(), "")
            .map_err(|e| Exit(1, format!("error: cannot write {}: {e}\n", dir().display())))
    };
    // What the stages before a failure produced is written even so: it is what one needs to
    // see why the next stage failed.
    if let Err(f) = result {
        if all && !dumps.dumps.is_empty() {
            write_all(&dumps)?;
        }
        return Err(failure(&session, &f));
    }
    if all {
        return write_all(&dumps);
    }
    let last = dumps.dumps.pop();
    let text = last.and_then(|d| d.ir.or(d.dot)).unwrap_or_default();
    match output {
        Some(path) => std::fs::write(&path, text)
            .map_err(|e| Exit(1, format!("error: cannot write {}: {e}\n", path.display()))),
        None => emit(&text),
    }
}

fn check(file: PathBuf) -> Result<(), Exit> {
    let text = read_source(&file)?;
    let mut session = Session::load(&file.display().to_string(), &text, Options::default());
    let diags = session.check();
    if diags.is_empty() {
        return emit(&format!("{}: no problems found\n", file.display()));
    }
    Err(Exit(
        1,
        anfora_ir::diag::render_all(&diags, &session.frontend.module.sources),
    ))
}

/// Runs the command; returns the exit status.
fn execute(cli: Cli) -> u8 {
    let result = match cli.command {
        Command::Run {
            file,
            entry,
            flags,
            args,
        } => run(file, entry, flags, args),
        Command::Dump {
            file,
            entry,
            format,
            stage,
            output,
            args,
        } => dump(file, entry, format, stage, output, args),
        Command::Check { file } => check(file),
        Command::Export {
            file,
            entry,
            output,
            format,
            args,
        } => model::export(file, entry, args, output, format),
        Command::Inspect { model } => model::inspect(model),
        Command::Convert(args) => convert::convert(args),
        Command::RunModel {
            model,
            inputs,
            output,
        } => model::run_model(model, inputs, output),
        Command::Devices => {
            let lines = anfora_tensor::device::devices()
                .into_iter()
                .filter_map(|d| {
                    let b = anfora_tensor::device::backend(d).ok()?;
                    Some(format!("{d}\t{}\n", b.describe()))
                });
            emit(&lines.collect::<String>())
        }
    };
    match result {
        Ok(()) => 0,
        Err(Exit(code, message)) => {
            warn(&message);
            code
        }
    }
}

/// Whether two paths name one existing file (through links and relative paths).
fn is_same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Writes `text` to standard output. A write that fails (a closed pipe, a full disk) is an
/// error, exit status 1, never a panic as `print!` would give.
fn emit(text: &str) -> Result<(), Exit> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(stdout_error)
}

fn stdout_error(e: std::io::Error) -> Exit {
    Exit(1, format!("error: cannot write to standard output: {e}\n"))
}

/// Writes `text` to standard error. A failed write is ignored: there is nowhere left to
/// report it, and the exit status already says what happened.
fn warn(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// An allocation refused where anfora cannot unwind ends the command with a `MemoryError` line
/// and exit status 1, never an abort (fallible allocations still fail softly).
#[global_allocator]
static ALLOCATOR: anfora_tensor::memory::GuardedAlloc = anfora_tensor::memory::GuardedAlloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Deep recursion in user code runs on the VM's own stack, but parsing and lowering deeply
    // nested expressions recurse: give the work a large stack.
    std::panic::set_hook(Box::new(|info| {
        warn(&format!(
            "anfora: internal error: {info}\nThis is a bug in anfora; please report it with the input that caused it.\n"
        ));
    }));
    let worker = std::thread::Builder::new()
        .name("anfora".into())
        .stack_size(512 << 20)
        .spawn(move || {
            anfora_tensor::run_kernels_on_this_thread();
            #[cfg(feature = "cuda")]
            anfora_cuda::install();
            if let Err(e) = join_process_group(&cli) {
                warn(&format!("anfora: {e}\n"));
                return 2;
            }
            let code = execute(cli);
            #[cfg(feature = "mpi")]
            anfora_dist::finalize();
            code
        });
    match worker.map(|h| h.join()) {
        Ok(Ok(code)) => ExitCode::from(code),
        _ => ExitCode::from(101),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_as_literals() {
        let args = parse_args(&["3".into(), "(1, 'a')".into()]).unwrap();
        assert_eq!(repr(&args[0].value), "3");
        assert!(!args[0].mutable);
        assert_eq!(repr(&args[1].value), "(1, 'a')");
        let args = parse_args(&["mutable(2.5)".into(), " mutable([1, 2]) ".into()]).unwrap();
        assert_eq!(repr(&args[0].value), "2.5");
        assert!(args[0].mutable && args[1].mutable);
        assert_eq!(repr(&args[1].value), "Tensor([1, 2])");
        assert_eq!(
            parse_args(&["x".into()]).unwrap_err(),
            "argument `x`: not a Python literal (numbers, strings, True/False/None, tuples, lists)"
        );
    }

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
