//! Compile-time diagnostics: a stable code, a message, the span, an underline label and a
//! hint, rendered with miette as `file:line:col`, the source line and an underline.

use std::fmt;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};

use crate::{Location, SourceMap, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One diagnostic. Codes are stable and listed in `docs/errors.md`.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    pub span: Span,
    /// Text under the underline.
    pub label: String,
    pub hint: Option<String>,
    /// Further labelled spans in the same file (e.g. the other branch of a join).
    pub related: Vec<(Span, String)>,
    /// Lines printed after the report, such as the chain of calls that led here.
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            span,
            label: String::new(),
            hint: None,
            related: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_related(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.related.push((span, label.into()));
        self
    }

    /// File name and 1-based line/column of the primary span.
    pub fn location<'a>(&self, sources: &'a SourceMap) -> Option<(&'a str, Location)> {
        sources
            .location(self.span)
            .map(|(f, loc)| (f.name.as_str(), loc))
    }

    /// `file:line:col: error[CODE]: message` on one line.
    pub fn short(&self, sources: &SourceMap) -> String {
        format!(
            "{}: {}[{}]: {}",
            sources.describe(self.span),
            self.severity_word(),
            self.code,
            self.message
        )
    }

    fn severity_word(&self) -> &'static str {
        match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }

    /// The full report: header, `╭─[file:line:col]`, source lines, underline, hint.
    pub fn render(&self, sources: &SourceMap) -> String {
        let Some(file) = sources.get(self.span.file) else {
            let mut s = format!(
                "{}[{}]: {}\n",
                self.severity_word(),
                self.code,
                self.message
            );
            if let Some(h) = &self.hint {
                s.push_str(&format!("  help: {h}\n"));
            }
            return s;
        };
        // miette counts lines from the start of the text it gets; pad excerpts so that reported
        // lines match the real file.
        let padding = "\n".repeat(file.line_offset as usize);
        let text = format!("{padding}{}", file.text);
        let shift = padding.len();
        let label = |span: Span, label: &str| {
            let start = span.start as usize + shift;
            let len = (span.end.saturating_sub(span.start)) as usize;
            LabeledSpan::new(
                (!label.is_empty()).then(|| label.to_string()),
                start,
                shown_len(&text, start, len.max(1)),
            )
        };
        let mut labels = vec![label(self.span, &self.label)];
        for (span, text) in &self.related {
            if span.file == self.span.file {
                labels.push(label(*span, text));
            }
        }
        let report = Report {
            header: format!("{}[{}]: {}", self.severity_word(), self.code, self.message),
            hint: self.hint.clone(),
            source: Excerpts {
                name: file.name.clone(),
                text,
            },
            labels,
        };
        let mut out = String::new();
        let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .with_context_lines(1)
            .with_width(100);
        if handler.render_report(&mut out, &report).is_err() {
            return self.short(sources);
        }
        for note in &self.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        out
    }
}

/// Renders several diagnostics, then a summary line.
pub fn render_all(diags: &[Diagnostic], sources: &SourceMap) -> String {
    let mut out = String::new();
    for d in diags {
        out.push_str(&d.render(sources));
        out.push('\n');
    }
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    if errors > 0 {
        out.push_str(&format!(
            "error: could not compile: {errors} error{}\n",
            if errors == 1 { "" } else { "s" }
        ));
    }
    out
}

#[derive(Debug)]
struct Report {
    header: String,
    hint: Option<String>,
    source: Excerpts,
    labels: Vec<LabeledSpan>,
}

/// Lines longer than this many bytes are shown as a window around the span, not whole (a
/// generated file may hold a megabyte on one line).
const LONG_LINE: usize = 240;
/// Bytes shown on each side of a span in a long line.
const WINDOW: usize = 80;

/// The length of the underline of a span at `start`: the span's, but within a window of its
/// line when the line is long.
fn shown_len(text: &str, start: usize, len: usize) -> usize {
    let start = start.min(text.len());
    let (line_start, line_end) = line_bounds(text, start);
    if line_end - line_start <= LONG_LINE {
        return len;
    }
    let cut = text[start..].floor_char_boundary(len.min(line_end - start).min(WINDOW));
    cut.max(1)
}

/// The byte range of the line holding byte `at` of `text`, without its newline.
fn line_bounds(text: &str, at: usize) -> (usize, usize) {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    (start, end)
}

/// The source text as the report reads it: whole lines with their context, except that a long
/// line is cut to a window around the span.
#[derive(Debug)]
struct Excerpts {
    name: String,
    text: String,
}

impl SourceCode for Excerpts {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let whole = self.text.as_str().read_span(span, before, after)?;
        let long = whole
            .data()
            .split(|&b| b == b'\n')
            .any(|l| l.len() > LONG_LINE);
        if before == 0 || !long {
            // (The report's location line reads only the line and column of a span without
            // context.)
            return Ok(Box::new(MietteSpanContents::new_named(
                self.name.clone(),
                whole.data(),
                *whole.span(),
                whole.line(),
                whole.column(),
                whole.line_count(),
            )));
        }
        let text = self.text.as_str();
        let at = span.offset().min(text.len());
        let (line_start, line_end) = line_bounds(text, at);
        let start = text.floor_char_boundary(at.saturating_sub(WINDOW).max(line_start));
        let end = text.ceil_char_boundary((at + span.len() + WINDOW).min(line_end));
        let line = text.as_bytes()[..start]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            &text.as_bytes()[start..end],
            SourceSpan::new(start.into(), end - start),
            line,
            0,
            1,
        )))
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.header)
    }
}

impl std::error::Error for Report {}

impl miette::Diagnostic for Report {
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.hint
            .as_ref()
            .map(|h| Box::new(h.clone()) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(self.labels.clone().into_iter()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SourceFile;

    #[test]
    fn long_lines_show_a_window_around_the_span() {
        let mut sources = SourceMap::new();
        let pad = "a".repeat(1_000_000);
        let text = format!("def main():\n    y = '{pad}' + zz + '{pad}'\n    return y\n");
        let at = text.find("zz").unwrap() as u32;
        let file = sources.add(SourceFile::new("long.py", text.as_str(), 0));
        let d = Diagnostic::error(
            "E0201",
            "name 'zz' is not defined",
            Span::new(file, at, at + 2),
        )
        .with_label("not defined");
        let out = d.render(&sources);
        assert!(out.len() < 1_000, "{} bytes", out.len());
        assert!(out.contains("[long.py:2:1000014]"), "{out}");
        let shown = out.lines().find(|l| l.starts_with(" 2 │")).unwrap();
        let underline = out.lines().find(|l| l.contains('┬')).unwrap();
        let column = |l: &str, p: &str| l.char_indices().position(|(i, _)| l[i..].starts_with(p));
        assert_eq!(column(shown, "zz"), column(underline, "─┬"), "{out}");
        assert_eq!(shown.matches('a').count(), 2 * (WINDOW - 4), "{out}");
    }

    #[test]
    fn renders_location_line_underline_and_hint() {
        let mut sources = SourceMap::new();
        let file = sources.add(SourceFile::new(
            "prog.py",
            "def main():\n    x = 1\n    try:\n        pass\n",
            0,
        ));
        let d = Diagnostic::error(
            "E0101",
            "`try` statements are not supported",
            Span::new(file, 26, 29),
        )
        .with_label("exception handling")
        .with_hint("errors cannot be caught in compiled code");
        let (name, loc) = d.location(&sources).unwrap();
        assert_eq!((name, loc.line, loc.col), ("prog.py", 3, 5));
        let text = d.render(&sources);
        assert!(
            text.contains("error[E0101]: `try` statements are not supported"),
            "{text}"
        );
        assert!(text.contains("[prog.py:3:5]"), "{text}");
        assert!(text.contains(" 3 │     try:"), "{text}");
        assert!(text.contains("exception handling"), "{text}");
        assert!(
            text.contains("help: errors cannot be caught in compiled code"),
            "{text}"
        );
        assert_eq!(
            d.short(&sources),
            "prog.py:3:5: error[E0101]: `try` statements are not supported"
        );
    }

    #[test]
    fn excerpts_report_real_line_numbers() {
        let mut sources = SourceMap::new();
        let file = sources.add(SourceFile::new("m.py", "def f():\n    try:\n", 40));
        let d = Diagnostic::error("E0101", "no", Span::new(file, 13, 16));
        let text = d.render(&sources);
        assert!(text.contains("[m.py:42:5]"), "{text}");
        assert!(text.contains("42 │     try:"), "{text}");
    }
}
