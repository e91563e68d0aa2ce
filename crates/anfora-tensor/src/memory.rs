//! The process's memory budget, for values that grow in many small steps.
//!
//! A single large request is refused where it is made ([`crate::alloc`]: a size check, then
//! `try_reserve`). A program can also exhaust memory with millions of small values (`t = (t, t)`
//! in a loop, a recursion whose arguments grow); those allocations are not fallible one by one,
//! and the one that fails could be anywhere, aborting the process. So the interpreters tick a
//! [`Poll`] at their safe points (calls and loop iterations), and raise `MemoryError` while there
//! is still room to unwind.
//!
//! Two limits, either of which ends the program:
//! - the address-space limit (`ulimit -v`, `RLIMIT_AS`) less an eighth (at least 64 MiB) of
//!   headroom, against the process's virtual size;
//! - resident memory against `ANFORA_MAX_MEMORY_BYTES`, or seven eighths of the machine's
//!   memory (where the kernel's out-of-memory killer would end the process without a word).
//!
//! The sizes come from `/proc/self/statm`; a read takes a few microseconds, so a [`Poll`] reads it
//! once every [`POLL_PERIOD`] ticks.

use std::cell::Cell;
use std::sync::OnceLock;

use crate::alloc::{format_bytes, mem_total};
use crate::{ErrorKind, Result, TensorError};

/// The environment variable that sets the resident-memory limit (a number of bytes).
pub const ENV_VAR: &str = "ANFORA_MAX_MEMORY_BYTES";

/// How many polls pass between two reads of the process's size: small values created between
/// two reads take far less than the headroom.
pub const POLL_PERIOD: u32 = 1 << 14;

/// What the process holds, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    pub virtual_bytes: usize,
    pub resident_bytes: usize,
}

/// Where the resident limit comes from (for the message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Env,
    MemTotal,
}

/// The limits a [`Usage`] is judged against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    virtual_bytes: Option<usize>,
    resident_bytes: Option<(usize, Source)>,
}

impl Limits {
    /// The limits given `ANFORA_MAX_MEMORY_BYTES`, the address-space limit and `/proc/meminfo`.
    fn from_sources(
        env: Option<&str>,
        address_space: Option<u64>,
        meminfo: Option<&str>,
    ) -> Limits {
        let virtual_bytes = address_space.map(|limit| {
            let limit = usize::try_from(limit).unwrap_or(usize::MAX);
            limit.saturating_sub((limit / 8).max(64 << 20))
        });
        let env = env.and_then(|v| v.trim().parse::<u64>().ok());
        let resident_bytes = match env {
            Some(b) => Some((usize::try_from(b).unwrap_or(usize::MAX), Source::Env)),
            None => meminfo
                .and_then(mem_total)
                .map(|b| (b / 8 * 7, Source::MemTotal)),
        };
        Limits {
            virtual_bytes,
            resident_bytes,
        }
    }

    /// A `MemoryError` when `usage` is over a limit.
    pub fn judge(&self, usage: Usage) -> Result<()> {
        if let Some(limit) = self.virtual_bytes
            && usage.virtual_bytes > limit
        {
            return Err(out_of_memory(format!(
                "the process's address space grew past {}, the most it may use under its \
                 address-space limit (ulimit -v) while keeping room to unwind",
                format_bytes(limit)
            )));
        }
        if let Some((limit, source)) = self.resident_bytes
            && usage.resident_bytes > limit
        {
            let why = match source {
                Source::Env => format!("the limit set by {ENV_VAR}"),
                Source::MemTotal => "seven eighths of this machine's memory".to_string(),
            };
            return Err(out_of_memory(format!(
                "the process holds {} of memory, more than {} ({why})",
                format_bytes(usage.resident_bytes),
                format_bytes(limit)
            )));
        }
        Ok(())
    }
}

fn out_of_memory(why: String) -> TensorError {
    TensorError::new(ErrorKind::Memory, format!("out of memory: {why}"))
}

/// The process's limits, read once.
pub fn limits() -> Limits {
    static LIMITS: OnceLock<Limits> = OnceLock::new();
    *LIMITS.get_or_init(|| {
        let env = std::env::var(ENV_VAR).ok();
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
        Limits::from_sources(env.as_deref(), address_space_limit(), meminfo.as_deref())
    })
}

fn address_space_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given and nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// The sizes in `/proc/self/statm` (in pages: total, resident, ...).
fn parse_statm(text: &str, page: usize) -> Option<Usage> {
    let mut fields = text.split_whitespace().map(|f| f.parse::<usize>().ok());
    let virtual_pages = fields.next()??;
    let resident_pages = fields.next()??;
    Some(Usage {
        virtual_bytes: virtual_pages.saturating_mul(page),
        resident_bytes: resident_pages.saturating_mul(page),
    })
}

/// What the process holds now, where the system says (Linux).
pub fn usage() -> Option<Usage> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    parse_statm(&text, usize::try_from(page).ok().filter(|&p| p > 0)?)
}

/// [`Limits::judge`] of the process's usage now (nothing to judge where it cannot be read),
/// and the thread's deadline ([`with_deadline`]).
#[cold]
pub fn check() -> Result<()> {
    if DEADLINE
        .with(Cell::get)
        .is_some_and(|d| std::time::Instant::now() >= d)
    {
        return Err(TensorError::new(
            ErrorKind::Timeout,
            "the run went past its time limit",
        ));
    }
    match usage() {
        Some(u) => limits().judge(u),
        None => Ok(()),
    }
}

/// A countdown an interpreter keeps (in its own state, to stay off thread-local storage in its
/// hottest path) and ticks at each safe point: every [`POLL_PERIOD`]-th tick checks the
/// process's memory ([`check`]).
#[derive(Debug)]
pub struct Poll(u32);

impl Default for Poll {
    fn default() -> Poll {
        Poll(POLL_PERIOD)
    }
}

impl Poll {
    #[inline(always)]
    pub fn tick(&mut self) -> Result<()> {
        self.0 -= 1;
        if self.0 == 0 {
            self.0 = POLL_PERIOD;
            return check();
        }
        Ok(())
    }
}

thread_local! {
    /// When the run on this thread must stop ([`with_deadline`]).
    static DEADLINE: Cell<Option<std::time::Instant>> = const { Cell::new(None) };
    /// How many [`fallibly`] calls the thread is inside.
    static FALLIBLE: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f` on this thread with a deadline: the interpreters' polls (calls, tail calls and
/// loop jumps, each 16,384th) raise `TimeoutError` once it has passed. A runtime's bound on
/// a model that may not terminate (a loop whose condition never turns false).
pub fn with_deadline<R>(deadline: Option<std::time::Instant>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<std::time::Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(DEADLINE.with(|d| d.replace(deadline)));
    f()
}

/// Runs `f`, in which an allocation the system refuses returns to its caller (a `try_reserve`
/// that fails: a `MemoryError` with its location) instead of ending the process under
/// [`GuardedAlloc`]. Every fallible allocation of anfora runs in one.
pub fn fallibly<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            FALLIBLE.with(|c| c.set(c.get() - 1));
        }
    }
    FALLIBLE.with(|c| c.set(c.get() + 1));
    let _leave = Leave;
    f()
}

/// The system allocator, except that an allocation it refuses outside [`fallibly`] (one of the
/// compiler's tables, an IR arena, the text of a huge value: places that cannot unwind) ends
/// the process with a `MemoryError` line on stderr and exit status 1, rather than Rust's abort.
/// The `anfora` command installs it as its global allocator.
pub struct GuardedAlloc;

// SAFETY: every call is forwarded to `System` with the same arguments; only a null result is
// looked at.
unsafe impl std::alloc::GlobalAlloc for GuardedAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let p = unsafe { std::alloc::System.alloc(layout) };
        if p.is_null() {
            refused(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { std::alloc::System.alloc_zeroed(layout) };
        if p.is_null() {
            refused(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        // SAFETY: as `alloc`.
        let p = unsafe { std::alloc::System.realloc(ptr, layout, size) };
        if p.is_null() {
            refused(size);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: as `alloc`.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

/// A refused allocation of `size` bytes: back to the caller inside [`fallibly`], else the end
/// of the process. Allocates nothing.
#[cold]
fn refused(size: usize) {
    // During a thread's teardown its locals may be gone: then it is not inside `fallibly`.
    if FALLIBLE.try_with(|c| c.get() > 0).unwrap_or(false) {
        return;
    }
    let mut line = [0u8; 160];
    let n = refusal_line(size, &mut line);
    // SAFETY: writes `n` initialized bytes to standard error, then ends the process without
    // running anything else (no unwinding, no destructors, no allocation).
    unsafe {
        libc::write(2, line.as_ptr().cast(), n);
        libc::_exit(1);
    }
}

/// The message of [`refused`] in `out`, without allocating; its length.
fn refusal_line(size: usize, out: &mut [u8; 160]) -> usize {
    const HEAD: &[u8] = b"\nMemoryError: out of memory: an allocation of ";
    const TAIL: &[u8] = b" bytes failed where anfora cannot recover\n";
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    let mut v = size;
    loop {
        k -= 1;
        digits[k] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut n = 0;
    for part in [HEAD, &digits[k..], TAIL] {
        out[n..n + part.len()].copy_from_slice(part);
        n += part.len();
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO: &str = "MemTotal:       8388608 kB\nMemFree:  1 kB\n";
    const GIB: usize = 1 << 30;

    fn usage(virtual_gib: f64, resident_gib: f64) -> Usage {
        Usage {
            virtual_bytes: (virtual_gib * GIB as f64) as usize,
            resident_bytes: (resident_gib * GIB as f64) as usize,
        }
    }

    #[test]
    fn the_address_space_limit_keeps_an_eighth_of_headroom() {
        let l = Limits::from_sources(None, Some(2 * GIB as u64), Some(MEMINFO));
        assert!(l.judge(usage(1.7, 1.0)).is_ok());
        let e = l.judge(usage(1.9, 1.0)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Memory);
        assert_eq!(
            e.message,
            "out of memory: the process's address space grew past 1.8 GiB, the most it may use \
             under its address-space limit (ulimit -v) while keeping room to unwind"
        );
        // Small limits keep 64 MiB.
        let l = Limits::from_sources(None, Some(256 << 20), None);
        assert_eq!(l.virtual_bytes, Some(192 << 20));
    }

    #[test]
    fn resident_memory_is_judged_against_the_variable_or_the_machine() {
        let machine = Limits::from_sources(None, None, Some(MEMINFO));
        assert!(machine.judge(usage(100.0, 6.9)).is_ok());
        assert_eq!(
            machine.judge(usage(100.0, 7.5)).unwrap_err().message,
            "out of memory: the process holds 7.5 GiB of memory, more than 7.0 GiB (seven \
             eighths of this machine's memory)"
        );
        let env = Limits::from_sources(Some(" 1048576 "), None, Some(MEMINFO));
        assert_eq!(
            env.judge(usage(1.0, 0.5)).unwrap_err().message,
            "out of memory: the process holds 512.0 MiB of memory, more than 1.0 MiB (the \
             limit set by ANFORA_MAX_MEMORY_BYTES)"
        );
        // Nothing known, nothing refused.
        let none = Limits::from_sources(Some("lots"), None, Some("garbage"));
        assert!(none.judge(usage(1e6, 1e6)).is_ok());
    }

    #[test]
    fn statm_is_read_in_pages() {
        assert_eq!(
            parse_statm("300 200 10 1 0 50 0\n", 4096),
            Some(Usage {
                virtual_bytes: 300 * 4096,
                resident_bytes: 200 * 4096
            })
        );
        assert_eq!(parse_statm("", 4096), None);
        assert_eq!(parse_statm("12 x", 4096), None);
        let now = super::usage().expect("Linux has /proc/self/statm");
        assert!(now.resident_bytes > 0 && now.virtual_bytes >= now.resident_bytes);
    }

    #[test]
    fn a_refused_allocation_is_one_line_made_without_allocating() {
        let mut out = [0u8; 160];
        let n = refusal_line(123_456_789, &mut out);
        assert_eq!(
            std::str::from_utf8(&out[..n]).unwrap(),
            "\nMemoryError: out of memory: an allocation of 123456789 bytes failed where anfora \
             cannot recover\n"
        );
        let n = refusal_line(usize::MAX, &mut out);
        assert!(
            std::str::from_utf8(&out[..n])
                .unwrap()
                .contains(" 18446744073709551615 bytes")
        );
        // Nesting counts.
        fallibly(|| fallibly(|| FALLIBLE.with(|c| assert_eq!(c.get(), 2))));
        FALLIBLE.with(|c| assert_eq!(c.get(), 0));
    }

    #[test]
    fn polling_reads_the_sizes_once_per_period() {
        // Under this test's limits nothing is refused; the countdown wraps around.
        let mut p = Poll::default();
        for _ in 0..2 * POLL_PERIOD + 1 {
            p.tick().unwrap();
        }
        assert_eq!(p.0, POLL_PERIOD - 1);
    }
}
