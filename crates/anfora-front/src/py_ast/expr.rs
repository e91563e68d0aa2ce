//! Expressions.

use std::rc::Rc;
use std::sync::Arc;

use anfora_ir::Span;
use ruff_python_ast as ra;
use ruff_text_size::{Ranged, TextRange};

use super::Converter;
use super::literal::{LONE_SURROGATE, is_two_to_63, surrogate_escape};
use super::names::target_names;
use crate::ast::*;
use crate::codes;

impl Converter<'_> {
    fn exprs(&mut self, es: &[ra::Expr]) -> Vec<Expr> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    /// The items of a display or a call's positional arguments: `*x` among them is the items
    /// of `x`.
    fn items(&mut self, es: &[ra::Expr]) -> Vec<Expr> {
        let item = |cx: &mut Self, e: &ra::Expr| match e {
            ra::Expr::Starred(s) => Expr {
                kind: ExprKind::Starred(cx.boxed(&s.value)),
                span: cx.span(s.range),
            },
            other => cx.expr(other),
        };
        es.iter().map(|e| item(self, e)).collect()
    }

    fn boxed(&mut self, e: &ra::Expr) -> Box<Expr> {
        Box::new(self.expr(e))
    }

    pub(super) fn expr(&mut self, e: &ra::Expr) -> Expr {
        self.nested(e.range(), |cx| cx.expr_inner(e))
            .unwrap_or_else(|| Expr {
                kind: ExprKind::Invalid,
                span: self.span(e.range()),
            })
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
            // -9223372036854775808: the magnitude alone does not fit in 64 bits.
            ra::Expr::UnaryOp(u) if u.op == ra::UnaryOp::USub && is_two_to_63(&u.operand) => {
                ExprKind::Literal(Literal::Int(i64::MIN))
            }
            ra::Expr::UnaryOp(u) => ExprKind::UnaryOp {
                op: match u.op {
                    ra::UnaryOp::Invert => UnaryOp::Invert,
                    ra::UnaryOp::Not => UnaryOp::Not,
                    ra::UnaryOp::UAdd => UnaryOp::Pos,
                    ra::UnaryOp::USub => UnaryOp::Neg,
                },
                operand: self.boxed(&u.operand),
            },
            ra::Expr::Lambda(l) => self.lambda(l, span),
            ra::Expr::If(i) => ExprKind::IfExp {
                test: self.boxed(&i.test),
                body: self.boxed(&i.body),
                orelse: self.boxed(&i.orelse),
            },
            ra::Expr::Dict(d) => self.dict(d, span),
            ra::Expr::Set(_) => {
                self.refuse(span, codes::DICT_SET, "set displays are", "use a tuple")
            }
            ra::Expr::ListComp(_)
            | ra::Expr::SetComp(_)
            | ra::Expr::DictComp(_)
            | ra::Expr::Generator(_) => self.refuse(
                span,
                codes::COMPREHENSION,
                "comprehensions and generator expressions are",
                "write the loop out with `for` and build a tuple",
            ),
            ra::Expr::Await(_) => self.refuse(
                span,
                codes::ASYNC,
                "`await` is",
                "compiled code cannot await",
            ),
            ra::Expr::Yield(_) | ra::Expr::YieldFrom(_) => self.refuse(
                span,
                codes::GENERATOR,
                "generators (`yield`) are",
                "return a tuple of all the values instead",
            ),
            ra::Expr::Compare(c) => self.compare(c),
            ra::Expr::Call(c) => self.call(c),
            ra::Expr::FString(_) | ra::Expr::TString(_) => self.refuse(
                span,
                codes::FSTRING,
                "f-strings are",
                "pass the values to print() separately, or build the text with str() and +",
            ),
            ra::Expr::StringLiteral(s) => self.string(s),
            ra::Expr::BytesLiteral(_) => {
                self.refuse(span, codes::LITERAL, "bytes literals are", "use a str")
            }
            ra::Expr::NumberLiteral(n) => self.number(n, span),
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
            ra::Expr::Starred(_) => self.refuse(
                span,
                codes::STAR,
                "starred expressions are",
                "list the items explicitly",
            ),
            ra::Expr::Name(n) => ExprKind::Name(Arc::from(n.id.as_str())),
            ra::Expr::List(l) => ExprKind::List(self.items(&l.elts)),
            ra::Expr::Tuple(t) => ExprKind::Tuple(self.items(&t.elts)),
            ra::Expr::Slice(s) => ExprKind::Slice {
                lower: s.lower.as_deref().map(|e| self.boxed(e)),
                upper: s.upper.as_deref().map(|e| self.boxed(e)),
                step: s.step.as_deref().map(|e| self.boxed(e)),
            },
            ra::Expr::IpyEscapeCommand(c) => self.ipython_escape(c.range),
        };
        Expr { kind, span }
    }

    fn lambda(&mut self, l: &ra::ExprLambda, span: Span) -> ExprKind {
        let params = match &l.parameters {
            Some(p) => self.parameters(p),
            None => Vec::new(),
        };
        let body = self.function_body(|cx| cx.expr(&l.body));
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

    /// A comparison; `is` must have None, True or False on one side (no object identity).
    fn compare(&mut self, c: &ra::ExprCompare) -> ExprKind {
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
                    let span = self.span(TextRange::new(l.range().start(), r.range().end()));
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

    /// `{'k': v, ...}`: keys must be string literals (anfora's dicts have string keys, known
    /// at compile time).
    fn dict(&mut self, d: &ra::ExprDict, span: Span) -> ExprKind {
        let mut items = Vec::new();
        for item in d.iter() {
            match &item.key {
                Some(ra::Expr::StringLiteral(s)) => {
                    items.push((Some(Arc::from(s.value.to_str())), self.expr(&item.value)));
                }
                Some(key) => {
                    let at = self.span(key.range());
                    self.unsupported(
                        codes::DICT_SET,
                        "dict keys other than string literals are",
                        at,
                        "use string keys, or a tuple",
                    );
                }
                None => items.push((None, self.expr(&item.value))),
            }
        }
        let _ = span;
        ExprKind::Dict(items)
    }

    fn call(&mut self, c: &ra::ExprCall) -> ExprKind {
        let func = self.boxed(&c.func);
        let args = self.items(&c.arguments.args);
        let mut keywords = Vec::new();
        for k in c.arguments.keywords.iter() {
            match &k.arg {
                Some(name) => keywords.push(Keyword {
                    name: Arc::from(name.as_str()),
                    value: self.expr(&k.value),
                    span: self.span(k.range),
                    unpack: false,
                }),
                None => keywords.push(Keyword {
                    name: Arc::from(""),
                    value: self.expr(&k.value),
                    span: self.span(k.range),
                    unpack: true,
                }),
            }
        }
        ExprKind::Call {
            func,
            args,
            keywords,
        }
    }

    fn string(&mut self, s: &ra::ExprStringLiteral) -> ExprKind {
        if let Some(at) = surrogate_escape(self.text, &s.value) {
            self.error(codes::LITERAL, LONE_SURROGATE, at, "a lone surrogate")
                .hint =
                Some("write whole characters, e.g. '\\U0001f600' rather than a UTF-16 pair".into());
            return ExprKind::Invalid;
        }
        ExprKind::Literal(Literal::Str(Arc::from(s.value.to_str())))
    }

    fn number(&mut self, n: &ra::ExprNumberLiteral, span: Span) -> ExprKind {
        match &n.value {
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
            ra::Number::Complex { .. } => self.refuse(
                span,
                codes::LITERAL,
                "complex numbers are",
                "use real numbers",
            ),
        }
    }
}

fn is_singleton(e: &ra::Expr) -> bool {
    matches!(e, ra::Expr::NoneLiteral(_) | ra::Expr::BooleanLiteral(_))
}

pub(super) fn bin_op(op: ra::Operator) -> BinOp {
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
