//! Source files and spans. Every node and diagnostic points back into a [`SourceMap`].

use std::sync::Arc;

/// Index of a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A byte range in one source file. `Span::NONE` marks synthetic nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const NONE: Span = Span {
        file: FileId(u32::MAX),
        start: 0,
        end: 0,
    };

    pub fn new(file: FileId, start: u32, end: u32) -> Span {
        Span { file, start, end }
    }

    pub fn is_none(&self) -> bool {
        self.file.0 == u32::MAX
    }

    /// The smallest span covering both; `NONE` is the identity.
    pub fn to(self, other: Span) -> Span {
        if self.is_none() {
            return other;
        }
        if other.is_none() || other.file != self.file {
            return self;
        }
        Span::new(
            self.file,
            self.start.min(other.start),
            self.end.max(other.end),
        )
    }
}

/// A 1-based line and column (columns count characters, as editors do).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    pub line: u32,
    pub col: u32,
}

/// One source text. `line_offset` shifts reported lines when the text is an excerpt of a larger
/// file (the Python package hands over a single function's source).
#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: Arc<str>,
    pub line_offset: u32,
    line_starts: Vec<u32>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>, line_offset: u32) -> Self {
        let text: Arc<str> = text.into();
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        SourceFile {
            name: name.into(),
            text,
            line_offset,
            line_starts,
        }
    }

    /// 0-based line index containing byte `offset`.
    fn line_index(&self, offset: u32) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    pub fn location(&self, offset: u32) -> Location {
        let offset = offset.min(self.text.len() as u32);
        let li = self.line_index(offset);
        let start = self.line_starts[li] as usize;
        let col = self.text[start..offset as usize].chars().count() as u32 + 1;
        Location {
            line: li as u32 + 1 + self.line_offset,
            col,
        }
    }

    /// The text of the line holding `offset`, without its newline.
    pub fn line_text(&self, offset: u32) -> &str {
        let li = self.line_index(offset.min(self.text.len() as u32));
        let start = self.line_starts[li] as usize;
        let end = self
            .line_starts
            .get(li + 1)
            .map(|&e| e as usize)
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    pub fn slice(&self, span: Span) -> &str {
        let end = (span.end as usize).min(self.text.len());
        let start = (span.start as usize).min(end);
        &self.text[start..end]
    }
}

/// All source files of a compilation session.
#[derive(Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> Self {
        SourceMap::default()
    }

    pub fn add(&mut self, file: SourceFile) -> FileId {
        self.files.push(file);
        FileId(self.files.len() as u32 - 1)
    }

    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    /// `file:line:col` of the start of `span`, or `<unknown>`.
    pub fn describe(&self, span: Span) -> String {
        match self.get(span.file) {
            Some(f) => {
                let loc = f.location(span.start);
                format!("{}:{}:{}", f.name, loc.line, loc.col)
            }
            None => "<unknown>".to_string(),
        }
    }

    pub fn location(&self, span: Span) -> Option<(&SourceFile, Location)> {
        self.get(span.file).map(|f| (f, f.location(span.start)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_one_based_and_count_chars() {
        let f = SourceFile::new("t.py", "ab\nxé = 1\n", 0);
        assert_eq!(f.location(0), Location { line: 1, col: 1 });
        assert_eq!(f.location(3), Location { line: 2, col: 1 });
        // 'é' is two bytes: the '=' after "xé " is the 4th character.
        assert_eq!(f.location(7), Location { line: 2, col: 4 });
        assert_eq!(f.line_text(5), "xé = 1");
    }

    #[test]
    fn line_offset_shifts_reported_lines() {
        let f = SourceFile::new("t.py", "a\nb", 10);
        assert_eq!(f.location(2).line, 12);
    }

    #[test]
    fn span_union() {
        let a = Span::new(FileId(0), 4, 6);
        let b = Span::new(FileId(0), 1, 5);
        assert_eq!(a.to(b), Span::new(FileId(0), 1, 6));
        assert_eq!(Span::NONE.to(a), a);
    }
}
