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

use anfora_ops::collective::{Communicator, OwnedBuf, ReduceBuf, Reduction, set_group};
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
    /// The all-reduces started and not finished yet, by ticket.
    in_flight: Mutex<Vec<InFlight>>,
    next_ticket: std::sync::atomic::AtomicU64,
}

/// An all-reduce MPI is running: its request and the buffers it reads and writes (their
/// heap memory stays put while the vectors move).
struct InFlight {
    ticket: u64,
    request: ffi::MPI_Request,
    done: bool,
    /// Only held: MPI reads it until the operation completes.
    _send: OwnedBuf,
    recv: OwnedBuf,
    began: Instant,
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
        in_flight: Mutex::new(Vec::new()),
        next_ticket: std::sync::atomic::AtomicU64::new(0),
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
        if let Err(e) = self.poll(what, &mut request, Instant::now()) {
            std::mem::forget(send);
            std::mem::forget(recv);
            return Err(e);
        }
        Ok(recv)
    }

    /// Polls `request` until it completes or the timeout since `began` passes (the group is
    /// then broken). The caller keeps the operation's buffers alive, or leaks them on an error.
    fn poll(
        &self,
        what: &str,
        request: &mut ffi::MPI_Request,
        began: Instant,
    ) -> Result<(), String> {
        let mut polls = 0u64;
        loop {
            let mut done = 0;
            // SAFETY: `request` came from a started operation whose buffers are alive.
            unsafe { ffi::MPI_Test(request, &mut done, ffi::RSMPI_STATUS_IGNORE) };
            if done != 0 {
                return Ok(());
            }
            if began.elapsed() > self.timeout {
                self.broken.store(true, Ordering::SeqCst);
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

/// A buffer's memory, element count and MPI datatype.
fn raw(buf: &mut OwnedBuf) -> (*mut std::ffi::c_void, usize, ffi::MPI_Datatype) {
    // SAFETY: the predefined datatypes are constants of an initialized MPI.
    unsafe {
        match buf {
            OwnedBuf::F32(v) => (v.as_mut_ptr().cast(), v.len(), ffi::RSMPI_FLOAT),
            OwnedBuf::F64(v) => (v.as_mut_ptr().cast(), v.len(), ffi::RSMPI_DOUBLE),
            OwnedBuf::I32(v) => (v.as_mut_ptr().cast(), v.len(), ffi::RSMPI_INT32_T),
            OwnedBuf::I64(v) => (v.as_mut_ptr().cast(), v.len(), ffi::RSMPI_INT64_T),
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

    fn start(&self, buf: OwnedBuf, op: Reduction) -> Result<u64, String> {
        let _serial = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        if self.broken.load(Ordering::SeqCst) {
            return Err("an earlier collective timed out: the process group is broken".into());
        }
        let (mut send, mut recv) = match buf {
            OwnedBuf::F32(v) => (OwnedBuf::F32(v.clone()), OwnedBuf::F32(v)),
            OwnedBuf::F64(v) => (OwnedBuf::F64(v.clone()), OwnedBuf::F64(v)),
            OwnedBuf::I32(v) => (OwnedBuf::I32(v.clone()), OwnedBuf::I32(v)),
            OwnedBuf::I64(v) => (OwnedBuf::I64(v.clone()), OwnedBuf::I64(v)),
        };
        // The buffers live in `in_flight` until the operation is finished.
        let (sp, n, datatype) = raw(&mut send);
        let (rp, _, _) = raw(&mut recv);
        let n = count(n)?;
        // SAFETY: as above.
        let op = unsafe {
            match op {
                Reduction::Sum => ffi::RSMPI_SUM,
                Reduction::Max => ffi::RSMPI_MAX,
            }
        };
        // SAFETY: a request is plain data that MPI fills in.
        let mut request: ffi::MPI_Request = unsafe { std::mem::zeroed() };
        // SAFETY: the buffers hold `n` elements of `datatype` and outlive the operation.
        let code = unsafe { ffi::MPI_Iallreduce(sp, rp, n, datatype, op, self.comm, &mut request) };
        if code != 0 {
            return Err(format!("all_reduce failed to start (MPI error {code})"));
        }
        let ticket = self.next_ticket.fetch_add(1, Ordering::Relaxed);
        let began = Instant::now();
        let flight = InFlight {
            ticket,
            request,
            done: false,
            _send: send,
            recv,
            began,
        };
        self.in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(flight);
        Ok(ticket)
    }

    fn progress(&self) {
        let _serial = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        for f in self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter_mut()
        {
            if !f.done {
                let mut done = 0;
                // SAFETY: the request of an operation whose buffers are alive in `f`.
                unsafe { ffi::MPI_Test(&mut f.request, &mut done, ffi::RSMPI_STATUS_IGNORE) };
                f.done = done != 0;
            }
        }
    }

    fn finish(&self, ticket: u64) -> Result<OwnedBuf, String> {
        let _serial = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let mut flight = {
            let mut list = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            let at = list
                .iter()
                .position(|f| f.ticket == ticket)
                .ok_or_else(|| format!("no all_reduce in flight has ticket {ticket}"))?;
            list.remove(at)
        };
        if !flight.done
            && let Err(e) = self.poll("all_reduce", &mut flight.request, flight.began)
        {
            std::mem::forget(flight);
            return Err(e);
        }
        Ok(flight.recv)
    }

    fn barrier(&self) -> Result<(), String> {
        self.run::<u8>("barrier", (Vec::new(), Vec::new()), |_, _, req| unsafe {
            ffi::MPI_Ibarrier(self.comm, req)
        })
        .map(drop)
    }
}
