//! `repr` of floats and strings against CPython itself: 100,000 floats (random bit patterns,
//! and numbers with short binary fractions at 15–17 digits, where two shortest strings are
//! often at the same distance) and every Unicode code point but the surrogates.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anfora_ops::pynum::{UNICODE_VERSION, float_repr, str_repr};

/// `$ANFORA_PYTHON`, the repository's `.venv`, or `python3`.
fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("ANFORA_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    if venv.exists() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

/// Runs `script` in CPython with `input` on stdin; its stdout, line by line.
fn cpython(script: &str, input: &str) -> Vec<String> {
    let mut child = Command::new(python())
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("CPython runs");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "CPython failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// splitmix64: a fixed sequence, so a failure reproduces.
fn numbers(mut state: u64, n: usize) -> Vec<u64> {
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

fn floats() -> Vec<f64> {
    let random = numbers(1, 50_000).into_iter().map(f64::from_bits);
    // m / 2^k with m of 50 to 53 bits: 15 to 17 digits before the point and an exact binary
    // fraction after it, so the digit after the shortest ones is often exactly 5.
    let halfway = numbers(2, 50_000).into_iter().map(|r| {
        let m = (r >> 11) >> (r % 4);
        let k = 1 + (r >> 8) % 4;
        let sign = if r & 1 == 0 { 1.0 } else { -1.0 };
        sign * m as f64 / (1u64 << k) as f64
    });
    random.chain(halfway).filter(|x| !x.is_nan()).collect()
}

#[test]
fn float_repr_is_cpythons_for_100000_floats() {
    let xs = floats();
    assert!(xs.len() > 99_000);
    let input: String = xs.iter().map(|x| format!("{:x}\n", x.to_bits())).collect();
    let script = "import struct, sys\n\
                  for l in sys.stdin:\n    \
                  print(repr(struct.unpack('<d', int(l, 16).to_bytes(8, 'little'))[0]))";
    let want = cpython(script, &input);
    assert_eq!(want.len(), xs.len());
    let wrong: Vec<_> = xs
        .iter()
        .zip(&want)
        .filter(|(x, w)| float_repr(**x) != **w)
        .map(|(x, w)| format!("{:x}: anfora {} CPython {w}", x.to_bits(), float_repr(*x)))
        .collect();
    assert_none_differ(&wrong);
}

#[test]
fn str_repr_is_cpythons_for_every_code_point() {
    let script = "import sys, unicodedata\n\
                  print(unicodedata.unidata_version)\n\
                  for c in range(0x110000):\n    \
                  if not 0xd800 <= c < 0xe000: print(repr(chr(c)).encode().hex())";
    let want = cpython(script, "");
    assert_eq!(
        want[0], UNICODE_VERSION,
        "unicode_printable.rs follows CPython 3.11's Unicode; regenerate it with \
         scripts/gen_unicode_printable.py for another version"
    );
    assert_eq!(want.len() - 1, 0x110000 - 0x800);
    let chars = (0..0x110000u32).filter_map(char::from_u32);
    let wrong: Vec<_> = chars
        .zip(&want[1..])
        .map(|(c, w)| (c, hex(&str_repr(&c.to_string())), w))
        .filter(|(_, ours, w)| ours != *w)
        .map(|(c, ours, w)| format!("U+{:04X}: anfora {ours} CPython {w}", c as u32))
        .collect();
    assert_none_differ(&wrong);
}

/// The UTF-8 bytes of `s` in hex, as CPython's `s.encode().hex()` (the repr lines are compared
/// in this form, free of the terminal's encoding).
fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Fails with the number of differences and the first five.
fn assert_none_differ(wrong: &[String]) {
    assert!(
        wrong.is_empty(),
        "{} differ, e.g. {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(5)]
    );
}
