//! Python's numeric semantics on 64-bit ints and IEEE doubles: float repr, exact comparisons
//! between ints and floats, correctly rounded int division, floor division and modulo with
//! Python's sign rules, and `**`. Errors carry CPython's messages.

use std::cmp::Ordering;
use std::fmt::Write;

use anfora_tensor::TensorError;

/// An error as (Python exception class, message).
pub type PyErr = (&'static str, String);

/// A float result as a new Python object would carry it. CPython compares container items by
/// identity before `==`, so `x in (x,)` holds for a NaN `x` while two NaNs made apart differ.
/// A float has no identity here, so each NaN an operation produces gets a payload of its own
/// (a counter): copies keep their bits, and bit-equal NaNs are the same object (see
/// [`same_object`]).
pub fn fresh_nan(f: f64) -> f64 {
    if !f.is_nan() {
        return f;
    }
    thread_local! {
        static NEXT: std::cell::Cell<u64> = const { std::cell::Cell::new(1) };
    }
    const SIGN: u64 = 1 << 63;
    const QUIET: u64 = 0x7ff8_0000_0000_0000;
    const PAYLOAD: u64 = (1 << 51) - 1;
    let k = NEXT.with(|n| {
        let k = n.get();
        n.set(k % PAYLOAD + 1);
        k
    });
    f64::from_bits((f.to_bits() & SIGN) | QUIET | k)
}

/// Whether two floats are one Python object as far as containers can tell: only NaNs need
/// identity (other equal floats compare equal anyway), and a NaN's payload names its origin.
pub fn same_object(a: f64, b: f64) -> bool {
    a.is_nan() && a.to_bits() == b.to_bits()
}

pub fn overflow(what: &str) -> PyErr {
    (
        "OverflowError",
        format!(
            "integer overflow in {what}: the result does not fit in 64 bits (anfora's ints are 64-bit)"
        ),
    )
}

/// `repr(x)` of a float, as CPython writes it: the shortest digits that round-trip, fixed
/// notation for exponents in [-4, 16), scientific otherwise.
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let sci = shortest_digits(x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if x < 0.0 { "-" } else { "" };
    // Decimal point position relative to the digits.
    let point = exp + 1;
    if (-4..16).contains(&exp) {
        let n = digits.len() as i32;
        let body = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point >= n {
            format!("{}{}.0", digits, "0".repeat((point - n) as usize))
        } else {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        };
        format!("{sign}{body}")
    } else {
        let mant = if digits.len() == 1 {
            digits.clone()
        } else {
            format!("{}.{}", &digits[..1], &digits[1..])
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mant}e{esign}{:02}", exp.abs())
    }
}

/// The shortest digits that round-trip, as `"d.dddde±x"`, chosen as CPython's repr chooses:
/// of the shortest strings that read back as `x`, the one nearest to `x`, ties to even.
/// Rust's `{:e}` finds the shortest length but may pick the other string of a tie
/// (1000000000000000.25 → ...3 where CPython writes ...2); the correctly rounded string of that
/// length (`{:.N$e}`, exact with ties to even) is CPython's whenever it reads back as `x`.
fn shortest_digits(x: f64) -> String {
    let shortest = format!("{x:e}");
    let digits = shortest
        .split_once('e')
        .map_or(0, |(m, _)| m.len() - usize::from(m.contains('.')));
    let rounded = format!("{x:.*e}", digits.saturating_sub(1));
    if rounded.parse::<f64>() == Ok(x) {
        rounded
    } else {
        shortest
    }
}

/// Exact comparison of an int with a float (None when the float is NaN).
pub fn cmp_int_float(a: i64, x: f64) -> Option<Ordering> {
    if x.is_nan() {
        return None;
    }
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    if x >= TWO63 {
        return Some(Ordering::Less);
    }
    if x < -TWO63 {
        return Some(Ordering::Greater);
    }
    // |x| < 2^63: its floor fits in i64 exactly.
    let fl = x.floor();
    let xi = fl as i64;
    match a.cmp(&xi) {
        Ordering::Equal => {
            if x > fl {
                Some(Ordering::Less)
            } else {
                Some(Ordering::Equal)
            }
        }
        o => Some(o),
    }
}

/// `a / b` for ints, correctly rounded to the nearest double (ties to even), as CPython does.
pub fn int_true_div(a: i64, b: i64) -> Result<f64, PyErr> {
    if b == 0 {
        return Err(("ZeroDivisionError", "division by zero".into()));
    }
    const EXACT: u64 = 1 << 53;
    if a.unsigned_abs() <= EXACT && b.unsigned_abs() <= EXACT {
        return Ok(a as f64 / b as f64);
    }
    let negative = (a < 0) != (b < 0);
    let (n, d) = (a.unsigned_abs() as u128, b.unsigned_abs() as u128);
    let q = n / d;
    let mut r = n % d;
    // Collect 53 significant bits, one guard bit and a sticky flag.
    let mut mant: u128;
    let mut exp: i32; // value = mant * 2^exp
    if q >= (1u128 << 53) {
        let shift = (128 - q.leading_zeros()) as i32 - 54; // keep 54 bits: 53 + guard
        let kept = q >> shift;
        let rest = q & ((1u128 << shift) - 1);
        mant = kept;
        exp = shift;
        let sticky = rest != 0 || r != 0;
        return Ok(finish(mant, exp, sticky, negative));
    }
    mant = q;
    exp = 0;
    let bits = |m: u128| 128 - m.leading_zeros() as i32;
    while bits(mant) < 54 {
        r <<= 1;
        mant <<= 1;
        exp -= 1;
        if r >= d {
            r -= d;
            mant |= 1;
        }
    }
    Ok(finish(mant, exp, r != 0, negative))
}

/// Rounds a 54-bit `mant` (53 bits + guard) with a sticky bit to the nearest double.
fn finish(mant: u128, exp: i32, sticky: bool, negative: bool) -> f64 {
    let guard = mant & 1 == 1;
    let mut m = mant >> 1;
    let e = exp + 1;
    if guard && (sticky || m & 1 == 1) {
        m += 1;
    }
    let v = (m as f64) * 2f64.powi(e);
    if negative { -v } else { v }
}

/// Python's `a // b` for ints.
pub fn int_floor_div(a: i64, b: i64) -> Result<i64, PyErr> {
    if b == 0 {
        return Err((
            "ZeroDivisionError",
            "integer division or modulo by zero".into(),
        ));
    }
    let q = a.checked_div(b).ok_or_else(|| overflow("//"))?;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        Ok(q - 1)
    } else {
        Ok(q)
    }
}

/// Python's `a % b` for ints (the result has the sign of `b`).
pub fn int_mod(a: i64, b: i64) -> Result<i64, PyErr> {
    if b == 0 {
        return Err(("ZeroDivisionError", "integer modulo by zero".into()));
    }
    let r = a.checked_rem(b).unwrap_or(0);
    if r != 0 && ((r < 0) != (b < 0)) {
        Ok(r + b)
    } else {
        Ok(r)
    }
}

pub fn float_floor_div(a: f64, b: f64) -> Result<f64, PyErr> {
    if b == 0.0 {
        return Err(("ZeroDivisionError", "float floor division by zero".into()));
    }
    Ok(anfora_tensor::float_divmod(a, b).0)
}

pub fn float_mod(a: f64, b: f64) -> Result<f64, PyErr> {
    if b == 0.0 {
        return Err(("ZeroDivisionError", "float modulo".into()));
    }
    Ok(anfora_tensor::float_divmod(a, b).1)
}

pub fn float_divmod(a: f64, b: f64) -> Result<(f64, f64), PyErr> {
    if b == 0.0 {
        return Err(("ZeroDivisionError", "float divmod()".into()));
    }
    Ok(anfora_tensor::float_divmod(a, b))
}

pub fn float_true_div(a: f64, b: f64) -> Result<f64, PyErr> {
    if b == 0.0 {
        return Err(("ZeroDivisionError", "float division by zero".into()));
    }
    Ok(a / b)
}

/// `a ** b` for ints: an int for `b >= 0`, else a float.
pub enum IntPow {
    Int(i64),
    Float(f64),
}

pub fn int_pow(a: i64, b: i64) -> Result<IntPow, PyErr> {
    if b < 0 {
        return float_pow(a as f64, b as f64).map(IntPow::Float);
    }
    let mut result: i64 = 1;
    let mut base = a;
    let mut e = b as u64;
    while e > 0 {
        if e & 1 == 1 {
            result = result.checked_mul(base).ok_or_else(|| overflow("**"))?;
        }
        e >>= 1;
        if e > 0 {
            base = base.checked_mul(base).ok_or_else(|| overflow("**"))?;
        }
    }
    Ok(IntPow::Int(result))
}

/// `a ** b` for floats with CPython's special cases and errors.
pub fn float_pow(a: f64, b: f64) -> Result<f64, PyErr> {
    if b == 0.0 {
        return Ok(1.0);
    }
    if a.is_nan() {
        return Ok(if b == 0.0 { 1.0 } else { a });
    }
    if b.is_nan() {
        return Ok(if a == 1.0 { 1.0 } else { b });
    }
    if a == 0.0 && b < 0.0 && b.is_finite() {
        return Err((
            "ZeroDivisionError",
            "0.0 cannot be raised to a negative power".into(),
        ));
    }
    if a < 0.0 && a.is_finite() && b.is_finite() && b.fract() != 0.0 {
        return Err((
            "ValueError",
            "a negative number raised to a fractional power gives a complex number, which anfora does not support".into(),
        ));
    }
    let r = a.powf(b);
    if r.is_infinite() && a.is_finite() && b.is_finite() {
        return Err((
            "OverflowError",
            "(34, 'Numerical result out of range')".into(),
        ));
    }
    Ok(r)
}

/// `int(text)`: optional sign, decimal digits with single underscores between them, spaces.
pub fn parse_int(text: &str) -> Result<i64, PyErr> {
    let bad = || {
        (
            "ValueError",
            format!("invalid literal for int() with base 10: {}", str_repr(text)),
        )
    };
    let t = text.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return Err(bad());
    }
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    let v: i128 = clean.parse().map_err(|_| overflow("int()"))?;
    let v = if neg { -v } else { v };
    i64::try_from(v).map_err(|_| overflow("int()"))
}

/// `float(text)`: decimal and exponent forms, `inf`/`infinity`/`nan` with a sign, underscores
/// between digits, surrounding whitespace.
pub fn parse_float(text: &str) -> Result<f64, PyErr> {
    let bad = || {
        (
            "ValueError",
            format!("could not convert string to float: {}", str_repr(text)),
        )
    };
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let (sign, body) = match lower.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, lower.strip_prefix('+').unwrap_or(&lower)),
    };
    match body {
        "inf" | "infinity" => return Ok(sign * f64::INFINITY),
        "nan" => return Ok(f64::NAN.copysign(sign)),
        _ => {}
    }
    let ok_chars = body
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-' | '_'));
    if body.is_empty() || !ok_chars {
        return Err(bad());
    }
    // Underscores only between digits.
    let b = body.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let prev = i
                .checked_sub(1)
                .map(|j| b[j].is_ascii_digit())
                .unwrap_or(false);
            let next = b.get(i + 1).map(|n| n.is_ascii_digit()).unwrap_or(false);
            if !prev || !next {
                return Err(bad());
            }
        }
    }
    let clean: String = body.chars().filter(|c| *c != '_').collect();
    clean.parse::<f64>().map(|v| sign * v).map_err(|_| bad())
}

pub fn type_error(msg: impl Into<String>) -> PyErr {
    ("TypeError", msg.into())
}

pub fn value_error(msg: impl Into<String>) -> PyErr {
    ("ValueError", msg.into())
}

/// The Python exception for a tensor error.
pub fn tensor_err(e: TensorError) -> PyErr {
    (e.kind.python_name(), e.message)
}

pub fn tensor<T>(r: Result<T, TensorError>) -> Result<T, PyErr> {
    r.map_err(tensor_err)
}

/// `repr()` of a Python string: single quotes unless the text has a single quote and no
/// double quote; escapes for backslashes, the quote, and non-printable characters.
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !is_printable(c) => {
                let v = c as u32;
                if v < 0x100 {
                    let _ = write!(out, "\\x{v:02x}");
                } else if v < 0x10000 {
                    let _ = write!(out, "\\u{v:04x}");
                } else {
                    let _ = write!(out, "\\U{v:08x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

pub use crate::unicode_printable::UNICODE_VERSION;

/// Python's `str.isprintable` for one character, from CPython's own Unicode tables
/// (`unicode_printable.rs`, generated).
pub fn is_printable(c: char) -> bool {
    use crate::unicode_printable::NOT_PRINTABLE;
    let v = c as u32;
    let i = NOT_PRINTABLE.partition_point(|&(_, last)| last < v);
    NOT_PRINTABLE.get(i).is_none_or(|&(first, _)| v < first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_cpython() {
        let cases = [
            (0.1 + 0.2, "0.30000000000000004"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2f64.powi(60), "1.152921504606847e+18"),
            (-0.0, "-0.0"),
            (123.456, "123.456"),
            (1.5e300, "1.5e+300"),
            (-2.5e-10, "-2.5e-10"),
            (100.0, "100.0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            // Two shortest strings at the same distance: CPython takes the even digit.
            (1e15 + 0.25, "1000000000000000.2"),
            (1e15 + 0.75, "1000000000000000.8"),
            (-(1e15 + 0.25), "-1000000000000000.2"),
        ];
        for (x, want) in cases {
            assert_eq!(float_repr(x), want, "{x:e}");
        }
        assert_eq!(float_repr(f64::NAN), "nan");
    }

    #[test]
    fn int_float_comparison_is_exact() {
        let big = (1i64 << 53) + 1;
        assert_eq!(cmp_int_float(big, 2f64.powi(53)), Some(Ordering::Greater));
        assert_eq!(cmp_int_float(3, 3.0), Some(Ordering::Equal));
        assert_eq!(cmp_int_float(3, 3.5), Some(Ordering::Less));
        assert_eq!(cmp_int_float(-3, -3.5), Some(Ordering::Greater));
        assert_eq!(cmp_int_float(i64::MAX, 9.3e18), Some(Ordering::Less));
        assert_eq!(cmp_int_float(i64::MIN, -9.3e18), Some(Ordering::Greater));
        assert_eq!(cmp_int_float(1, f64::NAN), None);
    }

    #[test]
    fn int_true_division_is_correctly_rounded() {
        assert_eq!(int_true_div(1, 3).unwrap(), 1.0 / 3.0);
        assert_eq!(int_true_div(-7, 2).unwrap(), -3.5);
        // 2^53 + 1 is not a double; the quotient by 1 rounds to even.
        assert_eq!(int_true_div((1 << 53) + 1, 1).unwrap(), 9007199254740992.0);
        assert_eq!(int_true_div((1 << 53) + 3, 1).unwrap(), 9007199254740996.0);
        // Checked against CPython: (2**62 + 1) / 3 and 1 / (2**60 + 7).
        assert_eq!(
            int_true_div((1 << 62) + 1, 3).unwrap(),
            1.5372286728091292e18
        );
        assert_eq!(
            int_true_div(1, (1 << 60) + 7).unwrap(),
            8.673617379884035e-19
        );
        assert_eq!(int_true_div(i64::MAX, -1).unwrap(), -9.223372036854776e18);
        assert!(int_true_div(1, 0).is_err());
    }

    #[test]
    fn floor_division_and_modulo_follow_python() {
        assert_eq!(int_floor_div(-7, 2).unwrap(), -4);
        assert_eq!(int_floor_div(7, -2).unwrap(), -4);
        assert_eq!(int_mod(-7, 2).unwrap(), 1);
        assert_eq!(int_mod(7, -2).unwrap(), -1);
        assert_eq!(int_mod(i64::MIN, -1).unwrap(), 0);
        assert!(int_floor_div(i64::MIN, -1).is_err());
        assert_eq!(
            int_floor_div(1, 0).unwrap_err().1,
            "integer division or modulo by zero"
        );
        assert_eq!(float_floor_div(-7.5, 2.0).unwrap(), -4.0);
        assert_eq!(float_mod(-7.5, 2.0).unwrap(), 0.5);
        assert_eq!(float_mod(7.5, -2.0).unwrap(), -0.5);
        assert!(float_mod(-0.0, 2.0).unwrap().is_sign_positive());
        assert!(float_mod(0.0, -2.0).unwrap().is_sign_negative());
        assert_eq!(
            float_floor_div(1.0, 0.0).unwrap_err().1,
            "float floor division by zero"
        );
    }

    #[test]
    fn powers() {
        assert!(matches!(int_pow(2, 10).unwrap(), IntPow::Int(1024)));
        assert!(matches!(int_pow(-3, 3).unwrap(), IntPow::Int(-27)));
        assert!(matches!(int_pow(2, -1).unwrap(), IntPow::Float(f) if f == 0.5));
        assert!(int_pow(2, 63).is_err());
        assert!(matches!(int_pow(-2, 63).unwrap(), IntPow::Int(i64::MIN)));
        assert_eq!(int_pow(0, -1).err().unwrap().0, "ZeroDivisionError");
        assert_eq!(float_pow(10.0, 400.0).unwrap_err().0, "OverflowError");
        assert_eq!(float_pow(-8.0, 0.5).unwrap_err().0, "ValueError");
        assert_eq!(float_pow(-8.0, 3.0).unwrap(), -512.0);
        assert_eq!(float_pow(f64::NAN, 0.0).unwrap(), 1.0);
    }

    #[test]
    fn parsing_numbers() {
        assert_eq!(parse_int(" -42 ").unwrap(), -42);
        assert_eq!(parse_int("1_000").unwrap(), 1000);
        assert_eq!(
            parse_int("3.5").unwrap_err().1,
            "invalid literal for int() with base 10: '3.5'"
        );
        assert!(parse_int("1__0").is_err());
        assert_eq!(parse_float("1.5").unwrap(), 1.5);
        assert_eq!(parse_float("-inf").unwrap(), f64::NEG_INFINITY);
        assert_eq!(parse_float(" 1e3 ").unwrap(), 1000.0);
        assert_eq!(parse_float("1_0.5").unwrap(), 10.5);
        assert!(parse_float("Infinity").unwrap().is_infinite());
        assert_eq!(
            parse_float("abc").unwrap_err().1,
            "could not convert string to float: 'abc'"
        );
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn float_repr_round_trips(bits in any::<u64>()) {
                let x = f64::from_bits(bits);
                prop_assume!(x.is_finite());
                let text = float_repr(x);
                prop_assert_eq!(parse_float(&text).unwrap().to_bits(), x.to_bits(), "{}", text);
            }

            #[test]
            fn floor_division_identity(a in any::<i64>(), b in any::<i64>()) {
                prop_assume!(b != 0 && !(a == i64::MIN && b == -1));
                let q = int_floor_div(a, b).unwrap();
                let r = int_mod(a, b).unwrap();
                prop_assert_eq!(q as i128 * b as i128 + r as i128, a as i128);
                prop_assert!(r == 0 || (r < 0) == (b < 0));
                prop_assert!((r as i128).abs() < (b as i128).abs());
            }
        }
    }
}
