//! What both engines share: their options, and the Python exception a program raises with
//! its traceback.

use std::fmt::Write as _;
use std::sync::Arc;

use crate::{SourceMap, Span};

#[derive(Clone, Debug)]
pub struct Options {
    /// Deepest allowed chain of non-tail calls.
    pub max_depth: usize,
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

    /// A Python-style traceback with the failing expression underlined.
    pub fn render(&self, sources: &SourceMap) -> String {
        let mut out = String::from("Traceback (most recent call last):\n");
        for entry in &self.trace {
            match sources.location(entry.span) {
                Some((file, loc)) => {
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
                None => {
                    let _ = writeln!(out, "  (compiled code), in {}", entry.function);
                }
            }
        }
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
