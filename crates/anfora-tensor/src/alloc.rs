//! Size checks and fallible allocation of tensor-sized buffers.
//!
//! Every buffer whose length a user controls (the storage of every result, and intermediate
//! copies such as the casts inside binary ops and reductions) is allocated here, by
//! [`try_vec_capped`] and its wrappers [`try_vec`], [`try_filled`] and [`try_collect`]. All of
//! them first pass [`check_size_capped`], which applies numpy's size rule (ValueError "array is
//! too big" when the byte count overflows `isize`) and refuses requests above a memory cap with
//! a `MemoryError` naming the size, shape and dtype. Buffers above 4 KiB are then reserved with
//! `Vec::try_reserve_exact` (or, for large zero fills, `alloc_zeroed`), so that a failed
//! allocation is an error rather than an abort.
//!
//! The cap is the machine's physical memory (`MemTotal` in `/proc/meminfo`; 16 GiB when that
//! cannot be read), or the byte count in the environment variable `ANFORA_MAX_TENSOR_BYTES`. It
//! is read once, at the first allocation. It bounds each buffer, not their sum.
//!
//! The values a program builds that are not tensors (strings, tuples, lists: `anfora-ops`)
//! take their buffers from [`try_buffer`] and [`probe`], under the same cap, so that one
//! variable bounds every allocation whose size a program decides.
//!
//! Invariant: every `Tensor`'s shape passes [`checked_numel`] for its dtype, so products of its
//! dimensions (element counts, strides) cannot overflow.

use std::sync::OnceLock;

use crate::element::Element;
use crate::shape_repr::tuple_repr;
use crate::{DType, ErrorKind, Result, TensorError};

/// The environment variable that overrides the cap (a number of bytes).
pub(crate) const ENV_VAR: &str = "ANFORA_MAX_TENSOR_BYTES";

/// The cap when the machine's memory cannot be read.
const FALLBACK_BYTES: usize = 16 << 30;

/// numpy's message when `size * itemsize` does not fit in `intp`.
pub(crate) const TOO_BIG: &str = "array is too big; `arr.size * arr.dtype.itemsize` is larger than \
                                  the maximum possible size.";

#[cold]
pub(crate) fn too_big() -> TensorError {
    TensorError::new(ErrorKind::Value, TOO_BIG)
}

/// Where the cap comes from (for the error message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CapSource {
    /// `ANFORA_MAX_TENSOR_BYTES`.
    Env,
    /// `MemTotal` in `/proc/meminfo`.
    MemTotal,
    /// Neither was available.
    Fallback,
}

/// The largest tensor buffer, in bytes, that may be allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cap {
    pub(crate) bytes: usize,
    pub(crate) source: CapSource,
}

impl Cap {
    /// The cap given the value of `ANFORA_MAX_TENSOR_BYTES` and the text of `/proc/meminfo`.
    /// A variable that is not a whole number of bytes is ignored.
    pub(crate) fn from_sources(env: Option<&str>, meminfo: Option<&str>) -> Cap {
        if let Some(bytes) = env.and_then(|v| v.trim().parse::<u64>().ok()) {
            return Cap {
                bytes: usize::try_from(bytes).unwrap_or(usize::MAX),
                source: CapSource::Env,
            };
        }
        match meminfo.and_then(mem_total) {
            Some(bytes) => Cap {
                bytes,
                source: CapSource::MemTotal,
            },
            None => Cap {
                bytes: FALLBACK_BYTES,
                source: CapSource::Fallback,
            },
        }
    }

    /// Why a request above the cap is refused, e.g. "more than this machine's 23.5 GiB of memory".
    pub(crate) fn describe(self) -> String {
        let size = format_bytes(self.bytes);
        match self.source {
            CapSource::Env => format!("more than the {size} limit set by {ENV_VAR}"),
            CapSource::MemTotal => format!("more than this machine's {size} of memory"),
            CapSource::Fallback => {
                format!("more than the {size} assumed when the machine's memory is unknown")
            }
        }
    }
}

/// The machine's memory in bytes: `MemTotal` in the text of `/proc/meminfo`.
pub(crate) fn mem_total(meminfo: &str) -> Option<usize> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let kib: usize = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => kib.checked_mul(1024),
        Some(_) => None,
    }
}

/// The process-wide cap, read once.
#[inline]
pub(crate) fn cap() -> Cap {
    static CAP: OnceLock<Cap> = OnceLock::new();
    *CAP.get_or_init(|| {
        let env = std::env::var(ENV_VAR).ok();
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
        Cap::from_sources(env.as_deref(), meminfo.as_deref())
    })
}

/// `40000000000` -> `37.3 GiB`: binary units with one decimal, or a plain count below 1 KiB.
pub(crate) fn format_bytes(bytes: usize) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    match bytes {
        1 => return "1 byte".to_string(),
        0..1024 => return format!("{bytes} bytes"),
        _ => {}
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    // Move up while the value would print as 1024.0 or more.
    while value >= 1023.95 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// numpy's size rule for an array of `shape` with `itemsize`-byte elements: the item size times
/// the product of the nonzero dimensions must fit in `isize` (numpy's ValueError "array is too
/// big", raised even when a dimension is 0). Returns the element count. `itemsize` is a power of
/// two.
#[inline]
pub(crate) fn checked_numel(shape: &[usize], itemsize: usize) -> Result<usize> {
    debug_assert!(itemsize.is_power_of_two());
    // The largest count whose size in bytes fits in `isize`.
    let limit = isize::MAX as usize >> itemsize.trailing_zeros();
    let mut nonzero: usize = 1;
    let mut empty = false;
    for &d in shape {
        if d == 0 {
            empty = true;
            continue;
        }
        nonzero = match nonzero.checked_mul(d) {
            Some(n) if n <= limit => n,
            _ => return Err(too_big()),
        };
    }
    Ok(if empty { 0 } else { nonzero })
}

/// [`checked_numel`] for a dtype.
pub(crate) fn checked_numel_of(shape: &[usize], dtype: DType) -> Result<usize> {
    checked_numel(shape, dtype.size_of())
}

/// The element count of an iteration over `shape` (numpy's nditer): ValueError "iterator is too
/// large" when it does not fit in `isize`. A zero dimension makes it 0.
pub(crate) fn checked_iter_size(shape: &[usize]) -> Result<usize> {
    if shape.contains(&0) {
        return Ok(0);
    }
    shape
        .iter()
        .try_fold(1usize, |acc, &d| {
            acc.checked_mul(d).filter(|&n| n <= isize::MAX as usize)
        })
        .ok_or_else(|| TensorError::new(ErrorKind::Value, "iterator is too large"))
}

/// The MemoryError for a tensor of `shape` and `dtype` that cannot be allocated, and why.
#[cold]
#[inline(never)]
fn refusal(shape: &[usize], dtype: DType, why: &str) -> TensorError {
    // Cannot overflow: callers checked the size with `checked_numel`.
    let bytes = shape.iter().product::<usize>() * dtype.size_of();
    TensorError::new(
        ErrorKind::Memory,
        format!(
            "cannot allocate {} for a tensor of shape {} and dtype {dtype} ({why})",
            format_bytes(bytes),
            tuple_repr(shape),
        ),
    )
}

/// The checks of [`try_vec_capped`] without the allocation: numpy's ValueError when the size
/// overflows, a MemoryError above `cap`. Returns the element count.
#[inline(always)]
pub(crate) fn check_size_capped(shape: &[usize], dtype: DType, cap: Cap) -> Result<usize> {
    let n = checked_numel(shape, dtype.size_of())?;
    if n * dtype.size_of() > cap.bytes {
        return Err(refusal(shape, dtype, &cap.describe()));
    }
    Ok(n)
}

/// [`check_size_capped`] with the process-wide cap: whether a result could be allocated, to
/// refuse it before any other work.
#[inline(always)]
pub(crate) fn check_size(shape: &[usize], dtype: DType) -> Result<usize> {
    check_size_capped(shape, dtype, cap())
}

/// Buffers up to this size are allocated with `Vec::with_capacity`, which is a little cheaper for
/// the many tiny tensors of scalar code. Its failure aborts, but so would the `Arc` that holds the
/// tensor: an allocator that cannot find 4 KiB leaves nothing to recover.
const SMALL_BYTES: usize = 4096;

/// THE allocation helper: an empty vector with capacity for the elements of a `T` tensor of
/// `shape`, refused with numpy's ValueError when the size overflows, and with a MemoryError
/// above `cap` or when the allocator fails. Returns the element count too.
#[inline(always)]
pub(crate) fn try_vec_capped<T: Element>(shape: &[usize], cap: Cap) -> Result<(Vec<T>, usize)> {
    let n = check_size_capped(shape, T::DTYPE, cap)?;
    Ok((reserve(shape, n)?, n))
}

/// Room for the `n` elements of a `T` tensor of `shape` that passed [`check_size_capped`].
#[inline(always)]
pub(crate) fn reserve<T: Element>(shape: &[usize], n: usize) -> Result<Vec<T>> {
    debug_assert_eq!(std::mem::size_of::<T>(), T::DTYPE.size_of());
    if n * std::mem::size_of::<T>() <= SMALL_BYTES {
        return Ok(Vec::with_capacity(n));
    }
    let mut v = Vec::new();
    crate::memory::fallibly(|| v.try_reserve_exact(n))
        .map_err(|_| refusal(shape, T::DTYPE, "the allocation failed"))?;
    Ok(v)
}

/// [`try_vec`] for any element type, the half types included (`dtype` says its size): the
/// copy of a view's elements.
pub(crate) fn try_vec_of<T>(shape: &[usize], dtype: DType) -> Result<Vec<T>> {
    debug_assert_eq!(std::mem::size_of::<T>(), dtype.size_of());
    let n = check_size(shape, dtype)?;
    let mut v = Vec::new();
    crate::memory::fallibly(|| v.try_reserve_exact(n))
        .map_err(|_| refusal(shape, dtype, "the allocation failed"))?;
    Ok(v)
}

/// [`try_vec_capped`] with the process-wide cap.
#[inline(always)]
pub(crate) fn try_vec<T: Element>(shape: &[usize]) -> Result<Vec<T>> {
    try_vec_capped(shape, cap()).map(|(v, _)| v)
}

/// A `T` tensor buffer of `shape` with every element `value`. A large buffer of zeros (all bits
/// zero) is the allocator's zeroed memory (`calloc`), whose pages the kernel provides on first
/// touch, as with `vec![0; n]`: zeros stay cheap however large they are.
#[inline(always)]
pub(crate) fn try_filled<T: Element>(shape: &[usize], value: T) -> Result<Vec<T>> {
    let n = check_size(shape, T::DTYPE)?;
    if n * std::mem::size_of::<T>() > SMALL_BYTES && value.same(T::from_bool(false)) {
        return zeroed(n).ok_or_else(|| refusal(shape, T::DTYPE, "the allocation failed"));
    }
    let mut v = reserve(shape, n)?;
    v.resize(n, value);
    Ok(v)
}

/// `n` zero elements from `alloc_zeroed`, or `None` when the allocator fails.
fn zeroed<T: Element>(n: usize) -> Option<Vec<T>> {
    let layout = std::alloc::Layout::array::<T>(n).ok()?;
    if layout.size() == 0 {
        return Some(Vec::new());
    }
    // SAFETY: `layout` has a nonzero size.
    let ptr = crate::memory::fallibly(|| unsafe { std::alloc::alloc_zeroed(layout) }).cast::<T>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `[T; n]`, the one a
    // `Vec<T>` of capacity `n` has, and its `n` elements are initialized: all-zero bytes are a
    // valid value (`false`, `0` or `0.0`) of every element type.
    Some(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// A `T` tensor buffer of `shape` holding the items of `iter`, which yields exactly as many.
#[inline(always)]
pub(crate) fn try_collect<T: Element>(
    shape: &[usize],
    iter: impl Iterator<Item = T>,
) -> Result<Vec<T>> {
    let (mut v, n) = try_vec_capped(shape, cap())?;
    v.extend(iter);
    debug_assert_eq!(v.len(), n);
    Ok(v)
}

/// The MemoryError for a buffer of `bytes` (`None`: more than `usize` counts) for `what`.
#[cold]
fn buffer_refusal(bytes: Option<usize>, what: &dyn Fn() -> String, why: &str) -> TensorError {
    let size = bytes.map_or_else(|| "more memory than exists".to_string(), format_bytes);
    let message = format!("cannot allocate {size} for {} ({why})", what());
    TensorError::new(ErrorKind::Memory, message)
}

/// THE allocation helper for buffers that are not a tensor's (a str, a tuple, a list: the values
/// `anfora-ops` builds): room for `n` items of `T`, refused with a MemoryError naming `what`
/// (e.g. "a tuple of 12 items") when the size overflows, is above the cap or the allocator
/// fails, never an abort.
pub fn try_buffer<T>(n: usize, what: &dyn Fn() -> String) -> Result<Vec<T>> {
    let Some(bytes) = n.checked_mul(std::mem::size_of::<T>()) else {
        return Err(buffer_refusal(None, what, "the size overflows"));
    };
    let cap = cap();
    if bytes > cap.bytes {
        return Err(buffer_refusal(Some(bytes), what, &cap.describe()));
    }
    let mut v = Vec::new();
    crate::memory::fallibly(|| v.try_reserve_exact(n))
        .map_err(|_| buffer_refusal(Some(bytes), what, "the allocation failed"))?;
    Ok(v)
}

/// Whether the allocator could give `bytes` now, the block freed again: the check before an
/// allocation that cannot fail softly (the one block of an `Rc<[T]>` or `Arc<str>`, which
/// stable Rust only allocates infallibly) of data that [`try_buffer`] already held, under the
/// cap.
pub fn probe(bytes: usize, what: &dyn Fn() -> String) -> Result<()> {
    let mut v = Vec::<u8>::new();
    crate::memory::fallibly(|| v.try_reserve_exact(bytes))
        .map_err(|_| buffer_refusal(Some(bytes), what, "the allocation failed"))
}
