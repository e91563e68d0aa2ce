//! anfora's process group on MPI (issue 30): the engine under `ops.all_reduce` and the other
//! collectives, registered with `anfora_ops::collective` by [`init`].
//!
//! Every operation is MPI's non-blocking form (`MPI_Iallreduce`, `MPI_Iallgather`,
//! `MPI_Ibcast`, `MPI_Ibarrier`) completed by polling with a deadline, so a process whose
//! peers stopped, hang or issued a different collective gets an error after the timeout
//! instead of waiting forever. After a timeout the group is broken: MPI cannot cancel a
//! collective, so [`finalize`] then aborts the job instead of waiting for the others.
//! Calls are serialized by a lock (MPI is initialized with `MPI_THREAD_SERIALIZED`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anfora_ops::collective::{Communicator, ReduceBuf, Reduction, set_group};
use mpi::environment::Universe;
use mpi::ffi;
use mpi::traits::AsRaw;

/// The MPI process group.
pub struct Mpi {
    comm: ffi::MPI_Comm,
    rank: usize,
    size: usize,
    timeout: Duration,
    /// MPI calls are serialized (`MPI_THREAD_SERIALIZED`).
    lock: Mutex<()>,
    /// A collective timed out: MPI can no longer be finalized cleanly.
    broken: AtomicBool,
}

// SAFETY: the communicator handle is only used under `lock`, as MPI_THREAD_SERIALIZED allows.
unsafe impl Send for Mpi {}
unsafe impl Sync for Mpi {}

static UNIVERSE: Mutex<Option<Universe>> = Mutex::new(None);
static GROUP: Mutex<Option<Arc<Mpi>>> = Mutex::new(None);

/// Starts MPI (once per process) and registers its world as the group of every collective.
/// `timeout` bounds how long one collective may wait for the other processes.
pub fn init(timeout: Duration) -> Result<Arc<Mpi>, String> {
    let mut group = GROUP.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(g) = &*group {
        return Ok(g.clone());
    }
    let (universe, level) = mpi::initialize_with_threading(mpi::Threading::Serialized)
        .ok_or("MPI was already initialized, or finalized, in this process")?;
    if level < mpi::Threading::Serialized {
        return Err(format!("this MPI library offers only {level:?} threading"));
    }
    let comm = universe.world().as_raw();
    let (mut rank, mut size) = (0, 0);
    // SAFETY: `comm` is MPI_COMM_WORLD of an initialized MPI.
    unsafe {
        ffi::MPI_Comm_rank(comm, &mut rank);
        ffi::MPI_Comm_size(comm, &mut size);
    }
    let g = Arc::new(Mpi {
        comm,
        rank: rank as usize,
        size: size as usize,
        timeout,
        lock: Mutex::new(()),
        broken: AtomicBool::new(false),
    });
    *UNIVERSE.lock().unwrap_or_else(|e| e.into_inner()) = Some(universe);
    *group = Some(g.clone());
    set_group(Some(g.clone()));
    Ok(g)
}

/// The group [`init`] started, if any.
pub fn current() -> Option<Arc<Mpi>> {
    GROUP.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Ends MPI: `MPI_Finalize`, or, when a collective timed out (the others may never arrive),
/// `MPI_Abort`. Nothing happens when MPI was not started.
pub fn finalize() {
    if let Some(g) = current()
        && g.broken.load(Ordering::SeqCst)
    {
        abort(1);
    }
    set_group(None);
    GROUP.lock().unwrap_or_else(|e| e.into_inner()).take();
    // Dropping the universe calls MPI_Finalize.
    UNIVERSE.lock().unwrap_or_else(|e| e.into_inner()).take();
}

/// Stops every process of the job with exit status `code` (`MPI_Abort`); without MPI, this
/// process alone.
pub fn abort(code: i32) -> ! {
    if let Some(g) = current() {
        // SAFETY: MPI is initialized; MPI_Abort does not return.
        unsafe {
            ffi::MPI_Abort(g.comm, code);
        }
    }
    std::process::exit(code)
}

impl Mpi {
    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Starts an operation with `start` (which fills in its request) and polls it until it
    /// completes or the timeout passes. On a timeout the buffers the operation still uses are
    /// leaked, not freed under it.
    fn run<B>(
        &self,
        what: &str,
        buffers: (Vec<B>, Vec<B>),
        start: impl FnOnce(&[B], &mut [B], &mut ffi::MPI_Request) -> i32,
    ) -> Result<Vec<B>, String> {
        let _serial = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        if self.broken.load(Ordering::SeqCst) {
            return Err("an earlier collective timed out: the process group is broken".into());
        }
        let (send, mut recv) = buffers;
        // SAFETY: a request is plain data that MPI fills in.
        let mut request: ffi::MPI_Request = unsafe { std::mem::zeroed() };
        let code = start(&send, &mut recv, &mut request);
        if code != 0 {
            return Err(format!("{what} failed to start (MPI error {code})"));
        }
        let began = Instant::now();
        let mut polls = 0u64;
        loop {
            let mut done = 0;
            // SAFETY: `request` came from a started operation whose buffers are alive.
            unsafe { ffi::MPI_Test(&mut request, &mut done, ffi::RSMPI_STATUS_IGNORE) };
            if done != 0 {
                return Ok(recv);
            }
            if began.elapsed() > self.timeout {
                self.broken.store(true, Ordering::SeqCst);
                std::mem::forget(send);
                std::mem::forget(recv);
                return Err(format!(
                    "{what} did not complete within {:.0} s on rank {} of {}: another process \
                     stopped, hangs, or issued a different collective",
                    self.timeout.as_secs_f64(),
                    self.rank,
                    self.size
                ));
            }
            // Spin briefly (the others are usually about to arrive), then let other processes
            // sharing this core run.
            polls += 1;
            if polls > 2000 {
                std::thread::sleep(Duration::from_micros(20));
            } else if polls > 200 {
                std::thread::yield_now();
            }
        }
    }
}

fn count(n: usize) -> Result<i32, String> {
    i32::try_from(n).map_err(|_| format!("{n} elements are more than MPI can send at once"))
}

/// The numbers MPI reduces.
trait Plain: Copy {}
impl Plain for f32 {}
impl Plain for f64 {}
impl Plain for i32 {}
impl Plain for i64 {}

impl Mpi {
    fn reduce<T: Plain>(
        &self,
        xs: &mut [T],
        datatype: ffi::MPI_Datatype,
        op: Reduction,
    ) -> Result<(), String> {
        let n = count(xs.len())?;
        let send = xs.to_vec();
        let recv = send.clone();
        // SAFETY: the predefined operations are constants of an initialized MPI.
        let op = unsafe {
            match op {
                Reduction::Sum => ffi::RSMPI_SUM,
                Reduction::Max => ffi::RSMPI_MAX,
            }
        };
        let out = self.run("all_reduce", (send, recv), |s, r, req| unsafe {
            ffi::MPI_Iallreduce(
                s.as_ptr().cast(),
                r.as_mut_ptr().cast(),
                n,
                datatype,
                op,
                self.comm,
                req,
            )
        })?;
        xs.copy_from_slice(&out);
        Ok(())
    }
}

impl Communicator for Mpi {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn all_reduce(&self, buf: ReduceBuf<'_>, op: Reduction) -> Result<(), String> {
        // SAFETY: the predefined datatypes are constants of an initialized MPI.
        unsafe {
            match buf {
                ReduceBuf::F32(x) => self.reduce(x, ffi::RSMPI_FLOAT, op),
                ReduceBuf::F64(x) => self.reduce(x, ffi::RSMPI_DOUBLE, op),
                ReduceBuf::I32(x) => self.reduce(x, ffi::RSMPI_INT32_T, op),
                ReduceBuf::I64(x) => self.reduce(x, ffi::RSMPI_INT64_T, op),
            }
        }
    }

    fn all_gather(&self, send: &[u8], recv: &mut [u8]) -> Result<(), String> {
        if recv.len() != send.len() * self.size {
            return Err("all_gather: the receive buffer is not one send buffer per process".into());
        }
        let n = count(send.len())?;
        let out = self.run(
            "all_gather",
            (send.to_vec(), vec![0u8; recv.len()]),
            |s, r, req| unsafe {
                ffi::MPI_Iallgather(
                    s.as_ptr().cast(),
                    n,
                    ffi::RSMPI_UINT8_T,
                    r.as_mut_ptr().cast(),
                    n,
                    ffi::RSMPI_UINT8_T,
                    self.comm,
                    req,
                )
            },
        )?;
        recv.copy_from_slice(&out);
        Ok(())
    }

    fn broadcast(&self, buf: &mut [u8], root: usize) -> Result<(), String> {
        let n = count(buf.len())?;
        let root = root as i32;
        // Ibcast reads and writes one buffer: it travels as the receive buffer.
        let out = self.run(
            "broadcast",
            (Vec::new(), buf.to_vec()),
            |_, r, req| unsafe {
                ffi::MPI_Ibcast(
                    r.as_mut_ptr().cast(),
                    n,
                    ffi::RSMPI_UINT8_T,
                    root,
                    self.comm,
                    req,
                )
            },
        )?;
        buf.copy_from_slice(&out);
        Ok(())
    }

    fn barrier(&self) -> Result<(), String> {
        self.run::<u8>("barrier", (Vec::new(), Vec::new()), |_, _, req| unsafe {
            ffi::MPI_Ibarrier(self.comm, req)
        })
        .map(drop)
    }
}
