//! Splitting a kernel's work over the thread pool through one non-generic entry point.
//!
//! Every parallel kernel goes through [`for_each_task`], which takes its work as a `dyn Fn`:
//! rayon's splitting and joining code is then compiled once for the whole library instead of
//! once per kernel, element type and instruction set (those copies were 1.1 MB of the runtime
//! library's 5.2 MB of code). The kernels' own loops stay monomorphized inside the closure, so
//! the only cost is one indirect call per task.

/// Runs `task(i)` for every `i` in `0..tasks`, split over the pool's threads. Each call is one
/// task: callers size tasks so that the indirect call does not matter.
pub(crate) fn for_each_task(tasks: usize, task: &(dyn Fn(usize) + Sync)) {
    use rayon::prelude::*;
    match tasks {
        0 => {}
        1 => task(0),
        _ => (0..tasks).into_par_iter().for_each(task),
    }
}

/// The base of a slice whose disjoint parts several tasks write.
struct Parts<E>(*mut E, usize);

// SAFETY: each task builds a different, non-overlapping part from the pointer (see
// `Parts::part`), and the slice is borrowed mutably for as long as the tasks run, as for
// rayon's `par_chunks_mut`.
unsafe impl<E: Send> Sync for Parts<E> {}

impl<E> Parts<E> {
    /// The `i`th part of `len` elements (the last may be shorter).
    ///
    /// # Safety
    /// `i` is below the number of parts, and each `i` is taken by one task only.
    #[allow(clippy::mut_from_ref)]
    unsafe fn part(&self, i: usize, len: usize) -> &mut [E] {
        let start = i * len;
        let end = (start + len).min(self.1);
        // SAFETY: `start..end` lies in the slice, and no other task has this part.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), end - start) }
    }
}

/// Calls `work(i, part)` on the consecutive `len`-long parts of `dst` (the last may be shorter),
/// in parallel: as `dst.par_chunks_mut(len).enumerate().for_each(..)`.
pub(crate) fn for_each_part<E: Send>(
    dst: &mut [E],
    len: usize,
    work: impl Fn(usize, &mut [E]) + Sync,
) {
    let len = len.max(1);
    let parts = Parts(dst.as_mut_ptr(), dst.len());
    for_each_task(dst.len().div_ceil(len), &|i| {
        // SAFETY: `i` is below the number of parts, and `for_each_task` gives each to one task.
        work(i, unsafe { parts.part(i, len) })
    });
}

/// Calls `work(i, out_part, in_part)` on the `i`th `out_len`-long part of `out` with the `i`th
/// `in_len`-long part of `inp`, for as many parts as both have, in parallel: as
/// `out.par_chunks_mut(out_len).zip(inp.par_chunks(in_len)).enumerate().for_each(..)`.
pub(crate) fn for_each_part_pair<O: Send, I: Sync>(
    out: &mut [O],
    out_len: usize,
    inp: &[I],
    in_len: usize,
    work: impl Fn(usize, &mut [O], &[I]) + Sync,
) {
    let (out_len, in_len) = (out_len.max(1), in_len.max(1));
    let tasks = out.len().div_ceil(out_len).min(inp.len().div_ceil(in_len));
    let parts = Parts(out.as_mut_ptr(), out.len());
    for_each_task(tasks, &|i| {
        let from = i * in_len;
        let inp = &inp[from..(from + in_len).min(inp.len())];
        // SAFETY: `i` is below the number of parts, and `for_each_task` gives each to one task.
        work(i, unsafe { parts.part(i, out_len) }, inp)
    });
}

/// Calls `work(i, part, item)` on the `i`th `len`-long part of `dst` with the `i`th of `items`
/// (a task's scratch), for as many as both have, in parallel: as
/// `dst.par_chunks_mut(len).zip(items.par_iter_mut()).enumerate().for_each(..)`.
pub(crate) fn for_each_part_and_item<E: Send, S: Send>(
    dst: &mut [E],
    len: usize,
    items: &mut [S],
    work: impl Fn(usize, &mut [E], &mut S) + Sync,
) {
    let len = len.max(1);
    let tasks = dst.len().div_ceil(len).min(items.len());
    let (parts, items) = (
        Parts(dst.as_mut_ptr(), dst.len()),
        Parts(items.as_mut_ptr(), tasks),
    );
    for_each_task(tasks, &|i| {
        // SAFETY: `i` is below both counts, and `for_each_task` gives each to one task.
        unsafe { work(i, parts.part(i, len), &mut items.part(i, 1)[0]) }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_the_slice_once_in_order() {
        let mut v = vec![0usize; 1003];
        for_each_part(&mut v, 100, |i, part| {
            for (k, x) in part.iter_mut().enumerate() {
                *x += i * 100 + k + 1;
            }
        });
        assert!(v.iter().enumerate().all(|(k, &x)| x == k + 1));
    }

    #[test]
    fn part_pairs_stop_at_the_shorter() {
        let inp: Vec<u32> = (0..50).collect();
        let mut out = vec![0u32; 40];
        // 10 output parts of 4, 5 input parts of 10: five pairs.
        for_each_part_pair(&mut out, 4, &inp, 10, |i, o, x| {
            assert_eq!(x[0], i as u32 * 10);
            o.fill(x.iter().sum());
        });
        assert_eq!(&out[..4], &[45; 4]);
        assert_eq!(&out[16..20], &[445; 4]);
        assert!(out[20..].iter().all(|&x| x == 0));
    }

    #[test]
    fn parts_and_items_pair_up_to_the_shorter() {
        let mut out = vec![0u32; 10];
        // 4 parts of 3 (the last of 1), 3 items: three pairs.
        let mut items = vec![0u32; 3];
        for_each_part_and_item(&mut out, 3, &mut items, |i, part, item| {
            part.fill(i as u32 + 1);
            *item = part.len() as u32 * 10;
        });
        assert_eq!(out, [1, 1, 1, 2, 2, 2, 3, 3, 3, 0]);
        assert_eq!(items, [30, 30, 30]);
    }

    #[test]
    fn empty_inputs_run_nothing() {
        let mut v: Vec<u8> = Vec::new();
        for_each_part(&mut v, 8, |_, _| panic!("no parts"));
        for_each_part_pair(&mut v, 8, &[1u8, 2], 1, |_, _, _| panic!("no parts"));
    }
}
