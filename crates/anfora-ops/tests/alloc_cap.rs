//! `ANFORA_MAX_TENSOR_BYTES` bounds the strings, tuples and lists a program builds as it bounds
//! tensors: past it, concatenation and repetition are a MemoryError naming the size, never an
//! abort. The cap is read once, at the first allocation, so this test runs in its own process
//! without the test harness (`harness = false` in Cargo.toml) and sets the variable first.

use anfora_ops::Prim;
use anfora_ops::python::binary;
use anfora_ops::value::Value;

const CAP: usize = 1 << 20;

fn limit(what: &str) -> (&'static str, String) {
    let why = "more than the 1.0 MiB limit set by ANFORA_MAX_TENSOR_BYTES";
    ("MemoryError", format!("cannot allocate {what} ({why})"))
}

fn main() {
    // SAFETY: no other thread exists yet (this binary has no test harness), so nothing reads
    // the environment concurrently.
    unsafe { std::env::set_var("ANFORA_MAX_TENSOR_BYTES", CAP.to_string()) };
    let item = std::mem::size_of::<Value>();

    // Exactly at the cap: fine, in one block the value shares.
    let half = Value::str(&"a".repeat(CAP / 2));
    let Value::Str(ref s) = binary(Prim::Add, &half, &half).unwrap() else {
        panic!("a str")
    };
    assert_eq!(s.len(), CAP);
    // One byte more: refused, by concatenation and by repetition.
    let more = Value::str(&"a".repeat(CAP / 2 + 1));
    let e = binary(Prim::Add, &half, &more).unwrap_err();
    assert_eq!(e, limit("1.0 MiB for a str of 1048577 bytes"));
    let e = binary(Prim::Mul, &more, &Value::Int(2)).unwrap_err();
    assert_eq!(e, limit("1.0 MiB for a str of 1048578 bytes"));

    // Tuples and lists: the cap counts their items' bytes.
    let n = CAP / item / 2;
    let t = Value::tuple(vec![Value::Int(1); n]);
    let Value::Tuple(ref whole) = binary(Prim::Add, &t, &t).unwrap() else {
        panic!("a tuple")
    };
    assert_eq!(whole.len(), 2 * n);
    let longer = Value::tuple(vec![Value::Int(1); n + 1]);
    let e = binary(Prim::Add, &t, &longer).unwrap_err();
    assert_eq!(
        e,
        limit(&format!("1.0 MiB for a tuple of {} items", 2 * n + 1))
    );
    let e = binary(Prim::Mul, &longer, &Value::Int(2)).unwrap_err();
    assert_eq!(
        e,
        limit(&format!("1.0 MiB for a tuple of {} items", 2 * n + 2))
    );
    let list = Value::List(std::rc::Rc::from(vec![Value::None; n + 1]));
    let e = binary(Prim::Add, &list, &list).unwrap_err();
    assert_eq!(
        e,
        limit(&format!("1.0 MiB for a list of {} items", 2 * n + 2))
    );

    // Sizes whose byte count overflows are refused before any arithmetic wraps.
    let e = anfora_ops::alloc::repeat_str("ab", usize::MAX).unwrap_err();
    assert_eq!(e, ("MemoryError", "the str would be too large".to_string()));
    println!("alloc_cap: ok");
}
