//! Python literals given on the command line, parsed as `ast.literal_eval` would.

use std::sync::Arc;

use ruff_python_ast as ra;

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
