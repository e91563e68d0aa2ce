//! Statements and function definitions.

use std::rc::Rc;
use std::sync::Arc;

use anfora_ir::Span;
use ruff_python_ast as ra;
use ruff_text_size::{Ranged, TextRange};

use super::Converter;
use super::expr::bin_op;
use super::names::bound_names;
use crate::ast::*;
use crate::codes;

impl Converter<'_> {
    /// The statements of a block; the body of a `with placement(...)` block is spliced in,
    /// its region recorded with its device.
    pub(super) fn body(&mut self, stmts: &[ra::Stmt]) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            match s {
                ra::Stmt::With(w) if self.is_placement(w) => {
                    if let Some(device) = self.placement_device(w)
                        && let (Some(first), Some(last)) = (w.body.first(), w.body.last())
                    {
                        let region = self.span(TextRange::new(first.start(), last.end()));
                        self.placements
                            .push(anfora_ir::Placement { region, device });
                    }
                    out.extend(self.body(&w.body));
                }
                s => out.push(self.stmt(s)),
            }
        }
        out
    }

    /// Whether `w` is `with placement(...):` (anfora's, or OneFlow's `flow.scope.placement`),
    /// alone and without `as`.
    fn is_placement(&self, w: &ra::StmtWith) -> bool {
        let [item] = &w.items[..] else { return false };
        let ra::Expr::Call(call) = &item.context_expr else {
            return false;
        };
        let named = match &*call.func {
            ra::Expr::Name(n) => n.id.as_str() == "placement",
            ra::Expr::Attribute(a) => a.attr.as_str() == "placement",
            _ => false,
        };
        named && item.optional_vars.is_none() && !w.is_async
    }

    /// The device of a placement block: `placement("cuda:0")`, or OneFlow's
    /// `placement("cuda", "0:1")` (device type, then `machine:device`). A diagnostic and
    /// `None` for anything else.
    fn placement_device(&mut self, w: &ra::StmtWith) -> Option<anfora_tensor::Device> {
        let ra::Expr::Call(call) = &w.items[0].context_expr else {
            return None;
        };
        let strings: Vec<Option<String>> = call
            .arguments
            .args
            .iter()
            .map(|a| match a {
                ra::Expr::StringLiteral(s) => Some(s.value.to_str().to_string()),
                _ => None,
            })
            .collect();
        let text = match &strings[..] {
            _ if !call.arguments.keywords.is_empty() => None,
            [Some(device)] => Some(device.clone()),
            [Some(kind), Some(ids)] => match ids.split_once(':') {
                Some(("0", index)) if index.parse::<u32>().is_ok() => {
                    Some(format!("{kind}:{index}"))
                }
                _ => None,
            },
            _ => None,
        };
        let device = text.as_deref().map(anfora_tensor::Device::parse);
        match device {
            Some(Ok(d)) => Some(d),
            Some(Err(e)) => {
                self.error(codes::WITH, e.message, call.arguments.range, "this device")
                    .hint = Some("name a device as anfora.devices() lists them".into());
                None
            }
            None => {
                self.error(
                    codes::WITH,
                    "a placement names one device: placement(\"cuda:0\") or placement(\"cuda\", \"0:0\")",
                    call.arguments.range,
                    "not one device",
                )
                .hint = Some(
                    "write the device as a string literal; placing over several devices or machines is distributed execution"
                        .into(),
                );
                None
            }
        }
    }

    pub(super) fn stmt(&mut self, s: &ra::Stmt) -> Stmt {
        let Some(stmt) = self.nested(s.range(), |cx| cx.stmt_inner(s)) else {
            return Stmt {
                kind: StmtKind::Invalid,
                span: self.span(s.range()),
            };
        };
        if matches!(stmt.kind, StmtKind::Invalid) {
            let mut names = Vec::new();
            bound_names(s, &mut names);
            self.declare(names);
        }
        stmt
    }

    fn stmt_inner(&mut self, s: &ra::Stmt) -> Stmt {
        let span = self.span(s.range());
        let kind = match s {
            ra::Stmt::FunctionDef(f) => match self.function_def(f, true) {
                Some(def) => StmtKind::FunctionDef(Rc::new(def)),
                None => StmtKind::Invalid,
            },
            ra::Stmt::ClassDef(c) => {
                self.class_def(c, "define the class outside the compiled function")
            }
            ra::Stmt::Return(r) => StmtKind::Return(r.value.as_deref().map(|e| self.expr(e))),
            // Python 3.12 syntax, already refused by the version check (E0002).
            ra::Stmt::TypeAlias(_) => StmtKind::Invalid,
            ra::Stmt::Assign(a) => self.assign(a),
            ra::Stmt::AugAssign(a) => self.aug_assign(a),
            ra::Stmt::AnnAssign(a) => self.ann_assign(a),
            ra::Stmt::For(f) => self.for_stmt(f),
            ra::Stmt::While(w) => {
                if !w.orelse.is_empty() {
                    self.loop_else(&w.orelse);
                }
                let test = self.expr(&w.test);
                let body = self.loop_body(&w.body);
                StmtKind::While { test, body }
            }
            ra::Stmt::If(i) => self.if_stmt(&i.test, &i.body, &i.elif_else_clauses),
            ra::Stmt::Delete(d) => self.refuse(
                self.keyword(d.range, 3),
                codes::DEL,
                "`del` is",
                "variables are released automatically; remove the `del`",
            ),
            ra::Stmt::With(w) => self.refuse(
                self.keyword(w.range, if w.is_async { 5 } else { 4 }),
                codes::WITH,
                "`with` statements are",
                "context managers cannot run inside compiled code (only `with anfora.placement(device):` is); move the `with` outside",
            ),
            ra::Stmt::Match(m) => self.refuse(
                self.keyword(m.range, 5),
                codes::MATCH,
                "`match` statements are",
                "use an if/elif chain",
            ),
            ra::Stmt::Raise(r) => self.refuse(
                self.keyword(r.range, 5),
                codes::RAISE,
                "`raise` is",
                "use `assert condition, \"message\"` to stop with an error",
            ),
            ra::Stmt::Try(t) => self.refuse(
                self.keyword(t.range, 3),
                codes::TRY,
                "`try` statements are",
                "exceptions cannot be caught inside compiled code; handle them around the call",
            ),
            ra::Stmt::Global(g) => self.refuse(
                self.keyword(g.range, 6),
                codes::GLOBAL,
                "`global` declarations are",
                "module-level values are constants in compiled code; return new values instead of assigning globals",
            ),
            ra::Stmt::Nonlocal(n) => StmtKind::Nonlocal(
                n.names
                    .iter()
                    .map(|id| (Arc::from(id.as_str()), self.span(id.range)))
                    .collect(),
            ),
            ra::Stmt::Assert(a) => StmtKind::Assert {
                test: self.expr(&a.test),
                msg: a.msg.as_deref().map(|m| self.expr(m)),
            },
            ra::Stmt::Import(i) => self.import_inside(self.keyword(i.range, 6)),
            ra::Stmt::ImportFrom(i) => self.import_inside(self.keyword(i.range, 4)),
            ra::Stmt::Expr(e) => StmtKind::Expr(self.expr(&e.value)),
            ra::Stmt::Pass(_) => StmtKind::Pass,
            ra::Stmt::Break(b) => self.loop_jump(b.range, "'break' outside loop", StmtKind::Break),
            ra::Stmt::Continue(c) => self.loop_jump(
                c.range,
                "'continue' not properly in loop",
                StmtKind::Continue,
            ),
            ra::Stmt::IpyEscapeCommand(c) => self.ipython_escape(c.range),
        };
        Stmt { kind, span }
    }

    fn assign(&mut self, a: &ra::StmtAssign) -> StmtKind {
        let value = self.expr(&a.value);
        if let [ra::Expr::Attribute(at)] = a.targets.as_slice() {
            return self.attr_assign(at, None, value);
        }
        let targets = a.targets.iter().map(|t| self.target(t)).collect();
        StmtKind::Assign { targets, value }
    }

    fn aug_assign(&mut self, a: &ra::StmtAugAssign) -> StmtKind {
        let value = self.expr(&a.value);
        match a.target.as_ref() {
            ra::Expr::Attribute(at) => self.attr_assign(at, Some(bin_op(a.op)), value),
            ra::Expr::Name(_) | ra::Expr::Subscript(_) => StmtKind::AugAssign {
                target: self.target(&a.target),
                op: bin_op(a.op),
                value,
            },
            other => {
                self.item_assign(other);
                StmtKind::Invalid
            }
        }
    }

    fn ann_assign(&mut self, a: &ra::StmtAnnAssign) -> StmtKind {
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

    fn for_stmt(&mut self, f: &ra::StmtFor) -> StmtKind {
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
        let body = self.loop_body(&f.body);
        StmtKind::For { target, iter, body }
    }

    fn loop_body(&mut self, stmts: &[ra::Stmt]) -> Vec<Stmt> {
        self.loop_depth += 1;
        let body = self.body(stmts);
        self.loop_depth -= 1;
        body
    }

    /// `break` or `continue` (`kind`): an error outside a loop.
    fn loop_jump(&mut self, r: TextRange, message: &str, kind: StmtKind) -> StmtKind {
        if self.loop_depth > 0 {
            return kind;
        }
        self.error(codes::OUTSIDE_LOOP, message, r, "not in a loop");
        StmtKind::Invalid
    }

    fn import_inside(&mut self, span: Span) -> StmtKind {
        self.report(
            codes::IMPORT,
            "imports are not allowed inside compiled functions",
            span,
            "not supported",
        )
        .hint = Some("import anfora at module level".into());
        StmtKind::Invalid
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
        // An `elif` is an `if` in the `else` of the one before. The clauses are converted in
        // source order (so are their diagnostics), then nested from the last one out: a
        // loop, since a chain may have 100,000 branches however shallow the source is.
        let mut elifs = Vec::new();
        let mut orelse = Vec::new();
        for clause in clauses {
            match &clause.test {
                Some(t) => {
                    let span = self.span(clause.range);
                    elifs.push((span, self.expr(t), self.body(&clause.body)));
                }
                None => orelse = self.body(&clause.body),
            }
        }
        while let Some((span, test, body)) = elifs.pop() {
            let kind = StmtKind::If { test, body, orelse };
            orelse = vec![Stmt { kind, span }];
        }
        StmtKind::If { test, body, orelse }
    }

    /// `obj.attr = value` / `obj.attr op= value`.
    fn attr_assign(&mut self, at: &ra::ExprAttribute, op: Option<BinOp>, value: Expr) -> StmtKind {
        StmtKind::AttrAssign {
            object: self.expr(&at.value),
            attr: Arc::from(at.attr.as_str()),
            target_span: self.span(at.range),
            op,
            value,
        }
    }

    fn item_assign(&mut self, target: &ra::Expr) {
        let (what, hint) = match target {
            ra::Expr::Subscript(_) => (
                "assignment to an item of this expression",
                "assign items of a variable, an attribute or an item of them: `x[i, j] = v`, `x[i][j] = v`, `self.w[i] = v`",
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

    pub(super) fn target(&mut self, e: &ra::Expr) -> Target {
        anfora_ir::deep(|| self.target_inner(e))
    }

    fn target_inner(&mut self, e: &ra::Expr) -> Target {
        let span = self.span(e.range());
        match e {
            ra::Expr::Name(n) => Target::Name(Arc::from(n.id.as_str()), span),
            ra::Expr::Tuple(ra::ExprTuple { elts, .. })
            | ra::Expr::List(ra::ExprList { elts, .. }) => {
                let mut starred = 0;
                let items = (elts.iter())
                    .map(|t| match t {
                        ra::Expr::Starred(s) => {
                            starred += 1;
                            self.starred_target(s, starred > 1)
                        }
                        t => self.target(t),
                    })
                    .collect();
                Target::Tuple(items, span)
            }
            ra::Expr::Starred(_) => {
                self.unsupported(
                    codes::STAR,
                    "starred assignment targets are",
                    span,
                    "unpack a fixed number of items, or use slicing",
                );
                Target::Invalid(span)
            }
            ra::Expr::Subscript(sub) if item_root(&sub.value) => Target::Item {
                object: Box::new(self.expr(&sub.value)),
                index: Box::new(self.expr(&sub.slice)),
                span,
            },
            other => {
                self.item_assign(other);
                Target::Invalid(span)
            }
        }
    }

    /// `*name` in a tuple target: the items left over, as a list. Only a name, and one per
    /// tuple (Python's own rule).
    fn starred_target(&mut self, s: &ra::ExprStarred, again: bool) -> Target {
        let span = self.span(s.range);
        let refuse = |cx: &mut Self, what: &str, hint: &str| {
            cx.unsupported(codes::STAR, what, span, hint);
            Target::Invalid(span)
        };
        match &*s.value {
            _ if again => refuse(
                self,
                "multiple starred expressions in one assignment are",
                "star at most one target of a tuple (Python's SyntaxError)",
            ),
            ra::Expr::Name(n) => Target::Starred(Arc::from(n.id.as_str()), span),
            _ => refuse(
                self,
                "starred targets other than a name are",
                "unpack into a name (`a, *rest = t`), then assign from it",
            ),
        }
    }

    /// Converts a `def`; `decorators` says whether its decorators are compiled (and so
    /// reported: only a function compiled from its own source has them applied already).
    pub(super) fn function_def(
        &mut self,
        f: &ra::StmtFunctionDef,
        decorators: bool,
    ) -> Option<FunctionDef> {
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
        self.declared.push(Vec::new());
        let mut body = self.function_body(|cx| cx.body(&f.body));
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

    pub(super) fn parameters(&mut self, p: &ra::Parameters) -> Vec<ParamDef> {
        let mut out = Vec::new();
        let groups = [
            (&p.posonlyargs, ParamKind::PositionalOnly),
            (&p.args, ParamKind::Normal),
        ];
        for (list, kind) in groups {
            for a in list.iter() {
                out.push(self.param(a, kind));
            }
        }
        if let Some(v) = &p.vararg {
            out.push(ParamDef {
                name: Arc::from(v.name.as_str()),
                kind: ParamKind::VarPositional,
                default: None,
                span: self.span(v.name.range),
            });
        }
        for a in p.kwonlyargs.iter() {
            out.push(self.param(a, ParamKind::KeywordOnly));
        }
        if let Some(k) = &p.kwarg {
            out.push(ParamDef {
                name: Arc::from(k.name.as_str()),
                kind: ParamKind::VarKeyword,
                default: None,
                span: self.span(k.name.range),
            });
        }
        out
    }

    fn param(&mut self, a: &ra::ParameterWithDefault, kind: ParamKind) -> ParamDef {
        ParamDef {
            name: Arc::from(a.parameter.name.as_str()),
            kind,
            default: a.default.as_deref().map(|d| self.expr(d)),
            span: self.span(a.parameter.name.range),
        }
    }

    /// Converts the body of a function or lambda: loops around it do not contain it.
    pub(super) fn function_body<T>(&mut self, convert: impl FnOnce(&mut Self) -> T) -> T {
        let saved_loops = std::mem::replace(&mut self.loop_depth, 0);
        let body = convert(self);
        self.loop_depth = saved_loops;
        body
    }
}

/// Whether an item assignment's object is one anfora can update: a name or an attribute of
/// one. An item of an item (`x[i][j] = v`) is not: whether numpy writes through depends on
/// `x[i]` being a view, which only the index's type decides.
fn item_root(e: &ra::Expr) -> bool {
    match e {
        ra::Expr::Name(_) => true,
        ra::Expr::Attribute(a) => matches!(a.value.as_ref(), ra::Expr::Name(_)),
        // `x[i][j] = v`: through the view `x[i]` (checked when the types are known).
        ra::Expr::Subscript(s) => anfora_ir::deep(|| item_root(&s.value)),
        _ => false,
    }
}
