//! The adapter between ruff's Python parser and anfora's AST. This is the only module that uses
//! `ruff_*` crates (they make breaking changes every release), so an upgrade touches this module
//! alone: `stmt` converts statements and function definitions, `expr` expressions, `names`
//! finds the names refused code binds, and `literal` reads command-line literals.
//!
//! Conversion never stops at the first problem: every unsupported construct in the file gets its
//! own diagnostic and becomes an `Invalid` node, so users see all of them at once.

mod expr;
mod literal;
mod names;
mod stmt;
#[cfg(test)]
mod tests;

use std::rc::Rc;
use std::sync::Arc;

use anfora_ir::diag::Diagnostic;
use anfora_ir::{FileId, Span};
use ruff_python_ast as ra;
use ruff_python_parser::{Mode, ParseOptions, parse_unchecked};
use ruff_text_size::{Ranged, TextRange};

use crate::ast::*;
use crate::codes;

pub use literal::parse_literal;

fn options() -> ParseOptions {
    ParseOptions::from(Mode::Module).with_target_version(ra::PythonVersion::PY311)
}

/// Parses `text` as a module and hands its statements to `convert` (not called after a
/// syntax error, which gives `None`); syntax errors and what `convert` reports go to `diags`.
fn convert_statements<R>(
    text: &str,
    file: FileId,
    sink: Sink<'_>,
    convert: impl FnOnce(&mut Converter<'_>, &[ra::Stmt]) -> Option<R>,
) -> Option<R> {
    let parsed = parse_unchecked(text, options());
    let mut cx = Converter::new(file, text, sink.diags, sink.placements);
    cx.syntax_errors(&parsed);
    let body = match parsed.into_syntax() {
        ra::Mod::Module(m) => m.body,
        ra::Mod::Expression(_) => Default::default(),
    };
    let converted = if cx.diags.iter().any(|d| d.code == codes::SYNTAX) {
        None
    } else {
        convert(&mut cx, &body)
    };
    if cx.too_deep {
        // ruff's tree is dropped recursively; give a pathological one a large stack.
        stacker::grow(1 << 30, move || drop(body));
    }
    converted
}

/// Where conversion reports: diagnostics, and the placement blocks it converted.
pub struct Sink<'a> {
    pub diags: &'a mut Vec<Diagnostic>,
    pub placements: &'a mut Vec<anfora_ir::Placement>,
}

/// Parses a whole file; syntax errors and unsupported constructs go to `sink`.
pub fn parse_module(text: &str, file: FileId, sink: Sink<'_>) -> Module {
    let body = convert_statements(text, file, sink, |cx, body| {
        Some(body.iter().map(|s| cx.module_stmt(s)).collect())
    });
    Module {
        file,
        body: body.unwrap_or_default(),
    }
}

/// The first function of `src`, which must convert without diagnostics (for tests).
#[cfg(test)]
pub(crate) fn first_function(src: &str) -> Rc<FunctionDef> {
    let mut diags = Vec::new();
    let sink = Sink {
        diags: &mut diags,
        placements: &mut Vec::new(),
    };
    let m = parse_module(src, FileId(0), sink);
    assert!(diags.is_empty(), "{diags:?}");
    match &m.body[0].kind {
        StmtKind::FunctionDef(f) => f.clone(),
        other => panic!("not a def: {other:?}"),
    }
}

/// Parses the statement(s) of `text` and converts the lambda whose body starts at byte
/// `body_start` (a module-level `f = lambda x: ...`, or a lambda inside any expression) as a
/// function definition.
pub fn parse_lambda(
    text: &str,
    file: FileId,
    body_start: usize,
    sink: Sink<'_>,
) -> Option<Rc<FunctionDef>> {
    use ra::visitor::{Visitor, walk_expr};

    struct Find<'a> {
        at: ruff_text_size::TextSize,
        found: Option<&'a ra::Expr>,
    }
    impl<'a> Visitor<'a> for Find<'a> {
        fn visit_expr(&mut self, e: &'a ra::Expr) {
            if self.found.is_some() {
                return;
            }
            if let ra::Expr::Lambda(l) = e
                && l.body.range().start() == self.at
            {
                self.found = Some(e);
                return;
            }
            stacker::maybe_grow(64 * 1024, 4 << 20, || walk_expr(self, e));
        }
    }

    convert_statements(text, file, sink, |cx, body| {
        let at = u32::try_from(body_start).unwrap_or(u32::MAX);
        let mut find = Find {
            at: ruff_text_size::TextSize::new(at),
            found: None,
        };
        for stmt in body {
            find.visit_stmt(stmt);
        }
        match find.found.map(|e| cx.expr(e).kind) {
            Some(ExprKind::Lambda(def)) => Some(def),
            _ => {
                cx.error(
                    codes::BAD_CALL,
                    "cannot find this lambda in its source",
                    TextRange::default(),
                    "the lambda's line",
                )
                .hint = Some("define the function with `def`".into());
                None
            }
        }
    })
}

/// Parses the source of one function, as `Frontend::parse_function_source` lays it out (the
/// `def` alone, or as the body of an `if`), and converts it without its decorators, which
/// Python has already applied. `None` after a syntax error or when the source holds no `def`.
pub fn parse_function(text: &str, file: FileId, sink: Sink<'_>) -> Option<Rc<FunctionDef>> {
    convert_statements(text, file, sink, |cx, body| {
        let mut stmts = body;
        if let [ra::Stmt::If(i)] = stmts {
            stmts = &i.body;
        }
        match stmts.first() {
            Some(ra::Stmt::FunctionDef(f)) => cx.function_def(f, false).map(Rc::new),
            other => {
                let range = other.map_or(TextRange::default(), |s| s.range());
                cx.error(
                    codes::BAD_CALL,
                    "only functions defined with `def` can be compiled from their source",
                    range,
                    "not a `def`",
                )
                .hint = Some("define the function with `def` or `lambda`".into());
                None
            }
        }
    })
}

impl<'a> Converter<'a> {
    fn new(
        file: FileId,
        text: &'a str,
        diags: &'a mut Vec<Diagnostic>,
        placements: &'a mut Vec<anfora_ir::Placement>,
    ) -> Converter<'a> {
        Converter {
            file,
            text,
            diags,
            placements,
            loop_depth: 0,
            declared: Vec::new(),
            depth: 0,
            too_deep: false,
        }
    }

    fn syntax_errors(&mut self, parsed: &ruff_python_parser::Parsed<ra::Mod>) {
        for e in parsed.errors() {
            self.error(
                codes::SYNTAX,
                format!("invalid syntax: {}", e.error),
                e.location,
                "here",
            )
            .hint = Some("this is not valid Python".into());
        }
        for e in parsed.unsupported_syntax_errors() {
            self.error(
                codes::SYNTAX_VERSION,
                e.to_string(),
                e.range,
                "needs a newer Python",
            )
            .hint = Some("anfora accepts Python 3.11 syntax".into());
        }
    }
}

struct Converter<'a> {
    file: FileId,
    text: &'a str,
    diags: &'a mut Vec<Diagnostic>,
    loop_depth: u32,
    /// Names bound by refused constructs of each function being converted. They are declared
    /// as locals so that their uses do not add "not defined" errors to the real one.
    declared: Vec<Vec<Name>>,
    /// Current and deepest nesting of expressions and statements.
    depth: u32,
    too_deep: bool,
    /// The `with placement(...)` blocks converted.
    placements: &'a mut Vec<anfora_ir::Placement>,
}

/// A node kind that stands for a construct already diagnosed.
trait Diagnosed {
    const INVALID: Self;
}

impl Diagnosed for StmtKind {
    const INVALID: Self = StmtKind::Invalid;
}

impl Diagnosed for ExprKind {
    const INVALID: Self = ExprKind::Invalid;
}

/// Deepest nesting of expressions and statements anfora compiles. CPython refuses similar
/// depths ("maximum recursion depth exceeded during compilation").
pub const MAX_NESTING: u32 = 2000;

impl Converter<'_> {
    fn span(&self, r: TextRange) -> Span {
        Span::new(self.file, r.start().to_u32(), r.end().to_u32())
    }

    /// A span covering `len` bytes from the start of `r` (a statement's keyword).
    fn keyword(&self, r: TextRange, len: u32) -> Span {
        let start = r.start().to_u32();
        Span::new(self.file, start, (start + len).min(r.end().to_u32()))
    }

    fn error(
        &mut self,
        code: &'static str,
        message: impl Into<String>,
        r: TextRange,
        label: &str,
    ) -> &mut Diagnostic {
        let span = self.span(r);
        self.report(code, message, span, label)
    }

    fn report(
        &mut self,
        code: &'static str,
        message: impl Into<String>,
        span: Span,
        label: &str,
    ) -> &mut Diagnostic {
        self.diags
            .push(Diagnostic::error(code, message, span).with_label(label));
        self.diags.last_mut().unwrap()
    }

    fn unsupported(&mut self, code: &'static str, what: &str, span: Span, hint: &str) {
        self.report(
            code,
            format!("{what} not supported in compiled code"),
            span,
            "not supported",
        )
        .hint = Some(hint.to_string());
    }

    /// A construct compiled code does not support: `what` is not supported (at `span`, with
    /// `code` and `hint`).
    fn refuse<K: Diagnosed>(
        &mut self,
        span: Span,
        code: &'static str,
        what: &str,
        hint: &str,
    ) -> K {
        self.unsupported(code, what, span, hint);
        K::INVALID
    }

    /// An IPython escape command (`!ls`), which ruff parses and Python does not.
    fn ipython_escape<K: Diagnosed>(&mut self, r: TextRange) -> K {
        self.error(
            codes::SYNTAX,
            "IPython escape commands are not Python",
            r,
            "here",
        );
        K::INVALID
    }

    // ---- module level ---------------------------------------------------------------------

    fn module_stmt(&mut self, s: &ra::Stmt) -> Stmt {
        let span = self.span(s.range());
        let kind = match s {
            ra::Stmt::FunctionDef(_)
            | ra::Stmt::Assign(_)
            | ra::Stmt::AnnAssign(_)
            | ra::Stmt::Pass(_) => return self.stmt(s),
            ra::Stmt::Expr(e) if e.value.is_string_literal_expr() => StmtKind::Pass,
            // Calls such as `anfora.set_seed(0)` run when the module loads.
            ra::Stmt::Expr(_) => return self.stmt(s),
            ra::Stmt::Import(i) => self.import(i),
            ra::Stmt::ImportFrom(i) => self.import_from(i),
            ra::Stmt::If(i) if is_main_guard(i) => StmtKind::MainGuard,
            ra::Stmt::TypeAlias(_) => StmtKind::Invalid,
            ra::Stmt::ClassDef(c) => self.class_def(
                c,
                "define functions at module level; classes are compiled through the Python package (methods decorated with @anfora.jit)",
            ),
            _ => {
                let span = self.keyword(s.range(), stmt_keyword_len(s));
                self.report(
                    codes::MODULE_STMT,
                    "only imports of anfora, assignments, expression statements and `def`s are allowed at module level",
                    span,
                    "not allowed here",
                )
                .hint = Some(
                    "move this code into a function (for example `main`), or under `if __name__ == \"__main__\":`"
                        .into(),
                );
                StmtKind::Invalid
            }
        };
        Stmt { kind, span }
    }

    /// A `class` statement, which compiled code refuses; `hint` says what to do instead.
    fn class_def(&mut self, c: &ra::StmtClassDef, hint: &str) -> StmtKind {
        self.refuse(
            self.span(c.name.range()),
            codes::CLASS,
            "class definitions are",
            hint,
        )
    }

    fn import(&mut self, i: &ra::StmtImport) -> StmtKind {
        let mut names = Vec::new();
        for alias in &i.names {
            let module = alias.name.as_str();
            if module != "anfora" && !module.starts_with("anfora.") {
                self.bad_import(module, alias.range);
                continue;
            }
            let bound = match &alias.asname {
                Some(a) => a.as_str().to_string(),
                None => module.split('.').next().unwrap_or(module).to_string(),
            };
            // `import anfora.ops` binds `anfora`; `import anfora.ops as o` binds the submodule.
            let module = if alias.asname.is_none() {
                "anfora"
            } else {
                module
            };
            names.push(ImportName {
                module: module.to_string(),
                bound: Arc::from(bound.as_str()),
                span: self.span(alias.range),
            });
        }
        StmtKind::Import(names)
    }

    fn import_from(&mut self, i: &ra::StmtImportFrom) -> StmtKind {
        let module = i.module.as_ref().map(|m| m.as_str()).unwrap_or("");
        if i.level != 0 || (module != "anfora" && !module.starts_with("anfora.")) {
            self.bad_import(module, i.range);
            return StmtKind::Invalid;
        }
        let names = i
            .names
            .iter()
            .map(|alias| ImportName {
                module: format!("{module}.{}", alias.name.as_str()),
                bound: Arc::from(alias.asname.as_ref().unwrap_or(&alias.name).as_str()),
                span: self.span(alias.range),
            })
            .collect();
        StmtKind::Import(names)
    }

    fn bad_import(&mut self, module: &str, r: TextRange) {
        self.error(
            codes::IMPORT,
            format!("cannot import `{module}` in compiled code"),
            r,
            "only anfora can be imported",
        )
        .hint = Some("use `import anfora as af` or `from anfora import ops`".into());
    }

    /// Declares `names` as locals of the function being converted (see `declared`).
    fn declare(&mut self, names: Vec<Name>) {
        if let Some(top) = self.declared.last_mut() {
            top.extend(names);
        }
    }

    /// Converts a statement or expression one level deeper; `None` (after a diagnostic) past
    /// [`MAX_NESTING`].
    fn nested<T>(&mut self, r: TextRange, convert: impl FnOnce(&mut Self) -> T) -> Option<T> {
        if self.depth >= MAX_NESTING {
            if !self.too_deep {
                self.too_deep = true;
                self.error(
                    codes::SYNTAX,
                    format!("code is nested too deeply (more than {MAX_NESTING} levels)"),
                    r,
                    "too deep",
                )
                .hint = Some("split the expression into several statements".into());
            }
            return None;
        }
        self.depth += 1;
        let out = anfora_ir::deep(|| convert(self));
        self.depth -= 1;
        Some(out)
    }
}

fn is_main_guard(i: &ra::StmtIf) -> bool {
    let ra::Expr::Compare(c) = i.test.as_ref() else {
        return false;
    };
    if c.ops.len() != 1 || c.ops[0] != ra::CmpOp::Eq {
        return false;
    }
    let is_name = |e: &ra::Expr| matches!(e, ra::Expr::Name(n) if n.id.as_str() == "__name__");
    let is_main =
        |e: &ra::Expr| matches!(e, ra::Expr::StringLiteral(s) if s.value.to_str() == "__main__");
    (is_name(&c.left) && is_main(&c.comparators[0]))
        || (is_main(&c.left) && is_name(&c.comparators[0]))
}

fn stmt_keyword_len(s: &ra::Stmt) -> u32 {
    match s {
        ra::Stmt::For(_) => 3,
        ra::Stmt::While(_) => 5,
        ra::Stmt::If(_) => 2,
        ra::Stmt::Return(_) => 6,
        ra::Stmt::Try(_) => 3,
        ra::Stmt::With(_) => 4,
        _ => s.range().len().to_u32(),
    }
}
