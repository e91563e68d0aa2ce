//! Python literals given on the command line, parsed as `ast.literal_eval` would.

use std::sync::Arc;

use anfora_ir::Const;
use ruff_python_ast as ra;
use ruff_python_ast::str_prefix::StringLiteralPrefix;
use ruff_text_size::{TextRange, TextSize};

/// Parses one literal expression given on the command line (`3`, `-2.5`, `"s"`,
/// `(1, (2, 3))`, `[[1, 2]]`), as `ast.literal_eval` would, into the constant it denotes.
pub fn parse_literal(text: &str) -> Result<Const, String> {
    let parsed = ruff_python_parser::parse_expression(text)
        .map_err(|e| format!("not a Python literal: {}", e.error))?;
    literal(text, parsed.syntax().body.as_ref())
}

fn literal(text: &str, e: &ra::Expr) -> Result<Const, String> {
    anfora_ir::deep(|| literal_inner(text, e))
}

fn elements(text: &str, elts: &[ra::Expr]) -> Result<Vec<Const>, String> {
    elts.iter().map(|e| literal(text, e)).collect()
}

pub(crate) fn is_two_to_63(e: &ra::Expr) -> bool {
    matches!(e, ra::Expr::NumberLiteral(n)
        if matches!(&n.value, ra::Number::Int(i) if i.as_u64() == Some(1 << 63)))
}

fn literal_inner(text: &str, e: &ra::Expr) -> Result<Const, String> {
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
        ra::Expr::StringLiteral(s) => {
            if surrogate_escape(text, &s.value).is_some() {
                return Err(LONE_SURROGATE.into());
            }
            Const::Str(Arc::from(s.value.to_str()))
        }
        // -9223372036854775808: the magnitude alone does not fit in 64 bits.
        ra::Expr::UnaryOp(u) if u.op == ra::UnaryOp::USub && is_two_to_63(&u.operand) => {
            Const::Int(i64::MIN)
        }
        ra::Expr::UnaryOp(u) if u.op == ra::UnaryOp::USub => match literal(text, &u.operand)? {
            Const::Int(i) => Const::Int(
                i.checked_neg()
                    .ok_or_else(|| "integer literal does not fit in 64 bits".to_string())?,
            ),
            Const::Float(f) => Const::Float(-f),
            _ => return Err("`-` applies to numbers only".into()),
        },
        ra::Expr::UnaryOp(u) if u.op == ra::UnaryOp::UAdd => match literal(text, &u.operand)? {
            l @ (Const::Int(_) | Const::Float(_)) => l,
            _ => return Err("`+` applies to numbers only".into()),
        },
        ra::Expr::Tuple(t) => Const::tuple(elements(text, &t.elts)?),
        ra::Expr::List(l) => Const::List(elements(text, &l.elts)?.into()),
        _ => {
            return Err(
                "not a Python literal (numbers, strings, True/False/None, tuples, lists)".into(),
            );
        }
    })
}

/// Why a string with a lone surrogate is refused.
pub(crate) const LONE_SURROGATE: &str = "a lone surrogate (\\ud800 to \\udfff) in a string is not supported: anfora's strings hold \
     Unicode scalar values only";

/// Where the first escape of a lone surrogate (`\ud800`…`\udfff`, or the same as `\U0000d800`)
/// is in the source `text` of a string literal, if any. The parser has already replaced it
/// with U+FFFD, so only the source shows it. Raw strings have no escapes.
pub(crate) fn surrogate_escape(text: &str, value: &ra::StringLiteralValue) -> Option<TextRange> {
    value.as_slice().iter().find_map(|part| {
        if matches!(part.flags.prefix(), StringLiteralPrefix::Raw { .. }) {
            return None;
        }
        let start = part.range.start().to_usize();
        let source = text.get(start..part.range.end().to_usize())?;
        let at = surrogate_in(source)?;
        let begin = TextSize::try_from(start + at).ok()?;
        Some(TextRange::at(begin, TextSize::from(6)))
    })
}

/// The byte offset of the first `\u`/`\U` escape of a surrogate in a literal's source text.
fn surrogate_in(source: &str) -> Option<usize> {
    let bytes = source.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let digits = match bytes.get(i + 1) {
            Some(b'u') => 4,
            Some(b'U') => 8,
            _ => {
                i += 2; // an escaped character, `\\` included
                continue;
            }
        };
        let hex = source.get(i + 2..i + 2 + digits);
        if let Some(v) = hex.and_then(|h| u32::from_str_radix(h, 16).ok())
            && (0xd800..0xe000).contains(&v)
        {
            return Some(i);
        }
        i += 2;
    }
    None
}
