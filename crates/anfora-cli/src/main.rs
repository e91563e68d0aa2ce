//! `anfora`: compile and run Python files.
//!
//! * `anfora run FILE [--entry NAME] [ARG ...]` calls a module-level function and prints its
//!   result with `repr()`.
//! * `anfora dump FILE [--entry NAME] --format ir|dot [-o PATH]` writes the IR.
//! * `anfora check FILE` lists every unsupported construct in the file.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anfora_driver::{Failure, Session, literal_value, repr};
use anfora_vm::Options;
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(name = "anfora", version, about = "A graph compiler for a subset of Python")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile a function of FILE and call it with ARGs (Python literals).
    Run {
        file: PathBuf,
        /// The function to call.
        #[arg(long, default_value = "main")]
        entry: String,
        /// Deepest chain of nested (non-tail) calls before RecursionError.
        #[arg(long, default_value_t = 10_000)]
        max_depth: usize,
        /// Arguments: ints, floats, True/False/None, strings, tuples; lists become tensors.
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Write the IR of a function and every graph it reaches.
    Dump {
        file: PathBuf,
        #[arg(long, default_value = "main")]
        entry: String,
        #[arg(long, value_enum, default_value_t = Format::Ir)]
        format: Format,
        /// Output file (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Arguments the function will be called with (used once graphs are specialized).
        #[arg(allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// List every unsupported construct and compile error in FILE.
    Check { file: PathBuf },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Ir,
    Dot,
}

fn read(path: &PathBuf) -> Result<String, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("{} is not valid UTF-8 text", path.display()))
}

fn parse_args(args: &[String]) -> Result<Vec<anfora_vm::Value>, String> {
    args.iter()
        .map(|a| literal_value(a).map_err(|e| format!("argument `{a}`: {e}")))
        .collect()
}

/// Runs the command; returns the exit status.
fn execute(cli: Cli) -> u8 {
    let stderr = |msg: &str| {
        eprint!("{msg}");
    };
    match cli.command {
        Command::Run {
            file,
            entry,
            max_depth,
            args,
        } => {
            let text = match read(&file) {
                Ok(t) => t,
                Err(e) => {
                    stderr(&format!("error: {e}\n"));
                    return 1;
                }
            };
            let args = match parse_args(&args) {
                Ok(a) => a,
                Err(e) => {
                    stderr(&format!("error: {e}\n"));
                    return 2;
                }
            };
            let mut session = Session::load(&file.display().to_string(), &text, Options { max_depth });
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            let result = session.run(&entry, args, &mut out);
            let _ = out.flush();
            match result {
                Ok(v) => {
                    let _ = writeln!(out, "{}", repr(&v));
                    let _ = out.flush();
                    0
                }
                Err(f) => {
                    stderr(&session.render(&f));
                    if matches!(f, Failure::Usage(_)) { 2 } else { 1 }
                }
            }
        }
        Command::Dump {
            file,
            entry,
            format,
            output,
            args,
        } => {
            let text = match read(&file) {
                Ok(t) => t,
                Err(e) => {
                    stderr(&format!("error: {e}\n"));
                    return 1;
                }
            };
            if let Err(e) = parse_args(&args) {
                stderr(&format!("error: {e}\n"));
                return 2;
            }
            let mut session = Session::load(&file.display().to_string(), &text, Options::default());
            let g = match session.compile(&entry) {
                Ok(g) => g,
                Err(f) => {
                    stderr(&session.render(&f));
                    return if matches!(f, Failure::Usage(_)) { 2 } else { 1 };
                }
            };
            let module = &session.frontend.module;
            let text = match format {
                Format::Ir => anfora_ir::print::print_module(module, g),
                Format::Dot => anfora_ir::dot::to_dot(module, g),
            };
            match output {
                Some(path) => {
                    if let Err(e) = std::fs::write(&path, text) {
                        stderr(&format!("error: cannot write {}: {e}\n", path.display()));
                        return 1;
                    }
                }
                None => print!("{text}"),
            }
            0
        }
        Command::Check { file } => {
            let text = match read(&file) {
                Ok(t) => t,
                Err(e) => {
                    stderr(&format!("error: {e}\n"));
                    return 1;
                }
            };
            let mut session = Session::load(&file.display().to_string(), &text, Options::default());
            let diags = session.check();
            if diags.is_empty() {
                println!("{}: no problems found", file.display());
                0
            } else {
                stderr(&anfora_ir::diag::render_all(&diags, &session.frontend.module.sources));
                1
            }
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Deep recursion in user code runs on the VM's own stack, but parsing and lowering deeply
    // nested expressions recurse: give the work a large stack.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("anfora: internal error: {info}\nThis is a bug in anfora; please report it with the input that caused it.");
    }));
    let worker = std::thread::Builder::new()
        .name("anfora".into())
        .stack_size(512 << 20)
        .spawn(move || execute(cli));
    match worker.map(|h| h.join()) {
        Ok(Ok(code)) => ExitCode::from(code),
        _ => ExitCode::from(101),
    }
}
