//! The loops every elementwise kernel runs: runtime SIMD dispatch, maps over chunks of operands
//! that are slices or broadcast constants, and splitting large outputs over threads.
//!
//! Every loop applies one scalar function per element, and that function is the only definition
//! of the operation: the compiler vectorizes the loop for the instruction set picked at run time
//! (AVX-512, AVX2+FMA or baseline through `pulp`), and because the scalar code uses only IEEE
//! operations (fused multiply-adds included), every lane, every remainder element and every
//! instruction set gives the same bits. The unfused ops and the fused kernels call the same loops,
//! so they agree bitwise.

use std::mem::MaybeUninit;
use std::sync::OnceLock;

use crate::element::{AnyOut, Element, Val};

/// Elements per chunk: operands and temporaries of this size stay in L1/L2 while a fused
/// program runs over them.
pub(crate) const CHUNK: usize = 2048;

/// Binary kernels this small run without the dispatch to an instruction set.
const SMALL: usize = 16;

/// Outputs with fewer elements than this never use threads.
pub(crate) const PAR_MIN: usize = 1 << 15;

/// The instruction set found at startup.
#[inline(always)]
fn arch() -> pulp::Arch {
    static ARCH: OnceLock<pulp::Arch> = OnceLock::new();
    *ARCH.get_or_init(pulp::Arch::new)
}

/// The instruction set the kernels run with, as [`dispatch`] picks it.
pub(crate) fn simd_name() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if pulp::x86::V4::try_new().is_some() {
            return "AVX-512";
        }
        if pulp::x86::V3::try_new().is_some() {
            return "AVX2+FMA";
        }
    }
    "baseline"
}

/// Runs `op` compiled for the best instruction set of this machine.
#[inline(always)]
pub(crate) fn dispatch<Op: pulp::WithSimd>(op: Op) -> Op::Output {
    arch().dispatch(op)
}

/// `f`, run as [`dispatch`] runs a kernel: inlined into code compiled for the best instruction
/// set of this machine, so its loops vectorize for it.
struct Run<F>(F);

impl<R, F: FnOnce() -> R> pulp::WithSimd for Run<F> {
    type Output = R;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> R {
        (self.0)()
    }
}

/// Runs `f` compiled for the best instruction set of this machine (mark the closure
/// `#[inline(always)]`).
#[inline(always)]
pub(crate) fn dispatch_fn<R>(f: impl FnOnce() -> R) -> R {
    dispatch(Run(f))
}

/// A slice seen as uninitialized memory, to be overwritten by a kernel.
#[inline(always)]
pub(crate) fn as_uninit<T: Copy>(s: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has the layout of `T`, and the kernels only ever write
    // initialized values through the returned slice, so `s` stays initialized.
    unsafe { &mut *(s as *mut [T] as *mut [MaybeUninit<T>]) }
}

impl AnyOut<'_> {
    /// The same destination, borrowed for a shorter time.
    pub(crate) fn reborrow(&mut self) -> AnyOut<'_> {
        match self {
            AnyOut::Bool(s) => AnyOut::Bool(s),
            AnyOut::I32(s) => AnyOut::I32(s),
            AnyOut::I64(s) => AnyOut::I64(s),
            AnyOut::F32(s) => AnyOut::F32(s),
            AnyOut::F64(s) => AnyOut::F64(s),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            AnyOut::Bool(s) => s.len(),
            AnyOut::I32(s) => s.len(),
            AnyOut::I64(s) => s.len(),
            AnyOut::F32(s) => s.len(),
            AnyOut::F64(s) => s.len(),
        }
    }
}

/// `dst[i] = f(src[i])`.
struct Map1<'a, A, O, F> {
    src: &'a [A],
    dst: &'a mut [MaybeUninit<O>],
    f: F,
}

impl<A: Copy, O, F: Fn(A) -> O> pulp::WithSimd for Map1<'_, A, O, F> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let Map1 { src, dst, f } = self;
        let src = &src[..dst.len()];
        for (d, &x) in dst.iter_mut().zip(src) {
            d.write(f(x));
        }
    }
}

/// Writes `f(src[i])` into every `dst[i]` (`src` and `dst` have the same length). Never
/// inlined, as [`map2_into`].
#[inline(never)]
pub(crate) fn map1_into<A: Copy, O>(src: &[A], dst: &mut [MaybeUninit<O>], f: impl Fn(A) -> O) {
    assert_eq!(src.len(), dst.len());
    dispatch(Map1 { src, dst, f });
}

/// `data[i] = f(data[i])`.
struct Map1InPlace<'a, T, F> {
    data: &'a mut [T],
    f: F,
}

impl<T: Copy, F: Fn(T) -> T> pulp::WithSimd for Map1InPlace<'_, T, F> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        for x in self.data.iter_mut() {
            *x = (self.f)(*x);
        }
    }
}

/// Replaces every element of `data` by `f` of it.
#[inline(always)]
pub(crate) fn map1_in_place<T: Copy>(data: &mut [T], f: impl Fn(T) -> T) {
    dispatch(Map1InPlace { data, f });
}

/// `dst[i] = f(a[i], b[i])` for the four combinations of slices and constants.
struct Map2<'a, A, B, O, F> {
    a: Val<'a, A>,
    b: Val<'a, B>,
    dst: &'a mut [MaybeUninit<O>],
    f: F,
}

impl<A: Copy, B: Copy, O: Copy, F: Fn(A, B) -> O> pulp::WithSimd for Map2<'_, A, B, O, F> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let Map2 { a, b, dst, f } = self;
        let n = dst.len();
        match (a, b) {
            (Val::Slice(a), Val::Slice(b)) => {
                let (a, b) = (&a[..n], &b[..n]);
                for ((d, &x), &y) in dst.iter_mut().zip(a).zip(b) {
                    d.write(f(x, y));
                }
            }
            (Val::Slice(a), Val::Splat(y)) => {
                for (d, &x) in dst.iter_mut().zip(&a[..n]) {
                    d.write(f(x, y));
                }
            }
            (Val::Splat(x), Val::Slice(b)) => {
                for (d, &y) in dst.iter_mut().zip(&b[..n]) {
                    d.write(f(x, y));
                }
            }
            (Val::Splat(x), Val::Splat(y)) => {
                let v = f(x, y);
                for d in dst.iter_mut() {
                    d.write(v);
                }
            }
        }
    }
}

/// Writes `f(a[i], b[i])` into every `dst[i]`; slices have `dst`'s length.
///
/// Never inlined: the whole-tensor, in-place and fused paths of a binary op call it with the
/// same function type, so one compiled copy per op and dtype serves all three. Inlined, each
/// path had its own, for every instruction set: 0.34 MB of the runtime library's 5.2 MB.
/// The call costs 2 % on the steady-state calls of W4, which run many ops on a few elements,
/// and nothing measurable on large tensors (`dispatch` and `elementwise` benchmarks,
/// alternated, 2026-11-27).
#[inline(never)]
pub(crate) fn map2_into<A: Copy, B: Copy, O: Copy>(
    a: Val<A>,
    b: Val<B>,
    dst: &mut [MaybeUninit<O>],
    f: impl Fn(A, B) -> O,
) {
    let n = dst.len();
    for v in [a.len_hint(), b.len_hint()].into_iter().flatten() {
        assert_eq!(v, n);
    }
    let op = Map2 { a, b, dst, f };
    if n <= SMALL {
        // Not worth a dispatch (IEEE arithmetic gives the same bits everywhere).
        pulp::WithSimd::with_simd(op, pulp::Scalar::new())
    } else {
        dispatch(op)
    }
}

impl<T> Val<'_, T> {
    #[inline(always)]
    fn len_hint(&self) -> Option<usize> {
        match self {
            Val::Slice(s) => Some(s.len()),
            Val::Splat(_) => None,
        }
    }
}

/// `dst[i] = if c[i] { x[i] } else { y[i] }`.
struct Select<'a, T> {
    c: Val<'a, bool>,
    x: Val<'a, T>,
    y: Val<'a, T>,
    dst: &'a mut [MaybeUninit<T>],
}

impl<T: Copy> pulp::WithSimd for Select<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let Select { c, x, y, dst } = self;
        // One loop per combination, so that no element pays for a match.
        macro_rules! go {
            ($c:expr, $x:expr, $y:expr) => {
                for (i, d) in dst.iter_mut().enumerate() {
                    let _ = i;
                    d.write(if $c(i) { $x(i) } else { $y(i) });
                }
            };
        }
        match (c, x, y) {
            (Val::Slice(c), Val::Slice(x), Val::Slice(y)) => {
                let n = dst.len();
                let (c, x, y) = (&c[..n], &x[..n], &y[..n]);
                go!(|i| c[i], |i| x[i], |i| y[i])
            }
            (Val::Slice(c), Val::Slice(x), Val::Splat(y)) => {
                let n = dst.len();
                let (c, x) = (&c[..n], &x[..n]);
                go!(|i| c[i], |i| x[i], |_| y)
            }
            (Val::Slice(c), Val::Splat(x), Val::Slice(y)) => {
                let n = dst.len();
                let (c, y) = (&c[..n], &y[..n]);
                go!(|i| c[i], |_| x, |i| y[i])
            }
            (Val::Slice(c), Val::Splat(x), Val::Splat(y)) => {
                let c = &c[..dst.len()];
                go!(|i| c[i], |_| x, |_| y)
            }
            (Val::Splat(c), x, y) => {
                let v = if c { x } else { y };
                match v {
                    Val::Slice(v) => {
                        dst.write_copy_of_slice(&v[..dst.len()]);
                    }
                    Val::Splat(v) => {
                        for d in dst.iter_mut() {
                            d.write(v);
                        }
                    }
                }
            }
        }
    }
}

/// `where`: writes `x[i]` where `c[i]`, else `y[i]`; slices have `dst`'s length.
#[inline(always)]
pub(crate) fn select_into<T: Copy>(c: Val<bool>, x: Val<T>, y: Val<T>, dst: &mut [MaybeUninit<T>]) {
    let n = dst.len();
    for v in [c.len_hint(), x.len_hint(), y.len_hint()]
        .into_iter()
        .flatten()
    {
        assert_eq!(v, n);
    }
    dispatch(Select { c, x, y, dst });
}

/// Whether `pred` holds for any element (`Val::Splat` counts once).
#[inline(always)]
pub(crate) fn any<T: Copy>(v: Val<T>, pred: impl Fn(T) -> bool) -> bool {
    match v {
        Val::Slice(s) => s.iter().fold(false, |acc, &x| acc | pred(x)),
        Val::Splat(x) => pred(x),
    }
}

/// The number of elements each parallel task takes: a multiple of [`CHUNK`], a few tasks per
/// thread so that a busy thread does not hold the others up.
pub(crate) fn task_len(n: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    let per = n.div_ceil(threads * 8);
    per.div_ceil(CHUNK).max(4) * CHUNK
}

/// Whether `n` output elements are worth splitting over threads.
#[inline(always)]
pub(crate) fn parallel(n: usize) -> bool {
    n >= PAR_MIN && rayon::current_num_threads() > 1
}

/// Calls `work(start, part)` on consecutive parts of `dst` covering it, in parallel for large
/// outputs. `start` is the index of the part's first element.
#[inline]
pub(crate) fn for_parts<E: Send>(dst: &mut [E], work: impl Fn(usize, &mut [E]) + Sync + Send) {
    let n = dst.len();
    if !parallel(n) {
        work(0, dst);
        return;
    }
    let len = task_len(n);
    crate::parallel::for_each_part(dst, len, |i, part| work(i * len, part));
}

/// Builds a vector of `n` elements whose memory `fill` initializes entirely. `v` is empty with
/// capacity for at least `n` elements.
///
/// # Safety
/// `fill` gets exactly `n` slots and must write every one of them, or panic (the kernels of this
/// module do).
#[inline]
pub(crate) unsafe fn fill_vec<O: Element>(
    mut v: Vec<O>,
    n: usize,
    fill: impl FnOnce(&mut [MaybeUninit<O>]),
) -> Vec<O> {
    assert!(v.is_empty() && v.capacity() >= n);
    fill(&mut v.spare_capacity_mut()[..n]);
    // SAFETY: `fill` wrote all `n` elements (the caller's promise); a panic never gets here.
    unsafe { v.set_len(n) };
    v
}

/// Two input rows of 2×2 tiles, the same rows of their gradient, and the row of the output's
/// sensitivity they make.
type TileRows<'a, T, U> = ((&'a [T], &'a [T]), (&'a mut [U], &'a mut [U]), &'a [T]);

/// The rows of 2×2 tiles of max pooling (input rows `w` long): each pair of input rows
/// of `x`, the same rows of its gradient `dx`, and the row of `d` (`ow` long) they make.
#[inline(always)]
pub(crate) fn tile_row_pairs<'a, T, U>(
    x: &'a [T],
    dx: &'a mut [U],
    d: &'a [T],
    (w, ow): (usize, usize),
) -> impl Iterator<Item = TileRows<'a, T, U>> {
    x.chunks_exact(2 * w)
        .zip(dx.chunks_exact_mut(2 * w))
        .zip(d.chunks_exact(ow))
        .map(move |((rows, dxr), dr)| (rows.split_at(w), dxr.split_at_mut(w), dr))
}
