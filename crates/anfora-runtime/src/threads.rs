//! How many threads a call's kernels use.
//!
//! Each thread that calls into the runtime becomes the first thread of its own kernel pool
//! of [`num_threads`] threads when it first runs a model (rayon's `use_current_thread`): the
//! caller computes, and with one thread it computes alone, inline, with no other thread
//! created and nothing spinning. The count a thread gets is the one set when it first runs;
//! a thread that already belongs to a pool (the Python package's or the `anfora` command's
//! main thread) keeps its pool.

use std::cell::OnceCell;
use std::sync::atomic::{AtomicUsize, Ordering};

static THREADS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static POOL: OnceCell<Option<rayon::ThreadPool>> = const { OnceCell::new() };
}

/// Sets the number of threads of the kernel pools made from now on (0: one per core).
pub fn set_num_threads(n: usize) {
    THREADS.store(n, Ordering::Relaxed);
}

/// The number of threads a thread's kernel pool gets when it first runs a model.
pub fn num_threads() -> usize {
    match THREADS.load(Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Runs `f` on this thread, which belongs to a kernel pool by then.
pub(crate) fn on_kernel_threads<R>(f: impl FnOnce() -> R) -> R {
    if rayon::current_thread_index().is_none() {
        POOL.with(|p| {
            p.get_or_init(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(num_threads())
                    .use_current_thread()
                    .build()
                    .ok()
            });
        });
    }
    f()
}
