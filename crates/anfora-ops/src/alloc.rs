//! Fallible allocation of the values a program builds that are not tensors (strings, tuples,
//! lists), through `anfora-tensor`'s one helper and under its cap (`ANFORA_MAX_TENSOR_BYTES`):
//! a size past memory is Python's `MemoryError`, which the engines locate like any other
//! error, never an abort. Each builder takes the final length (checked arithmetic: `None`
//! when it overflows) and fills a buffer reserved for exactly that.

use std::rc::Rc;
use std::sync::Arc;

use crate::pynum::{PyErr, tensor};
use crate::value::Value;

/// The bookkeeping an `Rc` or `Arc` block holds before its data (two counts).
const COUNTS: usize = 2 * std::mem::size_of::<usize>();

fn too_large(what: &str) -> PyErr {
    ("MemoryError", format!("the {what} would be too large"))
}

/// Room for the `n` items of a tuple or list (`kind`).
pub fn room(kind: &str, n: usize) -> Result<Vec<Value>, PyErr> {
    tensor(anfora_tensor::try_buffer::<Value>(n, &|| {
        format!("a {kind} of {n} items")
    }))
}

/// The items of a tuple or list (`kind`) of `len` items that `fill` pushes, as the one block
/// the value shares.
pub fn items(
    kind: &str,
    len: Option<usize>,
    fill: impl FnOnce(&mut Vec<Value>),
) -> Result<Rc<[Value]>, PyErr> {
    let n = len.ok_or_else(|| too_large(kind))?;
    let what = || format!("a {kind} of {n} items");
    let mut v = room(kind, n)?;
    fill(&mut v);
    debug_assert_eq!(v.len(), n);
    // `Rc::from` copies the items into a block of its own.
    let bytes = std::mem::size_of_val(&v[..]) + COUNTS;
    tensor(anfora_tensor::probe(bytes, &what))?;
    Ok(Rc::from(v))
}

/// The str of `len` bytes that `fill` pushes.
pub fn string(len: Option<usize>, fill: impl FnOnce(&mut Vec<u8>)) -> Result<Arc<str>, PyErr> {
    let n = len.ok_or_else(|| too_large("str"))?;
    let what = || format!("a str of {n} bytes");
    let mut v = tensor(anfora_tensor::try_buffer::<u8>(n, &what))?;
    fill(&mut v);
    debug_assert_eq!(v.len(), n);
    tensor(anfora_tensor::probe(n + COUNTS, &what))?;
    let s = String::from_utf8(v).expect("built from whole strs");
    Ok(Arc::from(s))
}

/// `parts` one after the other, as a tuple or list.
pub fn concat(kind: &str, parts: &[&[Value]]) -> Result<Rc<[Value]>, PyErr> {
    let len = parts.iter().try_fold(0usize, |n, p| n.checked_add(p.len()));
    items(kind, len, |v| {
        parts.iter().for_each(|p| v.extend_from_slice(p))
    })
}

/// `part` `times` times, as a tuple or list.
pub fn repeat(kind: &str, part: &[Value], times: usize) -> Result<Rc<[Value]>, PyErr> {
    items(kind, part.len().checked_mul(times), |v| {
        (0..times).for_each(|_| v.extend_from_slice(part))
    })
}

/// `parts` one after the other, as a str.
pub fn concat_str(parts: &[&str]) -> Result<Arc<str>, PyErr> {
    let len = parts.iter().try_fold(0usize, |n, p| n.checked_add(p.len()));
    string(len, |v| {
        parts.iter().for_each(|p| v.extend_from_slice(p.as_bytes()))
    })
}

/// `part` `times` times, as a str.
pub fn repeat_str(part: &str, times: usize) -> Result<Arc<str>, PyErr> {
    string(part.len().checked_mul(times), |v| {
        (0..times).for_each(|_| v.extend_from_slice(part.as_bytes()))
    })
}
