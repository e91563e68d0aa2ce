//! `repr`/`str` matching numpy's default print options byte for byte: precision 8,
//! threshold 1000, edgeitems 3, linewidth 75, floatmode `maxprec`, sign `-`.

use std::fmt::{Display, LowerExp};

use crate::shape_repr::tuple_repr;
use crate::{DType, Storage, Tensor};

const PRECISION: usize = 8;
const THRESHOLD: usize = 1000;
const EDGEITEMS: usize = 3;
const LINEWIDTH: usize = 75;

// ----- decimal digits of floats ---------------------------------------------------------------

/// The decimal digits of a finite float's magnitude: value = d₀.d₁d₂… × 10^exp. `digits` holds
/// ASCII digits without trailing zeros (just `0` for zero).
#[derive(Debug, PartialEq)]
struct Digits {
    digits: Vec<u8>,
    exp: i32,
}

impl Digits {
    fn zero() -> Self {
        Digits {
            digits: vec![b'0'],
            exp: 0,
        }
    }

    fn trimmed(mut digits: Vec<u8>, exp: i32) -> Self {
        while digits.len() > 1 && digits.last() == Some(&b'0') {
            digits.pop();
        }
        if digits == [b'0'] {
            return Digits::zero();
        }
        Digits { digits, exp }
    }

    /// Parses Rust's `{:e}` / `{:.Ne}` output, e.g. `1.2345e-5`.
    fn from_sci(s: &str) -> Self {
        let (mantissa, exp) = s.split_once('e').expect("exponent format");
        let digits: Vec<u8> = mantissa.bytes().filter(|&b| b != b'.').collect();
        Digits::trimmed(digits, exp.parse().expect("exponent"))
    }

    /// Parses Rust's `{:.N}` output, e.g. `0.00012346`.
    fn from_fixed(s: &str) -> Self {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let all: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
        match all.iter().position(|&b| b != b'0') {
            None => Digits::zero(),
            Some(p) => Digits::trimmed(all[p..].to_vec(), int.len() as i32 - 1 - p as i32),
        }
    }

    /// Digits after the decimal point in positional notation.
    fn frac_len(&self) -> usize {
        (self.digits.len() as i32 - 1 - self.exp).max(0) as usize
    }

    /// Positional integer and fraction parts (`"0"` and `""` for zero).
    fn positional(&self) -> (String, String) {
        let d = &self.digits;
        if self.exp < 0 {
            let zeros = "0".repeat((-self.exp - 1) as usize);
            return (
                "0".to_string(),
                zeros + std::str::from_utf8(d).expect("ascii"),
            );
        }
        let int_len = self.exp as usize + 1;
        if d.len() <= int_len {
            let int = String::from_utf8(d.clone()).expect("ascii") + &"0".repeat(int_len - d.len());
            (int, String::new())
        } else {
            let s = std::str::from_utf8(d).expect("ascii");
            (s[..int_len].to_string(), s[int_len..].to_string())
        }
    }
}

/// The float types numpy prints, with the thresholds numpy uses for each.
trait PrintFloat: Copy + PartialOrd + Display + LowerExp + std::ops::Div<Output = Self> {
    /// Arrays switch to scientific notation at this magnitude (`10**min(8, finfo.precision)`).
    const EXP_CUTOFF: Self;
    const SMALL: Self;
    const RATIO: Self;
    /// A 0-d `str` switches to scientific notation at this magnitude.
    const STR_CUTOFF: f64;
    /// Enough significant digits to write any value of the type exactly.
    const EXACT_DIGITS: usize;
    fn is_finite(self) -> bool;
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn abs(self) -> Self;
    fn to_f64(self) -> f64;
    /// The shortest digits that round-trip in this type, in Rust's `{:e}` form.
    fn shortest_sci(self) -> String {
        format!("{self:e}")
    }
}

/// A float16 or bfloat16 value (held exactly as f32) for printing: exact digits are the f32's,
/// the shortest round-tripping digits are searched in the half type.
macro_rules! half_print {
    ($name:ident, $half:ty, $cutoff:expr) => {
        #[derive(Clone, Copy, PartialEq, PartialOrd)]
        struct $name(f32);

        impl Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                Display::fmt(&self.0, f)
            }
        }
        impl LowerExp for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                LowerExp::fmt(&self.0, f)
            }
        }
        impl std::ops::Div for $name {
            type Output = Self;
            fn div(self, rhs: Self) -> Self {
                $name(self.0 / rhs.0)
            }
        }
        impl PrintFloat for $name {
            const EXP_CUTOFF: Self = $name($cutoff);
            const SMALL: Self = $name(0.0001);
            const RATIO: Self = $name(1000.0);
            const STR_CUTOFF: f64 = $cutoff;
            const EXACT_DIGITS: usize = 120;
            fn is_finite(self) -> bool {
                self.0.is_finite()
            }
            fn is_nan(self) -> bool {
                self.0.is_nan()
            }
            fn is_sign_negative(self) -> bool {
                self.0.is_sign_negative()
            }
            fn abs(self) -> Self {
                $name(self.0.abs())
            }
            fn to_f64(self) -> f64 {
                f64::from(self.0)
            }
            fn shortest_sci(self) -> String {
                // The nearest p-digit decimal round-trips when any p-digit decimal does.
                for p in 0..9 {
                    let s = format!("{:.p$e}", self.0);
                    if s.parse::<f32>()
                        .is_ok_and(|v| <$half>::from_f32(v).to_f32() == self.0)
                    {
                        return s;
                    }
                }
                format!("{:e}", self.0)
            }
        }
    };
}
// numpy's cutoffs are `10**finfo.precision`: 3 digits for float16, 2 for bfloat16.
half_print!(F16Print, ::half::f16, 1e3);
half_print!(BF16Print, ::half::bf16, 1e2);

macro_rules! impl_print_float {
    ($t:ty, $cutoff:expr, $str_cutoff:expr, $exact:expr) => {
        impl PrintFloat for $t {
            const EXP_CUTOFF: Self = $cutoff;
            const SMALL: Self = 0.0001;
            const RATIO: Self = 1000.0;
            const STR_CUTOFF: f64 = $str_cutoff;
            const EXACT_DIGITS: usize = $exact;
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
        }
    };
}
impl_print_float!(f32, 1e6, 1e6, 120);
impl_print_float!(f64, 1e8, 1e16, 780);

/// The shortest digits that round-trip, as numpy's Dragon4 picks them.
fn shortest<T: PrintFloat>(x: T) -> Digits {
    let x = x.abs();
    let mut d = Digits::from_sci(&x.shortest_sci());
    // When two shortest candidates are equally near the exact value, Rust takes the upper one and
    // numpy the even one. That tie needs the exact value to be the midpoint `…d5`, so check for it
    // only when Rust's last digit is odd.
    let n = d.digits.len();
    if (d.digits[n - 1] - b'0') % 2 == 1 {
        let mut midpoint = d.digits.clone();
        midpoint[n - 1] -= 1;
        midpoint.push(b'5');
        let next = Digits::from_sci(&format!("{x:.n$e}"));
        if next.exp == d.exp && next.digits == midpoint && is_exact(x, n + 1) {
            d.digits[n - 1] -= 1;
            d = Digits::trimmed(d.digits, d.exp);
        }
    }
    d
}

/// Whether `x` is exactly representable with `sig` significant decimal digits.
fn is_exact<T: PrintFloat>(x: T, sig: usize) -> bool {
    let s = format!("{:.*e}", T::EXACT_DIGITS, x);
    let mantissa = s.split_once('e').expect("exponent format").0;
    mantissa
        .bytes()
        .filter(|&b| b != b'.')
        .skip(sig)
        .all(|b| b == b'0')
}

/// Unique digits, but at most `cap` digits after the point (rounded exactly, ties to even).
fn positional_digits<T: PrintFloat>(x: T, cap: usize) -> Digits {
    let d = shortest(x);
    if d.frac_len() <= cap {
        d
    } else {
        Digits::from_fixed(&format!("{:.cap$}", x.abs()))
    }
}

/// Unique digits, but at most `cap` digits after the leading one.
fn scientific_digits<T: PrintFloat>(x: T, cap: usize) -> Digits {
    let d = shortest(x);
    if d.digits.len() - 1 <= cap {
        d
    } else {
        Digits::from_sci(&format!("{:.cap$e}", x.abs()))
    }
}

fn sign<T: PrintFloat>(x: T) -> &'static str {
    if x.is_sign_negative() { "-" } else { "" }
}

/// `e+05`, `e-123`: numpy writes at least `min_digits` (and at least 2) exponent digits.
fn exponent(exp: i32, min_digits: usize) -> String {
    let s = if exp < 0 { '-' } else { '+' };
    format!(
        "e{s}{:0width$}",
        exp.unsigned_abs(),
        width = min_digits.max(2)
    )
}

/// `str()` of a numpy float scalar (how a 0-d float tensor prints with `str`).
fn float_scalar_str<T: PrintFloat>(x: T) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if !x.is_finite() {
        return format!("{}inf", sign(x));
    }
    let a = x.abs().to_f64();
    let d = shortest(x);
    if a == 0.0 || (1e-4..T::STR_CUTOFF).contains(&a) {
        let (int, frac) = d.positional();
        let frac = if frac.is_empty() {
            "0".to_string()
        } else {
            frac
        };
        format!("{}{int}.{frac}", sign(x))
    } else {
        let digits = std::str::from_utf8(&d.digits).expect("ascii");
        let mantissa = match digits.split_at(1) {
            (lead, "") => lead.to_string(),
            (lead, rest) => format!("{lead}.{rest}"),
        };
        format!("{}{mantissa}{}", sign(x), exponent(d.exp, 2))
    }
}

// ----- element formatters -----------------------------------------------------------------------

/// numpy's `FloatingFormat` in `maxprec` mode, fitted to the values that will be shown.
#[derive(Debug)]
struct FloatFormat {
    scientific: bool,
    pad_left: usize,
    pad_right: usize,
    /// Digits after the point in scientific mode.
    precision: usize,
    exp_digits: usize,
}

impl FloatFormat {
    fn fit<T: PrintFloat>(values: &[T]) -> Self {
        let finite: Vec<T> = values.iter().copied().filter(|v| v.is_finite()).collect();
        // The notation is decided in the array's own precision, as numpy compares numpy scalars.
        let mut magnitudes = finite
            .iter()
            .map(|v| v.abs())
            .filter(|&v| v.to_f64() != 0.0);
        let scientific = match magnitudes.next() {
            None => false,
            Some(first) => {
                let (min, max) = magnitudes.fold((first, first), |(lo, hi), v| {
                    (if v < lo { v } else { lo }, if v > hi { v } else { hi })
                });
                max >= T::EXP_CUTOFF || min < T::SMALL || max / min > T::RATIO
            }
        };
        let mut f = FloatFormat {
            scientific,
            pad_left: 0,
            pad_right: 0,
            precision: 0,
            exp_digits: 0,
        };
        if scientific {
            for &v in &finite {
                let d = scientific_digits(v, PRECISION);
                f.precision = f.precision.max(d.digits.len() - 1);
                f.pad_left = f.pad_left.max(1 + sign(v).len());
                f.exp_digits = f.exp_digits.max(exponent(d.exp, 2).len() - 2);
            }
            f.pad_right = f.exp_digits + 2 + f.precision;
        } else {
            for &v in &finite {
                let d = positional_digits(v, PRECISION);
                let (int, frac) = d.positional();
                f.pad_left = f.pad_left.max(int.len() + sign(v).len());
                f.pad_right = f.pad_right.max(frac.len());
            }
        }
        if finite.len() != values.len() {
            // Room for `nan`, `inf` and `-inf` right-aligned in the common width.
            let neg_inf = values
                .iter()
                .any(|v| !v.is_finite() && !v.is_nan() && v.is_sign_negative());
            let non_finite = 3 + usize::from(neg_inf);
            f.pad_left = f.pad_left.max(non_finite.saturating_sub(f.pad_right + 1));
        }
        f
    }

    fn format<T: PrintFloat>(&self, x: T) -> String {
        if !x.is_finite() {
            let s = if x.is_nan() {
                "nan".to_string()
            } else {
                format!("{}inf", sign(x))
            };
            return format!("{s:>width$}", width = self.pad_left + self.pad_right + 1);
        }
        if self.scientific {
            // numpy pads to `precision` digits with further digits of the exact value (Dragon4's
            // `min_digits`), not with zeros: 1e-05 in float32 shows as 9.9999997e-06.
            let d = Digits::from_sci(&format!("{:.*e}", self.precision, x.abs()));
            let digits = std::str::from_utf8(&d.digits).expect("ascii");
            let int = format!("{}{}", sign(x), &digits[..1]);
            format!(
                "{int:>pl$}.{frac:0<prec$}{exp}",
                pl = self.pad_left,
                frac = &digits[1..],
                prec = self.precision,
                exp = exponent(d.exp, self.exp_digits),
            )
        } else {
            let (int, frac) = positional_digits(x, PRECISION).positional();
            let int = format!("{}{int}", sign(x));
            format!(
                "{int:>pl$}.{frac:<pr$}",
                pl = self.pad_left,
                pr = self.pad_right
            )
        }
    }
}

enum ElemFormat {
    Bool { pad_true: bool },
    Int { width: usize },
    F32(FloatFormat),
    F64(FloatFormat),
    F16(FloatFormat),
    BF16(FloatFormat),
}

impl ElemFormat {
    /// Fits the formatter to the elements at `shown` (flat indices).
    fn fit(t: &Tensor, shown: &[usize]) -> Self {
        // Read in place: a view (a broadcast larger than memory) is never gathered to print.
        let shown: Vec<usize> = shown.iter().map(|&i| t.storage_index(i)).collect();
        let shown = &shown[..];
        fn pick<T: Copy>(v: &[T], shown: &[usize]) -> Vec<T> {
            shown.iter().map(|&i| v[i]).collect()
        }
        fn int_width(values: impl Iterator<Item = i64>) -> usize {
            let (lo, hi) = values.fold((i64::MAX, i64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
            lo.to_string().len().max(hi.to_string().len())
        }
        match t.raw_storage() {
            Storage::Bool(_) => ElemFormat::Bool {
                pad_true: t.ndim() > 0,
            },
            Storage::I32(v) => ElemFormat::Int {
                width: int_width(shown.iter().map(|&i| i64::from(v[i]))),
            },
            Storage::I64(v) => ElemFormat::Int {
                width: int_width(shown.iter().map(|&i| v[i])),
            },
            Storage::I8(v) => ElemFormat::Int {
                width: int_width(shown.iter().map(|&i| i64::from(v[i]))),
            },
            Storage::U8(v) => ElemFormat::Int {
                width: int_width(shown.iter().map(|&i| i64::from(v[i]))),
            },
            Storage::F32(v) => ElemFormat::F32(FloatFormat::fit(&pick(v, shown))),
            Storage::F64(v) => ElemFormat::F64(FloatFormat::fit(&pick(v, shown))),
            Storage::F16(v) => ElemFormat::F16(FloatFormat::fit(
                &shown
                    .iter()
                    .map(|&i| F16Print(v[i].to_f32()))
                    .collect::<Vec<_>>(),
            )),
            Storage::BF16(v) => ElemFormat::BF16(FloatFormat::fit(
                &shown
                    .iter()
                    .map(|&i| BF16Print(v[i].to_f32()))
                    .collect::<Vec<_>>(),
            )),
            Storage::View(_) | Storage::Device(_) => unreachable!("a view's base is dense"),
        }
    }

    fn format(&self, storage: &Storage, i: usize) -> String {
        match (self, storage) {
            (ElemFormat::Bool { pad_true }, Storage::Bool(v)) => match (v[i], pad_true) {
                (true, true) => " True".to_string(),
                (true, false) => "True".to_string(),
                (false, _) => "False".to_string(),
            },
            (ElemFormat::Int { width }, Storage::I32(v)) => format!("{:>width$}", v[i]),
            (ElemFormat::Int { width }, Storage::I64(v)) => format!("{:>width$}", v[i]),
            (ElemFormat::Int { width }, Storage::I8(v)) => format!("{:>width$}", v[i]),
            (ElemFormat::Int { width }, Storage::U8(v)) => format!("{:>width$}", v[i]),
            (ElemFormat::F32(f), Storage::F32(v)) => f.format(v[i]),
            (ElemFormat::F64(f), Storage::F64(v)) => f.format(v[i]),
            (ElemFormat::F16(f), Storage::F16(v)) => f.format(F16Print(v[i].to_f32())),
            (ElemFormat::BF16(f), Storage::BF16(v)) => f.format(BF16Print(v[i].to_f32())),
            _ => unreachable!("formatter fitted to this storage"),
        }
    }
}

// ----- layout (numpy's _formatArray) -----------------------------------------------------------

struct Layout<'a> {
    t: &'a Tensor,
    strides: Vec<usize>,
    fmt: ElemFormat,
    summarize: bool,
    separator: &'static str,
}

/// Indices shown along an axis of length `len`: all, or the leading and trailing edge items.
fn shown_along(len: usize, summarize: bool) -> Vec<usize> {
    if summarize && len > 2 * EDGEITEMS {
        (0..EDGEITEMS).chain(len - EDGEITEMS..len).collect()
    } else {
        (0..len).collect()
    }
}

/// Appends `word` to `line`, first moving `line` into `out` if the word would pass `width`
/// (unless the line holds nothing but its indent).
fn extend_line(out: &mut String, line: &mut String, word: &str, width: usize, indent: &str) {
    if line.len() + word.len() > width && line.len() > indent.len() {
        out.push_str(line.trim_end());
        out.push('\n');
        line.clear();
        line.push_str(indent);
    }
    line.push_str(word);
}

impl<'a> Layout<'a> {
    fn new(t: &'a Tensor, separator: &'static str) -> Self {
        let strides: Vec<usize> = crate::shape::contiguous_strides(&t.shape)
            .into_iter()
            .map(|s| s as usize)
            .collect();
        let summarize = t.numel() > THRESHOLD;
        let mut shown = vec![0usize];
        for (&len, &stride) in t.shape.iter().zip(&strides) {
            let along = shown_along(len, summarize);
            shown = shown
                .iter()
                .flat_map(|&base| along.iter().map(move |&i| base + i * stride))
                .collect();
        }
        Layout {
            fmt: ElemFormat::fit(t, &shown),
            t,
            strides,
            summarize,
            separator,
        }
    }

    fn render(&self, axis: usize, offset: usize, indent: &str, width: usize) -> String {
        if axis == self.t.ndim() {
            return self
                .fmt
                .format(self.t.raw_storage(), self.t.storage_index(offset));
        }
        let next_indent = format!("{indent} ");
        let next_width = width.saturating_sub(1);
        let len = self.t.shape[axis];
        let stride = self.strides[axis];
        let summary = self.summarize && len > 2 * EDGEITEMS;
        let (leading, trailing) = if summary {
            (EDGEITEMS, EDGEITEMS)
        } else {
            (0, len)
        };
        // Children in display order; `None` marks the `...` of a summarized axis.
        let children: Vec<Option<usize>> = (0..leading)
            .map(Some)
            .chain(summary.then_some(None))
            .chain((len - trailing..len).map(Some))
            .collect();
        let child = |i: usize| self.render(axis + 1, offset + i * stride, &next_indent, next_width);
        let mut s = String::new();
        if axis + 1 == self.t.ndim() {
            let elem_width = width.saturating_sub(self.separator.trim_end().len().max(1));
            let mut line = indent.to_string();
            for (pos, c) in children.iter().enumerate() {
                let word = c.map_or_else(|| "...".to_string(), child);
                extend_line(&mut s, &mut line, &word, elem_width, indent);
                if pos + 1 < children.len() {
                    line.push_str(self.separator);
                }
            }
            s.push_str(&line);
        } else {
            let line_sep =
                self.separator.trim_end().to_string() + &"\n".repeat(self.t.ndim() - axis - 1);
            for (pos, c) in children.iter().enumerate() {
                s.push_str(indent);
                s.push_str(&c.map_or_else(|| "...".to_string(), child));
                if pos + 1 < children.len() {
                    s.push_str(&line_sep);
                }
            }
        }
        format!("[{}]", &s[indent.len()..])
    }
}

/// numpy's `array2string` for a non-empty tensor.
fn array2string(t: &Tensor, separator: &'static str, prefix_len: usize, width: usize) -> String {
    let layout = Layout::new(t, separator);
    layout.render(0, 0, &" ".repeat(prefix_len + 1), width)
}

/// numpy's `repr` of an array whose class is called `class` (`array` for an ndarray; numpy
/// names a subclass by its type, so `class = "Tensor"` is the repr of a subclass `Tensor`).
pub(crate) fn repr(t: &Tensor, class: &str) -> String {
    let prefix = format!("{class}(");
    let prefix = prefix.as_str();
    let body = if t.numel() == 0 {
        "[]".to_string()
    } else {
        // The closing `)` is reserved on the last line.
        array2string(t, ", ", prefix.len(), LINEWIDTH - 1)
    };
    let mut extras = Vec::new();
    if (t.numel() == 0 && t.shape() != [0]) || t.numel() > THRESHOLD {
        extras.push(format!("shape={}", tuple_repr(t.shape())));
    }
    let implied = matches!(t.dtype(), DType::Bool | DType::I64 | DType::F64);
    if !implied || t.numel() == 0 {
        extras.push(format!("dtype={}", t.dtype().name()));
    }
    if extras.is_empty() {
        return format!("{prefix}{body})");
    }
    let head = format!("{prefix}{body},");
    let tail = extras.join(", ") + ")";
    let last_line = head.len() - head.rfind('\n').map_or(0, |p| p + 1);
    let spacer = if last_line + tail.len() + 1 > LINEWIDTH {
        format!("\n{}", " ".repeat(prefix.len()))
    } else {
        " ".to_string()
    };
    format!("{head}{spacer}{tail}")
}

pub(crate) fn to_str(t: &Tensor) -> String {
    if t.ndim() == 0 {
        let i = t.storage_index(0);
        return match t.raw_storage() {
            Storage::Bool(v) => if v[i] { "True" } else { "False" }.to_string(),
            Storage::I32(v) => v[i].to_string(),
            Storage::I64(v) => v[i].to_string(),
            Storage::I8(v) => v[i].to_string(),
            Storage::U8(v) => v[i].to_string(),
            Storage::F32(v) => float_scalar_str(v[i]),
            Storage::F64(v) => float_scalar_str(v[i]),
            Storage::F16(v) => float_scalar_str(F16Print(v[i].to_f32())),
            Storage::BF16(v) => float_scalar_str(BF16Print(v[i].to_f32())),
            Storage::View(_) | Storage::Device(_) => unreachable!("a view's base is dense"),
        };
    }
    if t.numel() == 0 {
        return "[]".to_string();
    }
    array2string(t, " ", 0, LINEWIDTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_parse_and_layout() {
        let digits = |d: &[u8], exp| Digits {
            digits: d.to_vec(),
            exp,
        };
        let parsed = [
            (Digits::from_sci("1.2345e-5"), digits(b"12345", -5)),
            (Digits::from_sci("0e0"), Digits::zero()),
            (Digits::from_fixed("0.00012300"), digits(b"123", -4)),
            (Digits::from_fixed("0.00000000"), Digits::zero()),
        ];
        for (got, want) in parsed {
            assert_eq!(got, want);
        }
        // (digits, integer part, fraction part)
        let laid_out = [
            (Digits::from_fixed("1200.50"), "1200", "5"),
            (Digits::from_sci("1.2e3"), "1200", ""),
            (Digits::from_sci("1.2e-3"), "0", "0012"),
        ];
        for (d, int, frac) in laid_out {
            assert_eq!(d.positional(), (int.to_string(), frac.to_string()), "{d:?}");
        }
    }

    #[test]
    fn shortest_breaks_ties_to_even_like_dragon4() {
        // 2**-12 = 0.000244140625: 2.4414062e-4 and 2.4414063e-4 are equally near.
        let d = shortest(2f32.powi(-12));
        assert_eq!(std::str::from_utf8(&d.digits).unwrap(), "24414062");
        // Exact values that merely look like ties keep Rust's shortest digits.
        assert_eq!(std::str::from_utf8(&shortest(0.1f32).digits).unwrap(), "1");
        assert_eq!(
            std::str::from_utf8(&shortest(1.0e23f64).digits).unwrap(),
            "1"
        );
        assert_eq!(
            std::str::from_utf8(&shortest(1048576.2f32).digits).unwrap(),
            "10485762"
        );
    }

    #[test]
    fn float_scalar_strings() {
        assert_eq!(float_scalar_str(1.0f64), "1.0");
        assert_eq!(float_scalar_str(-0.0f64), "-0.0");
        assert_eq!(float_scalar_str(1e16f64), "1e+16");
        assert_eq!(float_scalar_str(1e15f64), "1000000000000000.0");
        assert_eq!(float_scalar_str(1e6f32), "1e+06");
        assert_eq!(float_scalar_str(999999.94f32), "999999.94");
        assert_eq!(float_scalar_str(1e-4f32), "1e-04");
        assert_eq!(float_scalar_str(1e-4f64), "0.0001");
        assert_eq!(float_scalar_str(1.5e-5f32), "1.5e-05");
        assert_eq!(float_scalar_str(1.5e300f64), "1.5e+300");
        assert_eq!(float_scalar_str(f32::NEG_INFINITY), "-inf");
        assert_eq!(float_scalar_str(f64::NAN), "nan");
    }
}
