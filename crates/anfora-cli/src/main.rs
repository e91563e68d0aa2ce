//! `anfora`: compile and run Python files.
//!
//! * `anfora run FILE [--entry NAME] [ARG ...]` calls a module-level function and prints its
//!   result with `repr()`.
//! * `anfora dump FILE [--entry NAME] --format ir|dot [-o PATH]` writes the IR.
//! * `anfora check FILE` lists every unsupported construct in the file.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anfora_driver::{Engine, Failure, Session, literal_value, repr};
use anfora_vm::Options;
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "anfora",
    version,
    about = "A graph compiler for a subset of Python"
)]
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
        /// `compiled` (the optimizing pipeline) or `reference` (the reference VM on the
        /// parsed graphs, the oracle).
        #[arg(long, value_enum, default_value_t = EngineArg::Compiled)]
        engine: EngineArg,
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
    String::from_utf8(bytes).map_err(|_| format!("{} is not valid UTF-8 text", path.display()))
}

fn parse_args(args: &[String]) -> Result<Vec<anfora_vm::Value>, String> {
    args.iter()
        .map(|a| literal_value(a).map_err(|e| format!("argument `{a}`: {e}")))
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

fn run(
    file: PathBuf,
    entry: String,
    max_depth: usize,
    engine: EngineArg,
    args: Vec<String>,
) -> Result<(), Exit> {
    let text = read_source(&file)?;
    let args = parse_args(&args).map_err(|e| Exit(2, format!("error: {e}\n")))?;
    let mut session = Session::load(&file.display().to_string(), &text, Options { max_depth });
    session.engine = match engine {
        EngineArg::Compiled => Engine::Compiled,
        EngineArg::Reference => Engine::Reference,
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = session.run(&entry, args, &mut out);
    let value = result.map_err(|f| {
        let _ = out.flush();
        failure(&session, &f)
    })?;
    let _ = writeln!(out, "{}", repr(&value));
    let _ = out.flush();
    Ok(())
}

fn dump(
    file: PathBuf,
    entry: String,
    format: Format,
    output: Option<PathBuf>,
    args: Vec<String>,
) -> Result<(), Exit> {
    let text = read_source(&file)?;
    parse_args(&args).map_err(|e| Exit(2, format!("error: {e}\n")))?;
    let mut session = Session::load(&file.display().to_string(), &text, Options::default());
    let g = session.compile(&entry).map_err(|f| failure(&session, &f))?;
    let module = &session.frontend.module;
    let text = match format {
        Format::Ir => anfora_ir::print::print_module(module, g),
        Format::Dot => anfora_ir::dot::to_dot(module, g),
    };
    match output {
        Some(path) => std::fs::write(&path, text)
            .map_err(|e| Exit(1, format!("error: cannot write {}: {e}\n", path.display()))),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

fn check(file: PathBuf) -> Result<(), Exit> {
    let text = read_source(&file)?;
    let mut session = Session::load(&file.display().to_string(), &text, Options::default());
    let diags = session.check();
    if diags.is_empty() {
        println!("{}: no problems found", file.display());
        return Ok(());
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
            max_depth,
            engine,
            args,
        } => run(file, entry, max_depth, engine, args),
        Command::Dump {
            file,
            entry,
            format,
            output,
            args,
        } => dump(file, entry, format, output, args),
        Command::Check { file } => check(file),
    };
    match result {
        Ok(()) => 0,
        Err(Exit(code, message)) => {
            eprint!("{message}");
            code
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Deep recursion in user code runs on the VM's own stack, but parsing and lowering deeply
    // nested expressions recurse: give the work a large stack.
    std::panic::set_hook(Box::new(|info| {
        eprintln!(
            "anfora: internal error: {info}\nThis is a bug in anfora; please report it with the input that caused it."
        );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_as_literals() {
        let args = parse_args(&["3".into(), "(1, 'a')".into()]).unwrap();
        assert_eq!(repr(&args[0]), "3");
        assert_eq!(repr(&args[1]), "(1, 'a')");
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
