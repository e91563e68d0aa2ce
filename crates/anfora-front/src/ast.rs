//! anfora's own Python AST: exactly the constructs the compiler supports, with spans. The ruff
//! adapter ([`crate::py_ast`]) builds it and diagnoses everything else, so the rest of the
//! frontend never sees ruff's types.

use std::rc::Rc;
use std::sync::Arc;

use anfora_ir::Span;

pub type Name = Arc<str>;

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    MatMul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    LShift,
    RShift,
    BitAnd,
    BitOr,
    BitXor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Pos,
    Invert,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    NotEq,
    Lt,
    LtE,
    Gt,
    GtE,
    Is,
    IsNot,
    In,
    NotIn,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Arc<str>),
    Ellipsis,
}

#[derive(Clone, Debug)]
pub struct Keyword {
    pub name: Name,
    pub value: Expr,
    pub span: Span,
    /// `**value`: the items of a dict, one keyword argument each (`name` is empty).
    pub unpack: bool,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Name(Name),
    Literal(Literal),
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    BinOp {
        op: BinOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    UnaryOp {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    BoolOp {
        op: BoolOp,
        values: Vec<Expr>,
    },
    Compare {
        left: Box<Expr>,
        ops: Vec<CmpOp>,
        comparators: Vec<Expr>,
    },
    IfExp {
        test: Box<Expr>,
        body: Box<Expr>,
        orelse: Box<Expr>,
    },
    Call {
        func: Box<Expr>,
        args: Vec<Expr>,
        keywords: Vec<Keyword>,
    },
    Attribute {
        value: Box<Expr>,
        attr: Name,
    },
    Subscript {
        value: Box<Expr>,
        index: Box<Expr>,
    },
    Slice {
        lower: Option<Box<Expr>>,
        upper: Option<Box<Expr>>,
        step: Option<Box<Expr>>,
    },
    Lambda(Rc<FunctionDef>),
    /// `{'k': v, **d, ...}`: a dict display with string-literal keys (`None` for `**d`).
    Dict(Vec<(Option<Name>, Expr)>),
    /// `*x` among a call's arguments: the items of `x`, one argument each.
    Starred(Box<Expr>),
    /// An unsupported construct that was already diagnosed.
    Invalid,
}

#[derive(Clone, Debug)]
pub enum Target {
    Name(Name, Span),
    Tuple(Vec<Target>, Span),
    /// `object[index]`: numpy's (or a list's) item assignment. `object` is a name or an
    /// attribute of one (`self.w[i]`).
    Item {
        object: Box<Expr>,
        index: Box<Expr>,
        span: Span,
    },
    /// `*name` inside a tuple target: the items the others leave, as a list.
    Starred(Name, Span),
    /// Already diagnosed.
    Invalid(Span),
}

impl Target {
    pub fn span(&self) -> Span {
        match self {
            Target::Name(_, s)
            | Target::Tuple(_, s)
            | Target::Item { span: s, .. }
            | Target::Starred(_, s)
            | Target::Invalid(s) => *s,
        }
    }

    /// The variables whose items this target assigns (`x` of `x[i] = v`).
    pub fn item_roots(&self, f: &mut dyn FnMut(&Name)) {
        match self {
            Target::Tuple(items, _) => items.iter().for_each(|t| t.item_roots(f)),
            Target::Item { object, .. } => {
                if let Some(n) = crate::ownership::item_root(object) {
                    f(n);
                }
            }
            Target::Name(..) | Target::Starred(..) | Target::Invalid(_) => {}
        }
    }

    /// Names bound by this target, in order.
    pub fn names(&self, out: &mut Vec<(Name, Span)>) {
        match self {
            Target::Name(n, s) | Target::Starred(n, s) => out.push((n.clone(), *s)),
            Target::Tuple(items, _) => items.iter().for_each(|t| t.names(out)),
            Target::Item { .. } | Target::Invalid(_) => {}
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    PositionalOnly,
    Normal,
    /// `*args`: the extra positional arguments, as a tuple.
    VarPositional,
    KeywordOnly,
    /// `**kwargs`: the keyword arguments no other parameter takes, as a dict.
    VarKeyword,
}

#[derive(Clone, Debug)]
pub struct ParamDef {
    pub name: Name,
    pub kind: ParamKind,
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct FunctionDef {
    pub name: Name,
    pub params: Vec<ParamDef>,
    pub body: Vec<Stmt>,
    /// The whole definition.
    pub span: Span,
    /// The `def name` part (or the `lambda` keyword), for messages.
    pub head_span: Span,
    pub is_lambda: bool,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct ImportName {
    /// Dotted module path, e.g. `anfora.ops`.
    pub module: String,
    /// Name bound in the module namespace.
    pub bound: Name,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    FunctionDef(Rc<FunctionDef>),
    Return(Option<Expr>),
    /// `a = b = value` has two targets, assigned left to right.
    Assign {
        targets: Vec<Target>,
        value: Expr,
    },
    /// `x op= value` or `x[i] op= value` (the target is a name or an item).
    AugAssign {
        target: Target,
        op: BinOp,
        value: Expr,
    },
    /// `obj.attr = value` (`op` None) or `obj.attr op= value`: a write of the Parameter the
    /// attribute holds (`self.weight = w` on a Cell updates the Parameter in place).
    AttrAssign {
        object: Expr,
        attr: Name,
        target_span: Span,
        op: Option<BinOp>,
        value: Expr,
    },
    /// `x: T` without a value: declares a local.
    Declare(Name),
    /// `nonlocal a, b`: the names are variables of an enclosing function.
    Nonlocal(Vec<(Name, Span)>),
    For {
        target: Target,
        iter: Expr,
        body: Vec<Stmt>,
    },
    While {
        test: Expr,
        body: Vec<Stmt>,
    },
    If {
        test: Expr,
        body: Vec<Stmt>,
        orelse: Vec<Stmt>,
    },
    Assert {
        test: Expr,
        msg: Option<Expr>,
    },
    Expr(Expr),
    Pass,
    Break,
    Continue,
    /// `import anfora`, `import anfora as af`, `from anfora import ops`: module level only.
    Import(Vec<ImportName>),
    /// `if __name__ == "__main__": ...` at module level, which compiled code ignores.
    MainGuard,
    /// Already diagnosed.
    Invalid,
}

/// A parsed source file.
#[derive(Clone, Debug)]
pub struct Module {
    pub file: anfora_ir::FileId,
    pub body: Vec<Stmt>,
}
