//! Python literals given on the command line, parsed as `ast.literal_eval` would.

use std::sync::Arc;

use anfora_ir::Const;
use ruff_python_ast as ra;

/// Parses one literal expression given on the command line (`3`, `-2.5`, `"s"`,
/// `(1, (2, 3))`, `[[1, 2]]`), as `ast.literal_eval` would, into the constant it denotes.
pub fn parse_literal(text: &str) -> Result<Const, String> {
    let parsed = ruff_python_parser::parse_expression(text)
        .map_err(|e| format!("not a Python literal: {}", e.error))?;
    literal(parsed.syntax().body.as_ref())
}

fn literal(e: &ra::Expr) -> Result<Const, String> {
    anfora_ir::deep(|| literal_inner(e))
}

fn literal_inner(e: &ra::Expr) -> Result<Const, String> {
    Ok(match e {
        ra::Expr::NoneLiteral(_) => Const::None,
        ra::Expr::BooleanLiteral(b) => Const::Bool(b.value),
        ra::Expr::NumberLiteral(n) => match &n.value {
            ra::Number::Int(i) => Const::Int(
                i.as_i64()
                    .ok_or_else(|| "integer literal does not fit in 64 bits".to_string())?,
            ),
            ra::Number::Float(f) => Const::Float(*f),
            ra::Number::Complex { .. } => return Err("complex numbers are not supported".into()),
        },
        ra::Expr::StringLiteral(s) => Const::Str(Arc::from(s.value.to_str())),
        ra::Expr::UnaryOp(u) if u.op == ra::UnaryOp::USub => match literal(&u.operand)? {
            Const::Int(i) => Const::Int(
                i.checked_neg()
                    .ok_or_else(|| "integer literal does not fit in 64 bits".to_string())?,
            ),
            Const::Float(f) => Const::Float(-f),
            _ => return Err("`-` applies to numbers only".into()),
        },
        ra::Expr::UnaryOp(u) if u.op == ra::UnaryOp::UAdd => match literal(&u.operand)? {
            l @ (Const::Int(_) | Const::Float(_)) => l,
            _ => return Err("`+` applies to numbers only".into()),
        },
        ra::Expr::Tuple(t) => Const::tuple(t.elts.iter().map(literal).collect::<Result<_, _>>()?),
        ra::Expr::List(l) => Const::List(l.elts.iter().map(literal).collect::<Result<_, _>>()?),
        _ => {
            return Err(
                "not a Python literal (numbers, strings, True/False/None, tuples, lists)".into(),
            );
        }
    })
}
