//! Keeping freed memory for the next call, in a process that loads models through the C API.
//!
//! Each call of a model allocates the same buffers and frees them at its end. With glibc's
//! defaults, a buffer of 128 KiB or more is mapped anew every time, or the heap's top is given
//! back when the call frees it, so every call faults its pages in again: measured on the digits
//! MLP at batch 360, one call in two or so took 115 µs instead of 62 on a busy host. The first
//! model the C API loads therefore asks glibc to serve blocks up to 32 MiB from the heap and to
//! keep up to 256 MiB of freed memory there (onnxruntime's arena keeps its memory likewise).
//! The setting is the process's, so a host that wants glibc's defaults sets
//! `ANFORA_KEEP_FREED_MEMORY=0` before loading.

/// Applies the setting once per process (glibc on Linux; elsewhere nothing).
pub(crate) fn keep_freed_memory() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("ANFORA_KEEP_FREED_MEMORY").is_some_and(|v| v == "0") {
            return;
        }
        tune();
    });
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune() {
    use std::ffi::c_int;
    unsafe extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }
    // glibc's `malloc.h`.
    const M_TRIM_THRESHOLD: c_int = -1;
    const M_MMAP_THRESHOLD: c_int = -3;
    // SAFETY: `mallopt` takes any values (it refuses bad ones by returning 0); these are
    // within glibc's bounds (32 MiB is the largest mmap threshold of a 64-bit build).
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 256 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune() {}
