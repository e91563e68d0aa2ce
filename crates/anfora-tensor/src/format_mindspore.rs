//! MindSpore 2.x's texts of a tensor (issue 29), checked against MindSpore 2.7.2:
//! * `repr` (and `Print` called from Python): `Tensor(shape=[2, 1], dtype=Int32, value=` then
//!   a line break for two or more dimensions (a space otherwise), the values, and `)`; the
//!   values with `, ` between items and `,` and a line break indented by the depth between
//!   rows;
//! * graph mode's `Print`: the same without the commas and without the space after `value=`,
//!   and a 0-d tensor as its bare value (a bool as `1` or `0`).
//!
//! The values: brackets per dimension; floats in C's `%15.8e` (`%11.4e` for float16); integers right-
//! aligned to the widest; bools right-aligned in 5 columns; a 0-d tensor's value in C++'s
//! default stream form (`%g`, `True`/`False`). Long dimensions keep their first and last 3
//! items around `...` (more than 6 items, or more than 1,000 in a 1-D tensor), and a 1-D
//! tensor breaks its line after every 12 floats or bools, or 24 integers.

use crate::{DType, Scalar, Tensor};

/// How many items of a summarized dimension are shown at each end.
const EDGE: usize = 3;
/// Above this many items a dimension is summarized (1-D tensors: `LONG_1D`).
const SUMMARIZE: usize = 2 * EDGE;
const LONG_1D: usize = 1000;

/// MindSpore's name of a dtype (`Float32`, `Int64`, `Bool`, ...).
pub fn mindspore_dtype_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "Bool",
        DType::I8 => "Int8",
        DType::U8 => "UInt8",
        DType::I32 => "Int32",
        DType::I64 => "Int64",
        DType::F16 => "Float16",
        DType::BF16 => "BFloat16",
        DType::F32 => "Float32",
        DType::F64 => "Float64",
    }
}

/// `Tensor(shape=[...], dtype=..., value=...)`, MindSpore's `repr`.
pub fn mindspore_repr(t: &Tensor) -> String {
    text(t, true)
}

/// What MindSpore's `Print` writes of a tensor in graph mode.
pub fn mindspore_print(t: &Tensor) -> String {
    text(t, false)
}

fn text(t: &Tensor, commas: bool) -> String {
    let t = t.contiguous();
    if t.ndim() == 0 && !commas {
        return match t.get_flat(0) {
            Scalar::Bool(b) => u8::from(b).to_string(),
            v => scalar_text(v),
        };
    }
    let shape: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    let values = if t.ndim() == 0 {
        scalar_text(t.get_flat(0))
    } else {
        Layout::new(&t, commas).text()
    };
    let gap = match (t.ndim() > 1, commas) {
        (true, _) => "\n",
        (false, true) => " ",
        (false, false) => "",
    };
    format!(
        "Tensor(shape=[{}], dtype={}, value={gap}{values})",
        shape.join(", "),
        mindspore_dtype_name(t.dtype()),
    )
}

/// C++'s default stream output of a number: `%g` with 6 significant digits.
fn general(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').expect("Rust's exponent form");
    let exp: i32 = exp.parse().expect("an exponent");
    if !(-4..6).contains(&exp) {
        return format!("{}{}", trim_zeros(mantissa), c_exponent(exp));
    }
    let decimals = (5 - exp).max(0) as usize;
    trim_zeros(&format!("{x:.decimals$}")).to_string()
}

/// `1.50000` → `1.5`, `2.00000` → `2`.
fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// C's exponent: a sign and at least two digits.
fn c_exponent(exp: i32) -> String {
    format!("e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

/// C's `%W.Pe`.
fn scientific(x: f64, width: usize, precision: usize) -> String {
    let text = if x.is_nan() {
        "nan".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        let s = format!("{x:.precision$e}");
        let (mantissa, exp) = s.split_once('e').expect("Rust's exponent form");
        format!(
            "{mantissa}{}",
            c_exponent(exp.parse().expect("an exponent"))
        )
    };
    format!("{text:>width$}")
}

fn scalar_text(v: Scalar) -> String {
    match v {
        Scalar::Bool(b) => if b { "True" } else { "False" }.into(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => general(f),
    }
}

/// The values of a tensor of one or more dimensions, laid out as MindSpore does.
struct Layout<'a> {
    t: &'a Tensor,
    /// The width the other items (integers, bfloat16) are right-aligned to: the widest of
    /// those shown, found by a first pass.
    widest: usize,
    /// Whether items and rows are separated by commas (`repr`) or not (`Print`).
    commas: bool,
    out: String,
}

impl<'a> Layout<'a> {
    fn new(t: &'a Tensor, commas: bool) -> Layout<'a> {
        Layout {
            t,
            widest: 0,
            commas,
            out: String::new(),
        }
    }

    fn text(mut self) -> String {
        self.dim(0, 0);
        self.out.clear();
        self.dim(0, 0);
        self.out
    }

    /// The item at flat index `i`, in its column width.
    fn item(&mut self, i: usize) -> String {
        let v = self.t.get_flat(i);
        match (self.t.dtype(), v) {
            (DType::F16, Scalar::Float(f)) => scientific(f, 11, 4),
            (DType::F32 | DType::F64, Scalar::Float(f)) => scientific(f, 15, 8),
            (DType::Bool, Scalar::Bool(b)) => format!("{:>5}", if b { "True" } else { "False" }),
            (_, v) => {
                let s = scalar_text(v);
                self.widest = self.widest.max(s.len());
                format!("{s:>width$}", width = self.widest)
            }
        }
    }

    /// How many items of the last dimension a 1-D line holds before it breaks.
    fn line_length(&self) -> usize {
        match self.t.dtype() {
            DType::Bool | DType::F16 | DType::F32 | DType::F64 => 2 * SUMMARIZE,
            _ => 4 * SUMMARIZE,
        }
    }

    /// Items `start..end` of the last dimension, whose first element is at `base`.
    fn run(&mut self, base: usize, start: usize, end: usize) {
        let ndim = self.t.ndim();
        for i in start..end {
            let s = self.item(base + i);
            self.out.push_str(&s);
            if i + 1 != end {
                self.out.push_str(if self.commas { ", " } else { " " });
            }
            if ndim == 1 && end - start > EDGE && (i + 1) % self.line_length() == 0 {
                self.out.push_str("\n ");
            }
        }
    }

    /// Dimension `depth`, whose first element is at flat index `base`.
    fn dim(&mut self, depth: usize, base: usize) {
        let shape = self.t.shape().to_vec();
        let n = shape[depth];
        let inner: usize = shape[depth + 1..].iter().product();
        self.out.push('[');
        if depth + 1 == shape.len() {
            let long = if shape.len() == 1 { LONG_1D } else { SUMMARIZE };
            if n > long {
                self.run(base, 0, EDGE);
                self.out.push_str(" ... ");
                self.run(base, n - EDGE, n);
            } else {
                self.run(base, 0, n);
            }
        } else {
            let indent = " ".repeat(depth + 1);
            let row_break = if self.commas { ",\n" } else { "\n" };
            for i in 0..n.min(EDGE) {
                if i > 0 {
                    self.out.push_str(row_break);
                    self.out.push_str(&indent);
                }
                self.dim(depth + 1, base + i * inner);
            }
            if n > SUMMARIZE {
                self.out.push_str(row_break);
                self.out.push_str(&indent);
                self.out.push_str("...");
            }
            if n > EDGE {
                let tail = (n - EDGE).min(EDGE);
                for k in 0..tail {
                    if self.commas && (k != 0 || n <= SUMMARIZE) {
                        self.out.push(',');
                    }
                    self.out.push('\n');
                    self.out.push_str(&indent);
                    self.dim(depth + 1, base + (n - tail + k) * inner);
                }
            }
        }
        self.out.push(']');
    }
}
