//! How numpy spells shapes in messages.

/// `(2, 3)`, `(4,)`, `()`: a shape as Python prints the tuple.
pub fn tuple_repr(shape: &[usize]) -> String {
    spelled(shape, ", ")
}

/// `(2,3)`, `(4,)`, `()`: numpy's compact spelling in broadcasting errors.
pub(crate) fn compact_shape(shape: &[usize]) -> String {
    spelled(shape, ",")
}

fn spelled(shape: &[usize], sep: &str) -> String {
    match shape {
        [d] => format!("({d},)"),
        _ => {
            let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!("({})", dims.join(sep))
        }
    }
}
