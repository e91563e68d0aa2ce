//! The adapter between ruff's Python parser and anfora's AST. This is the only module that uses
//! `ruff_*` crates (they make breaking changes every release), so an upgrade touches this file
//! alone.
//!
//! Conversion never stops at the first problem: every unsupported construct in the file gets its
//! own diagnostic and becomes an `Invalid` node, so users see all of them at once.

use std::rc::Rc;
use std::sync::Arc;

use anfora_ir::diag::Diagnostic;
use anfora_ir::{FileId, Span};
use ruff_python_ast as ra;
use ruff_python_parser::{Mode, ParseOptions, parse_unchecked};
use ruff_text_size::{Ranged, TextRange};

use crate::ast::*;
use crate::codes;

fn options() -> ParseOptions {
    ParseOptions::from(Mode::Module).with_target_version(ra::PythonVersion::PY311)
}

/// Parses `text` as a module and hands its statements to `convert` (not called after a
/// syntax error, which gives `None`); syntax errors and what `convert` reports go to `diags`.
fn convert_statements<R>(
    text: &str,
    file: FileId,
    diags: &mut Vec<Diagnostic>,
    convert: impl FnOnce(&mut Converter<'_>, &[ra::Stmt]) -> Option<R>,
) -> Option<R> {
    let parsed = parse_unchecked(text, options());
    let mut cx = Converter::new(file, text, diags);
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

/// Parses a whole file; syntax errors and unsupported constructs go to `diags`.
pub fn parse_module(text: &str, file: FileId, diags: &mut Vec<Diagnostic>) -> Module {
    let body = convert_statements(text, file, diags, |cx, body| {
        Some(body.iter().map(|s| cx.module_stmt(s)).collect())
    });
    Module {
        file,
        body: body.unwrap_or_default(),
    }
}

/// Parses the statement(s) of `text` and converts the lambda whose body starts at byte
/// `body_start` (a module-level `f = lambda x: ...`, or a lambda inside any expression) as a
/// function definition.
pub fn parse_lambda(
    text: &str,
    file: FileId,
    body_start: usize,
    diags: &mut Vec<Diagnostic>,
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

    convert_statements(text, file, diags, |cx, body| {
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
pub fn parse_function(
    text: &str,
    file: FileId,
    diags: &mut Vec<Diagnostic>,
) -> Option<Rc<FunctionDef>> {
    convert_statements(text, file, diags, |cx, body| {
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
    fn new(file: FileId, text: &'a str, diags: &'a mut Vec<Diagnostic>) -> Converter<'a> {
        Converter {
            file,
            text,
            diags,
            loop_depth: 0,
            function_depth: 0,
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

/// A Python literal given on the command line: `3`, `-2.5`, `"s"`, `(1, (2, 3))`, `[[1, 2]]`.
#[derive(Clone, Debug, PartialEq)]
pub enum PyLiteral {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Arc<str>),
    Tuple(Vec<PyLiteral>),
    List(Vec<PyLiteral>),
}

/// Parses one literal expression, as `ast.literal_eval` would.
pub fn parse_literal(text: &str) -> Result<PyLiteral, String> {
    let parsed = ruff_python_parser::parse_expression(text)
        .map_err(|e| format!("not a Python literal: {}", e.error))?;
    literal(parsed.syntax().body.as_ref())
}

fn literal(e: &ra::Expr) -> Result<PyLiteral, String> {
    anfora_ir::deep(|| literal_inner(e))
}

fn literal_inner(e: &ra::Expr) -> Result<PyLiteral, String> {
    Ok(match e {
        ra::Expr::NoneLiteral(_) => PyLiteral::None,
        ra::Expr::BooleanLiteral(b) => PyLiteral::Bool(b.value),
        ra::Expr::NumberLiteral(n) => match &n.value {
            ra::Number::Int(i) => PyLiteral::Int(
                i.as_i64()
                    .ok_or_else(|| "integer literal does not fit in 64 bits".to_string())?,
            ),
            ra::Number::Float(f) => PyLiteral::Float(*f),
            ra::Number::Complex { .. } => return Err("complex numbers are not supported".into()),
        },
        ra::Expr::StringLiteral(s) => PyLiteral::Str(Arc::from(s.value.to_str())),
        ra::Expr::UnaryOp(u) if u.op == ra::UnaryOp::USub => match literal(&u.operand)? {
            PyLiteral::Int(i) => PyLiteral::Int(
                i.checked_neg()
                    .ok_or_else(|| "integer literal does not fit in 64 bits".to_string())?,
            ),
            PyLiteral::Float(f) => PyLiteral::Float(-f),
            _ => return Err("`-` applies to numbers only".into()),
        },
        ra::Expr::UnaryOp(u) if u.op == ra::UnaryOp::UAdd => match literal(&u.operand)? {
            l @ (PyLiteral::Int(_) | PyLiteral::Float(_)) => l,
            _ => return Err("`+` applies to numbers only".into()),
        },
        ra::Expr::Tuple(t) => {
            PyLiteral::Tuple(t.elts.iter().map(literal).collect::<Result<_, _>>()?)
        }
        ra::Expr::List(l) => PyLiteral::List(l.elts.iter().map(literal).collect::<Result<_, _>>()?),
        _ => {
            return Err(
                "not a Python literal (numbers, strings, True/False/None, tuples, lists)".into(),
            );
        }
    })
}

struct Converter<'a> {
    file: FileId,
    text: &'a str,
    diags: &'a mut Vec<Diagnostic>,
    loop_depth: u32,
    function_depth: u32,
    /// Names bound by refused constructs of each function being converted. They are declared
    /// as locals so that their uses do not add "not defined" errors to the real one.
    declared: Vec<Vec<Name>>,
    /// Current and deepest nesting of expressions and statements.
    depth: u32,
    too_deep: bool,
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
            ra::Stmt::ClassDef(c) => {
                let span = self.span(c.name.range());
                self.unsupported(
                    codes::CLASS,
                    "class definitions are",
                    span,
                    "define functions at module level; classes are compiled through the Python package (methods decorated with @anfora.jit)",
                );
                StmtKind::Invalid
            }
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

    // ---- statements -----------------------------------------------------------------------

    fn body(&mut self, stmts: &[ra::Stmt]) -> Vec<Stmt> {
        stmts.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &ra::Stmt) -> Stmt {
        if !self.enter(s.range()) {
            return Stmt {
                kind: StmtKind::Invalid,
                span: self.span(s.range()),
            };
        }
        let stmt = anfora_ir::deep(|| self.stmt_inner(s));
        self.depth -= 1;
        if matches!(stmt.kind, StmtKind::Invalid) {
            let mut names = Vec::new();
            bound_names(s, &mut names);
            self.declare(names);
        }
        stmt
    }

    fn declare(&mut self, names: Vec<Name>) {
        if let Some(top) = self.declared.last_mut() {
            top.extend(names);
        }
    }

    fn stmt_inner(&mut self, s: &ra::Stmt) -> Stmt {
        let span = self.span(s.range());
        let kind = match s {
            ra::Stmt::FunctionDef(f) => match self.function_def(f, true) {
                Some(def) => StmtKind::FunctionDef(Rc::new(def)),
                None => StmtKind::Invalid,
            },
            ra::Stmt::ClassDef(c) => {
                let span = self.span(c.name.range());
                self.unsupported(
                    codes::CLASS,
                    "class definitions are",
                    span,
                    "define the class outside the compiled function",
                );
                StmtKind::Invalid
            }
            ra::Stmt::Return(r) => StmtKind::Return(r.value.as_deref().map(|e| self.expr(e))),
            ra::Stmt::Delete(d) => {
                let span = self.keyword(d.range, 3);
                self.unsupported(
                    codes::DEL,
                    "`del` is",
                    span,
                    "variables are released automatically; remove the `del`",
                );
                StmtKind::Invalid
            }
            // Python 3.12 syntax, already refused by the version check (E0002).
            ra::Stmt::TypeAlias(_) => StmtKind::Invalid,
            ra::Stmt::Assign(a) => {
                let value = self.expr(&a.value);
                if let [ra::Expr::Attribute(at)] = a.targets.as_slice() {
                    return self.attr_assign(at, None, value, s);
                }
                let targets = a.targets.iter().map(|t| self.target(t)).collect();
                StmtKind::Assign { targets, value }
            }
            ra::Stmt::AugAssign(a) => {
                let value = self.expr(&a.value);
                match a.target.as_ref() {
                    ra::Expr::Attribute(at) => {
                        return self.attr_assign(at, Some(bin_op(a.op)), value, s);
                    }
                    ra::Expr::Name(n) => StmtKind::AugAssign {
                        target: Arc::from(n.id.as_str()),
                        target_span: self.span(n.range),
                        op: bin_op(a.op),
                        value,
                    },
                    other => {
                        self.item_assign(other);
                        StmtKind::Invalid
                    }
                }
            }
            ra::Stmt::AnnAssign(a) => {
                let target = self.target(&a.target);
                match (&a.value, target) {
                    (Some(v), target) => StmtKind::Assign {
                        targets: vec![target],
                        value: self.expr(v),
                    },
                    (None, Target::Name(n, _)) => StmtKind::Declare(n),
                    (None, _) => StmtKind::Invalid,
                }
            }
            ra::Stmt::For(f) => {
                if f.is_async {
                    let span = self.keyword(f.range, 5);
                    self.unsupported(
                        codes::ASYNC,
                        "`async for` is",
                        span,
                        "use a plain `for` loop",
                    );
                }
                if !f.orelse.is_empty() {
                    self.loop_else(&f.orelse);
                }
                let target = self.target(&f.target);
                let iter = self.expr(&f.iter);
                self.loop_depth += 1;
                let body = self.body(&f.body);
                self.loop_depth -= 1;
                StmtKind::For { target, iter, body }
            }
            ra::Stmt::While(w) => {
                if !w.orelse.is_empty() {
                    self.loop_else(&w.orelse);
                }
                let test = self.expr(&w.test);
                self.loop_depth += 1;
                let body = self.body(&w.body);
                self.loop_depth -= 1;
                StmtKind::While { test, body }
            }
            ra::Stmt::If(i) => self.if_stmt(&i.test, &i.body, &i.elif_else_clauses),
            ra::Stmt::With(w) => {
                let span = self.keyword(w.range, if w.is_async { 5 } else { 4 });
                self.unsupported(
                    codes::WITH,
                    "`with` statements are",
                    span,
                    "context managers cannot run inside compiled code; move the `with` outside",
                );
                StmtKind::Invalid
            }
            ra::Stmt::Match(m) => {
                let span = self.keyword(m.range, 5);
                self.unsupported(
                    codes::MATCH,
                    "`match` statements are",
                    span,
                    "use an if/elif chain",
                );
                StmtKind::Invalid
            }
            ra::Stmt::Raise(r) => {
                let span = self.keyword(r.range, 5);
                self.unsupported(
                    codes::RAISE,
                    "`raise` is",
                    span,
                    "use `assert condition, \"message\"` to stop with an error",
                );
                StmtKind::Invalid
            }
            ra::Stmt::Try(t) => {
                let span = self.keyword(t.range, 3);
                self.unsupported(
                    codes::TRY,
                    "`try` statements are",
                    span,
                    "exceptions cannot be caught inside compiled code; handle them around the call",
                );
                StmtKind::Invalid
            }
            ra::Stmt::Assert(a) => StmtKind::Assert {
                test: self.expr(&a.test),
                msg: a.msg.as_deref().map(|m| self.expr(m)),
            },
            ra::Stmt::Import(i) => {
                let span = self.keyword(i.range, 6);
                self.import_inside(span);
                StmtKind::Invalid
            }
            ra::Stmt::ImportFrom(i) => {
                let span = self.keyword(i.range, 4);
                self.import_inside(span);
                StmtKind::Invalid
            }
            ra::Stmt::Global(g) => {
                let span = self.keyword(g.range, 6);
                self.unsupported(
                    codes::GLOBAL,
                    "`global` declarations are",
                    span,
                    "module-level values are constants in compiled code; return new values instead of assigning globals",
                );
                StmtKind::Invalid
            }
            ra::Stmt::Nonlocal(n) => {
                let span = self.keyword(n.range, 8);
                self.unsupported(
                    codes::GLOBAL,
                    "`nonlocal` declarations are",
                    span,
                    "return the new value from the inner function instead of assigning the outer variable",
                );
                StmtKind::Invalid
            }
            ra::Stmt::Expr(e) => StmtKind::Expr(self.expr(&e.value)),
            ra::Stmt::Pass(_) => StmtKind::Pass,
            ra::Stmt::Break(b) => {
                if self.loop_depth == 0 {
                    self.error(
                        codes::OUTSIDE_LOOP,
                        "'break' outside loop",
                        b.range,
                        "not in a loop",
                    );
                    StmtKind::Invalid
                } else {
                    StmtKind::Break
                }
            }
            ra::Stmt::Continue(c) => {
                if self.loop_depth == 0 {
                    self.error(
                        codes::OUTSIDE_LOOP,
                        "'continue' not properly in loop",
                        c.range,
                        "not in a loop",
                    );
                    StmtKind::Invalid
                } else {
                    StmtKind::Continue
                }
            }
            ra::Stmt::IpyEscapeCommand(c) => {
                self.error(
                    codes::SYNTAX,
                    "IPython escape commands are not Python",
                    c.range,
                    "here",
                );
                StmtKind::Invalid
            }
        };
        Stmt { kind, span }
    }

    fn import_inside(&mut self, span: Span) {
        self.report(
            codes::IMPORT,
            "imports are not allowed inside compiled functions",
            span,
            "not supported",
        )
        .hint = Some("import anfora at module level".into());
    }

    fn loop_else(&mut self, orelse: &[ra::Stmt]) {
        // Point at the `else` keyword, which precedes the first statement of the clause.
        let first = orelse[0].range().start().to_u32() as usize;
        let before = &self.text[..first];
        let at = before.rfind("else").unwrap_or(first);
        let span = Span::new(self.file, at as u32, at as u32 + 4);
        self.unsupported(
            codes::LOOP_ELSE,
            "`else` clauses on loops are",
            span,
            "set a flag before `break` and test it after the loop",
        );
    }

    fn if_stmt(
        &mut self,
        test: &ra::Expr,
        body: &[ra::Stmt],
        clauses: &[ra::ElifElseClause],
    ) -> StmtKind {
        let test = self.expr(test);
        let body = self.body(body);
        let orelse = match clauses.split_first() {
            None => Vec::new(),
            Some((first, rest)) => match &first.test {
                None => self.body(&first.body),
                Some(t) => {
                    let span = self.span(first.range);
                    let kind = self.if_stmt(t, &first.body, rest);
                    vec![Stmt { kind, span }]
                }
            },
        };
        StmtKind::If { test, body, orelse }
    }

    /// `obj.attr = value` / `obj.attr op= value`.
    fn attr_assign(
        &mut self,
        at: &ra::ExprAttribute,
        op: Option<BinOp>,
        value: Expr,
        s: &ra::Stmt,
    ) -> Stmt {
        let object = self.expr(&at.value);
        let kind = StmtKind::AttrAssign {
            object,
            attr: Arc::from(at.attr.as_str()),
            target_span: self.span(at.range),
            op,
            value,
        };
        Stmt {
            kind,
            span: self.span(s.range()),
        }
    }

    fn item_assign(&mut self, target: &ra::Expr) {
        let (what, hint) = match target {
            ra::Expr::Subscript(_) => (
                "assignment to an item",
                "values are immutable in compiled code: build a new tuple or tensor instead (e.g. with ops.where)",
            ),
            ra::Expr::Attribute(_) => (
                "assignment to an attribute inside a tuple or chain",
                "assign Parameter attributes one at a time: `self.w = w`",
            ),
            _ => (
                "this assignment target",
                "assign to a name or a tuple of names",
            ),
        };
        self.error(
            codes::ITEM_ASSIGN,
            format!("{what} is not supported"),
            target.range(),
            "cannot assign here",
        )
        .hint = Some(hint.to_string());
    }

    fn target(&mut self, e: &ra::Expr) -> Target {
        anfora_ir::deep(|| self.target_inner(e))
    }

    fn target_inner(&mut self, e: &ra::Expr) -> Target {
        let span = self.span(e.range());
        match e {
            ra::Expr::Name(n) => Target::Name(Arc::from(n.id.as_str()), span),
            ra::Expr::Tuple(ra::ExprTuple { elts, .. })
            | ra::Expr::List(ra::ExprList { elts, .. }) => {
                Target::Tuple(elts.iter().map(|t| self.target(t)).collect(), span)
            }
            ra::Expr::Starred(s) => {
                self.unsupported(
                    codes::STAR,
                    "starred assignment targets are",
                    span,
                    "unpack a fixed number of items, or use slicing",
                );
                let _ = s;
                Target::Invalid(span)
            }
            other => {
                self.item_assign(other);
                Target::Invalid(span)
            }
        }
    }

    // ---- functions ------------------------------------------------------------------------

    /// Converts a `def`; `decorators` says whether its decorators are compiled (and so
    /// reported: only a function compiled from its own source has them applied already).
    fn function_def(&mut self, f: &ra::StmtFunctionDef, decorators: bool) -> Option<FunctionDef> {
        for d in f.decorator_list.iter().filter(|_| decorators) {
            let span = self.span(d.range);
            self.unsupported(
                codes::DECORATOR,
                "decorators are",
                span,
                "call the decorator explicitly outside compiled code",
            );
        }
        if f.is_async {
            let span = self.keyword(f.range, 5);
            self.unsupported(codes::ASYNC, "`async def` is", span, "use a plain `def`");
        }
        let params = self.parameters(&f.parameters);
        self.function_depth += 1;
        self.declared.push(Vec::new());
        let saved_loops = std::mem::replace(&mut self.loop_depth, 0);
        let mut body = self.body(&f.body);
        self.loop_depth = saved_loops;
        self.function_depth -= 1;
        let declared = self.declared.pop().unwrap_or_default();
        let at = self.span(f.range);
        let declares = declared.into_iter().map(|n| Stmt {
            kind: StmtKind::Declare(n),
            span: at,
        });
        body.splice(0..0, declares);
        Some(FunctionDef {
            name: Arc::from(f.name.as_str()),
            params,
            body,
            span: self.span(f.range),
            head_span: self.span(f.name.range),
            is_lambda: false,
        })
    }

    fn parameters(&mut self, p: &ra::Parameters) -> Vec<ParamDef> {
        if let Some(v) = &p.vararg {
            let span = self.span(v.range);
            self.unsupported(
                codes::STAR,
                "`*args` parameters are",
                span,
                "take a tuple argument instead",
            );
        }
        if let Some(k) = &p.kwarg {
            let span = self.span(k.range);
            self.unsupported(
                codes::STAR,
                "`**kwargs` parameters are",
                span,
                "name the keyword parameters explicitly",
            );
        }
        let mut out = Vec::new();
        let groups = [
            (&p.posonlyargs, ParamKind::PositionalOnly),
            (&p.args, ParamKind::Normal),
            (&p.kwonlyargs, ParamKind::KeywordOnly),
        ];
        for (list, kind) in groups {
            for a in list.iter() {
                out.push(ParamDef {
                    name: Arc::from(a.parameter.name.as_str()),
                    kind,
                    default: a.default.as_deref().map(|d| self.expr(d)),
                    span: self.span(a.parameter.name.range),
                });
            }
        }
        out
    }

    // ---- expressions ----------------------------------------------------------------------

    fn exprs(&mut self, es: &[ra::Expr]) -> Vec<Expr> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn boxed(&mut self, e: &ra::Expr) -> Box<Expr> {
        Box::new(self.expr(e))
    }

    fn expr(&mut self, e: &ra::Expr) -> Expr {
        if !self.enter(e.range()) {
            return Expr {
                kind: ExprKind::Invalid,
                span: self.span(e.range()),
            };
        }
        let out = anfora_ir::deep(|| self.expr_inner(e));
        self.depth -= 1;
        out
    }

    /// Counts one more level of nesting; false (after a diagnostic) past [`MAX_NESTING`].
    fn enter(&mut self, r: TextRange) -> bool {
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
            return false;
        }
        self.depth += 1;
        true
    }

    fn expr_inner(&mut self, e: &ra::Expr) -> Expr {
        let span = self.span(e.range());
        let kind = match e {
            ra::Expr::BoolOp(b) => ExprKind::BoolOp {
                op: match b.op {
                    ra::BoolOp::And => BoolOp::And,
                    ra::BoolOp::Or => BoolOp::Or,
                },
                values: self.exprs(&b.values),
            },
            ra::Expr::Named(n) => {
                self.unsupported(
                    codes::WALRUS,
                    "assignment expressions (`:=`) are",
                    span,
                    "assign in a separate statement",
                );
                let mut names = Vec::new();
                target_names(&n.target, &mut names);
                self.declare(names);
                ExprKind::Invalid
            }
            ra::Expr::BinOp(b) => ExprKind::BinOp {
                op: bin_op(b.op),
                left: self.boxed(&b.left),
                right: self.boxed(&b.right),
            },
            ra::Expr::UnaryOp(u) => ExprKind::UnaryOp {
                op: match u.op {
                    ra::UnaryOp::Invert => UnaryOp::Invert,
                    ra::UnaryOp::Not => UnaryOp::Not,
                    ra::UnaryOp::UAdd => UnaryOp::Pos,
                    ra::UnaryOp::USub => UnaryOp::Neg,
                },
                operand: self.boxed(&u.operand),
            },
            ra::Expr::Lambda(l) => {
                let params = match &l.parameters {
                    Some(p) => self.parameters(p),
                    None => Vec::new(),
                };
                self.function_depth += 1;
                let saved_loops = std::mem::replace(&mut self.loop_depth, 0);
                let body = self.expr(&l.body);
                self.loop_depth = saved_loops;
                self.function_depth -= 1;
                let body_span = body.span;
                ExprKind::Lambda(Rc::new(FunctionDef {
                    name: Arc::from("<lambda>"),
                    params,
                    body: vec![Stmt {
                        kind: StmtKind::Return(Some(body)),
                        span: body_span,
                    }],
                    span,
                    head_span: self.keyword(l.range, 6),
                    is_lambda: true,
                }))
            }
            ra::Expr::If(i) => ExprKind::IfExp {
                test: self.boxed(&i.test),
                body: self.boxed(&i.body),
                orelse: self.boxed(&i.orelse),
            },
            ra::Expr::Dict(_) => {
                self.unsupported(codes::DICT_SET, "dict displays are", span, "use a tuple");
                ExprKind::Invalid
            }
            ra::Expr::Set(_) => {
                self.unsupported(codes::DICT_SET, "set displays are", span, "use a tuple");
                ExprKind::Invalid
            }
            ra::Expr::ListComp(_)
            | ra::Expr::SetComp(_)
            | ra::Expr::DictComp(_)
            | ra::Expr::Generator(_) => {
                self.unsupported(
                    codes::COMPREHENSION,
                    "comprehensions and generator expressions are",
                    span,
                    "write the loop out with `for` and build a tuple",
                );
                ExprKind::Invalid
            }
            ra::Expr::Await(_) => {
                self.unsupported(
                    codes::ASYNC,
                    "`await` is",
                    span,
                    "compiled code cannot await",
                );
                ExprKind::Invalid
            }
            ra::Expr::Yield(_) | ra::Expr::YieldFrom(_) => {
                self.unsupported(
                    codes::GENERATOR,
                    "generators (`yield`) are",
                    span,
                    "return a tuple of all the values instead",
                );
                ExprKind::Invalid
            }
            ra::Expr::Compare(c) => {
                let left = self.boxed(&c.left);
                let comparators = self.exprs(&c.comparators);
                let ops: Vec<CmpOp> = c.ops.iter().map(|o| cmp_op(*o)).collect();
                for (i, op) in ops.iter().enumerate() {
                    if matches!(op, CmpOp::Is | CmpOp::IsNot) {
                        let l = if i == 0 {
                            &c.left
                        } else {
                            &c.comparators[i - 1]
                        };
                        let r = &c.comparators[i];
                        if !is_singleton(l) && !is_singleton(r) {
                            let span =
                                self.span(TextRange::new(l.range().start(), r.range().end()));
                            self.report(
                                codes::IS,
                                "`is` compares object identity, which compiled code does not have",
                                span,
                                "neither side is None, True or False",
                            )
                            .hint = Some("use `==` to compare values".into());
                        }
                    }
                }
                ExprKind::Compare {
                    left,
                    ops,
                    comparators,
                }
            }
            ra::Expr::Call(c) => {
                let func = self.boxed(&c.func);
                let mut args = Vec::new();
                for a in c.arguments.args.iter() {
                    if let ra::Expr::Starred(s) = a {
                        let span = self.span(s.range);
                        self.unsupported(
                            codes::STAR,
                            "star-arguments (`*args`) are",
                            span,
                            "pass the arguments one by one",
                        );
                        continue;
                    }
                    args.push(self.expr(a));
                }
                let mut keywords = Vec::new();
                for k in c.arguments.keywords.iter() {
                    match &k.arg {
                        Some(name) => keywords.push(Keyword {
                            name: Arc::from(name.as_str()),
                            value: self.expr(&k.value),
                            span: self.span(k.range),
                        }),
                        None => {
                            let span = self.span(k.range);
                            self.unsupported(
                                codes::STAR,
                                "keyword star-arguments (`**kwargs`) are",
                                span,
                                "pass the keyword arguments one by one",
                            );
                        }
                    }
                }
                ExprKind::Call {
                    func,
                    args,
                    keywords,
                }
            }
            ra::Expr::FString(_) | ra::Expr::TString(_) => {
                self.unsupported(
                    codes::FSTRING,
                    "f-strings are",
                    span,
                    "pass the values to print() separately, or build the text with str() and +",
                );
                ExprKind::Invalid
            }
            ra::Expr::StringLiteral(s) => {
                ExprKind::Literal(Literal::Str(Arc::from(s.value.to_str())))
            }
            ra::Expr::BytesLiteral(_) => {
                self.unsupported(codes::LITERAL, "bytes literals are", span, "use a str");
                ExprKind::Invalid
            }
            ra::Expr::NumberLiteral(n) => match &n.value {
                ra::Number::Int(i) => match i.as_i64() {
                    Some(v) => ExprKind::Literal(Literal::Int(v)),
                    None => {
                        self.report(
                            codes::LITERAL,
                            "integer literal does not fit in 64 bits",
                            span,
                            "too large",
                        )
                        .hint = Some("anfora's ints are 64-bit; use a float".into());
                        ExprKind::Invalid
                    }
                },
                ra::Number::Float(f) => ExprKind::Literal(Literal::Float(*f)),
                ra::Number::Complex { .. } => {
                    self.unsupported(
                        codes::LITERAL,
                        "complex numbers are",
                        span,
                        "use real numbers",
                    );
                    ExprKind::Invalid
                }
            },
            ra::Expr::BooleanLiteral(b) => ExprKind::Literal(Literal::Bool(b.value)),
            ra::Expr::NoneLiteral(_) => ExprKind::Literal(Literal::None),
            ra::Expr::EllipsisLiteral(_) => ExprKind::Literal(Literal::Ellipsis),
            ra::Expr::Attribute(a) => ExprKind::Attribute {
                value: self.boxed(&a.value),
                attr: Arc::from(a.attr.as_str()),
            },
            ra::Expr::Subscript(s) => ExprKind::Subscript {
                value: self.boxed(&s.value),
                index: self.boxed(&s.slice),
            },
            ra::Expr::Starred(_) => {
                self.unsupported(
                    codes::STAR,
                    "starred expressions are",
                    span,
                    "list the items explicitly",
                );
                ExprKind::Invalid
            }
            ra::Expr::Name(n) => ExprKind::Name(Arc::from(n.id.as_str())),
            ra::Expr::List(l) => ExprKind::List(self.exprs(&l.elts)),
            ra::Expr::Tuple(t) => ExprKind::Tuple(self.exprs(&t.elts)),
            ra::Expr::Slice(s) => ExprKind::Slice {
                lower: s.lower.as_deref().map(|e| self.boxed(e)),
                upper: s.upper.as_deref().map(|e| self.boxed(e)),
                step: s.step.as_deref().map(|e| self.boxed(e)),
            },
            ra::Expr::IpyEscapeCommand(_) => {
                self.error(
                    codes::SYNTAX,
                    "IPython escape commands are not Python",
                    e.range(),
                    "here",
                );
                ExprKind::Invalid
            }
        };
        Expr { kind, span }
    }
}

/// Names an assignment target binds.
fn target_names(e: &ra::Expr, out: &mut Vec<Name>) {
    match e {
        ra::Expr::Name(n) => out.push(Arc::from(n.id.as_str())),
        ra::Expr::Tuple(t) => t.elts.iter().for_each(|e| target_names(e, out)),
        ra::Expr::List(l) => l.elts.iter().for_each(|e| target_names(e, out)),
        ra::Expr::Starred(s) => target_names(&s.value, out),
        _ => {}
    }
}

/// Names a statement binds in its function, nested blocks included.
fn bound_names(s: &ra::Stmt, out: &mut Vec<Name>) {
    let body = |b: &[ra::Stmt], out: &mut Vec<Name>| b.iter().for_each(|s| bound_names(s, out));
    match s {
        ra::Stmt::FunctionDef(f) => out.push(Arc::from(f.name.as_str())),
        ra::Stmt::ClassDef(c) => out.push(Arc::from(c.name.as_str())),
        ra::Stmt::Assign(a) => a.targets.iter().for_each(|t| target_names(t, out)),
        ra::Stmt::AugAssign(a) => target_names(&a.target, out),
        ra::Stmt::AnnAssign(a) => target_names(&a.target, out),
        ra::Stmt::For(f) => {
            target_names(&f.target, out);
            body(&f.body, out);
            body(&f.orelse, out);
        }
        ra::Stmt::While(w) => {
            body(&w.body, out);
            body(&w.orelse, out);
        }
        ra::Stmt::If(i) => {
            body(&i.body, out);
            i.elif_else_clauses.iter().for_each(|c| body(&c.body, out));
        }
        ra::Stmt::With(w) => {
            for item in &w.items {
                if let Some(v) = &item.optional_vars {
                    target_names(v, out);
                }
            }
            body(&w.body, out);
        }
        ra::Stmt::Try(t) => {
            body(&t.body, out);
            for h in &t.handlers {
                let ra::ExceptHandler::ExceptHandler(h) = h;
                if let Some(n) = &h.name {
                    out.push(Arc::from(n.as_str()));
                }
                body(&h.body, out);
            }
            body(&t.orelse, out);
            body(&t.finalbody, out);
        }
        ra::Stmt::Import(i) => i.names.iter().for_each(|a| {
            let n = a.asname.as_ref().unwrap_or(&a.name).as_str();
            out.push(Arc::from(n.split('.').next().unwrap_or(n)));
        }),
        ra::Stmt::ImportFrom(i) => i
            .names
            .iter()
            .for_each(|a| out.push(Arc::from(a.asname.as_ref().unwrap_or(&a.name).as_str()))),
        _ => {}
    }
}

fn is_singleton(e: &ra::Expr) -> bool {
    matches!(e, ra::Expr::NoneLiteral(_) | ra::Expr::BooleanLiteral(_))
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

fn bin_op(op: ra::Operator) -> BinOp {
    match op {
        ra::Operator::Add => BinOp::Add,
        ra::Operator::Sub => BinOp::Sub,
        ra::Operator::Mult => BinOp::Mul,
        ra::Operator::MatMult => BinOp::MatMul,
        ra::Operator::Div => BinOp::Div,
        ra::Operator::Mod => BinOp::Mod,
        ra::Operator::Pow => BinOp::Pow,
        ra::Operator::LShift => BinOp::LShift,
        ra::Operator::RShift => BinOp::RShift,
        ra::Operator::BitOr => BinOp::BitOr,
        ra::Operator::BitXor => BinOp::BitXor,
        ra::Operator::BitAnd => BinOp::BitAnd,
        ra::Operator::FloorDiv => BinOp::FloorDiv,
    }
}

fn cmp_op(op: ra::CmpOp) -> CmpOp {
    match op {
        ra::CmpOp::Eq => CmpOp::Eq,
        ra::CmpOp::NotEq => CmpOp::NotEq,
        ra::CmpOp::Lt => CmpOp::Lt,
        ra::CmpOp::LtE => CmpOp::LtE,
        ra::CmpOp::Gt => CmpOp::Gt,
        ra::CmpOp::GtE => CmpOp::GtE,
        ra::CmpOp::Is => CmpOp::Is,
        ra::CmpOp::IsNot => CmpOp::IsNot,
        ra::CmpOp::In => CmpOp::In,
        ra::CmpOp::NotIn => CmpOp::NotIn,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> (Module, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let m = parse_module(src, FileId(0), &mut diags);
        (m, diags)
    }

    #[test]
    fn converts_supported_code_without_diagnostics() {
        let (m, d) = parse(
            "from anfora import ops\nimport anfora as af\nN = 3\n\ndef f(x, y=2, *, k=1):\n    a, (b, c) = x, (y, 3)\n    while a < N:\n        a += 1\n        if a == 2:\n            continue\n        elif a > 5:\n            break\n        else:\n            pass\n    return lambda z: z + a if b else -c\n\nif __name__ == \"__main__\":\n    print(f(1))\n",
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(m.body.len(), 5);
        assert!(matches!(m.body[4].kind, StmtKind::MainGuard));
        let StmtKind::FunctionDef(f) = &m.body[3].kind else {
            panic!()
        };
        assert_eq!(f.params.len(), 3);
        assert_eq!(f.params[2].kind, ParamKind::KeywordOnly);
    }

    #[test]
    fn reports_every_unsupported_construct() {
        let (_, d) = parse(
            "def f(*args):\n    try:\n        pass\n    except E:\n        pass\n    with x:\n        pass\n    for i in y:\n        pass\n    else:\n        pass\n    g = (i for i in x)\n    global q\n    x[0] = 1\n    return {1: 2}\n",
        );
        let codes: Vec<&str> = d.iter().map(|d| d.code).collect();
        assert_eq!(
            codes,
            vec![
                "E0109", "E0101", "E0107", "E0105", "E0110", "E0104", "E0118", "E0111"
            ]
        );
    }

    #[test]
    fn syntax_errors_are_reported() {
        let (m, d) = parse("def f(:\n    return 1\n");
        assert!(m.body.is_empty());
        assert!(d.iter().all(|d| d.code == codes::SYNTAX));
        assert!(!d.is_empty());
    }

    #[test]
    fn newer_syntax_is_refused() {
        let (_, d) = parse("type X = int\n");
        assert!(d.iter().any(|d| d.code == codes::SYNTAX_VERSION), "{d:?}");
    }

    #[test]
    fn literals_parse_like_literal_eval() {
        assert_eq!(parse_literal("-3").unwrap(), PyLiteral::Int(-3));
        assert_eq!(
            parse_literal("(1, 'a', [2.5, None])").unwrap(),
            PyLiteral::Tuple(vec![
                PyLiteral::Int(1),
                PyLiteral::Str(Arc::from("a")),
                PyLiteral::List(vec![PyLiteral::Float(2.5), PyLiteral::None])
            ])
        );
        assert!(parse_literal("x + 1").is_err());
        assert!(parse_literal("99999999999999999999").is_err());
    }
}
