//! The kernel threads: running kernels on the calling thread, and keeping the pool awake
//! between the kernels of one program.

/// Makes the calling thread one of the kernel threads: builds rayon's global pool with one
/// thread per core, the caller included. Parallel kernels called from this thread then run
/// on it and wake one helper, instead of handing the work to other threads and sleeping
/// (which, with as many helpers as cores, also leaves them spinning against the caller's own
/// serial work). Call it first thing, from the thread that will run programs; returns `false`
/// when the pool already exists (then nothing changes).
pub fn run_kernels_on_this_thread() -> bool {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .use_current_thread()
        .build_global()
        .is_ok()
}

/// While alive, keeps the pool's other threads polling for work instead of going to sleep
/// between the parallel kernels of one program. A training step alternates parallel products
/// with short serial ops, long enough for rayon's idle threads to fall asleep: each of the
/// dozen or so parallel kernels of a W1 step then paid a futex wake-up (under a hypervisor an
/// interprocessor interrupt too), 11 % of the step's samples in a profile. With this guard the
/// helpers wake once per program. For programs that take a while (the executor starts it
/// after a run of at least [`KeepThreadsAwake::WORTH`]): a microsecond-scale call would pay
/// more for the one wake-up than it saves.
pub struct KeepThreadsAwake {
    pub(crate) stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl KeepThreadsAwake {
    /// The shortest previous run worth keeping the threads awake for.
    pub const WORTH: std::time::Duration = std::time::Duration::from_micros(200);

    /// A helper polls at most this long: the bound on the CPU time one guard can waste.
    const MAX_POLL: std::time::Duration = std::time::Duration::from_millis(100);

    /// Starts polling on every other thread of the pool; `None` (nothing to do) when this
    /// thread is not one of the pool's or the pool has one thread.
    pub fn start() -> Option<KeepThreadsAwake> {
        use std::sync::atomic::{AtomicBool, Ordering};
        let me = rayon::current_thread_index()?;
        let others = rayon::current_num_threads()
            .checked_sub(1)
            .filter(|&n| n > 0)?;
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        for _ in 0..others {
            let stop = stop.clone();
            rayon::spawn(move || {
                // This thread may pick its own helper job up while it waits inside a kernel:
                // polling there would stall the program.
                if rayon::current_thread_index() == Some(me) {
                    return;
                }
                let until = std::time::Instant::now() + Self::MAX_POLL;
                // The clock is read every 64 rounds (it was 2.6 % of a W1 profile read every
                // round), and an idle round pauses a little, leaving the core's resources to
                // the other thread should the two share one.
                let mut round = 0u32;
                while !stop.load(Ordering::Relaxed)
                    && (!round.is_multiple_of(64) || std::time::Instant::now() < until)
                {
                    round = round.wrapping_add(1);
                    if rayon::yield_now() != Some(rayon::Yield::Executed) {
                        for _ in 0..4 {
                            std::hint::spin_loop();
                        }
                    }
                }
            });
        }
        Some(KeepThreadsAwake { stop })
    }
}

impl Drop for KeepThreadsAwake {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}
