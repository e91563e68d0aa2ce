//! What both engines share: their options, and the Python exception a program raises with
//! its traceback.

use std::fmt::Write as _;
use std::sync::Arc;

use crate::{SourceMap, Span};

#[derive(Clone, Debug)]
pub struct Options {
    /// Deepest allowed chain of calls of Python functions (CPython's recursion limit). A tail
    /// call runs in the caller's frame, but one to a `def` still counts a level until that
    /// frame returns, so tail recursion stops where CPython's recursion would; the jumps of
    /// loops and branches count nothing.
    pub max_depth: usize,
}

/// The `RecursionError` both engines raise when a call would go past `max_depth`.
pub fn recursion_error(max_depth: usize) -> (&'static str, String) {
    let message = format!("maximum recursion depth exceeded ({max_depth} nested calls)");
    ("RecursionError", message)
}

impl Default for Options {
    fn default() -> Self {
        Options { max_depth: 10_000 }
    }
}

/// One line of a Python-level traceback.
#[derive(Clone, Debug)]
pub struct TraceEntry {
    pub function: Arc<str>,
    pub span: Span,
}

/// A Python exception raised while running, with where it happened and the calls leading there.
#[derive(Clone, Debug)]
pub struct RuntimeError {
    /// Python exception class, e.g. `ZeroDivisionError`.
    pub kind: String,
    pub message: String,
    pub span: Span,
    /// Outermost call first.
    pub trace: Vec<TraceEntry>,
}

impl RuntimeError {
    /// `Kind: message`, as the last line of a Python traceback.
    pub fn headline(&self) -> String {
        if self.message.is_empty() {
            self.kind.clone()
        } else {
            format!("{}: {}", self.kind, self.message)
        }
    }

    /// A Python-style traceback with the failing expression underlined. As CPython does, a
    /// run of more than three identical entries (file, line, function: deep recursion) shows
    /// three of them and "[Previous line repeated N more times]".
    pub fn render(&self, sources: &SourceMap) -> String {
        let mut out = String::from("Traceback (most recent call last):\n");
        let mut run: Option<(&TraceEntry, usize)> = None;
        for entry in &self.trace {
            match &mut run {
                Some((last, n)) if same_line(sources, last, entry) => *n += 1,
                _ => {
                    repeated(&mut out, run.map_or(0, |(_, n)| n));
                    run = Some((entry, 1));
                }
            }
            if run.is_some_and(|(_, n)| n <= 3) {
                render_entry(&mut out, sources, entry);
            }
        }
        repeated(&mut out, run.map_or(0, |(_, n)| n));
        let _ = writeln!(out, "{}", self.headline());
        if let Some((file, loc)) = sources.location(self.span) {
            let _ = writeln!(
                out,
                "error: runtime error at {}:{}:{}",
                file.name, loc.line, loc.col
            );
        }
        out
    }
}

/// Whether two entries name the same file, line and function (CPython's test for a repeat).
fn same_line(sources: &SourceMap, a: &TraceEntry, b: &TraceEntry) -> bool {
    let line = |e: &TraceEntry| {
        sources
            .location(e.span)
            .map(|(f, loc)| (f.name.clone(), loc.line))
    };
    a.function == b.function && line(a) == line(b)
}

/// CPython's line for the entries of a run past its first three.
fn repeated(out: &mut String, run: usize) {
    match run.saturating_sub(3) {
        0 => {}
        1 => out.push_str("  [Previous line repeated 1 more time]\n"),
        n => {
            let _ = writeln!(out, "  [Previous line repeated {n} more times]");
        }
    }
}

/// One entry: its file, line and function, the source line and the call underlined.
fn render_entry(out: &mut String, sources: &SourceMap, entry: &TraceEntry) {
    let Some((file, loc)) = sources.location(entry.span) else {
        let _ = writeln!(out, "  (compiled code), in {}", entry.function);
        return;
    };
    let _ = writeln!(
        out,
        "  File \"{}\", line {}, in {}",
        file.name, loc.line, entry.function
    );
    let line = file.line_text(entry.span.start);
    let trimmed = line.trim_start();
    let indent = line.chars().count() - trimmed.chars().count();
    let _ = writeln!(out, "    {}", trimmed.trim_end());
    let start = (loc.col as usize - 1).saturating_sub(indent);
    let text = file.slice(entry.span);
    let width = text.lines().next().unwrap_or("").chars().count().max(1);
    let _ = writeln!(out, "    {}{}", " ".repeat(start), "^".repeat(width));
}
