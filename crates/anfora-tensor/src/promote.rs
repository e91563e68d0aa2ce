//! Type promotion (numpy's table restricted to our dtypes, NEP 50 weak Python scalars) and
//! conversion of Python scalars into a dtype.

use crate::element::TWO_POW_63;
use crate::{BinaryOp, DType, ErrorKind, Result, Scalar, TensorError, UnaryOp};

/// numpy's `promote_types` for two tensor dtypes.
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    match (a, b) {
        _ if a == b => a,
        (Bool, x) | (x, Bool) => x,
        (I32, I64) | (I64, I32) => I64,
        (F32, F64) | (F64, F32) => F64,
        // A half dtype with float32, or the two half dtypes (ml_dtypes' rule), is float32;
        // with float64 or an integer it is float64 (below), as numpy's float16.
        (F16 | BF16, F32) | (F32, F16 | BF16) | (F16, BF16) | (BF16, F16) => F32,
        // The 8-bit integers fit every other dtype but each other (int16: refused where an
        // operation would compute with it, see `narrow::elementwise_dtype`).
        (I8 | U8, x) | (x, I8 | U8) if x != I8 && x != U8 => x,
        (I8, U8) | (U8, I8) => I32,
        // int32/int64 with float32 need 53 mantissa bits, and int64 with float64 is float64.
        _ => F64,
    }
}

impl BinaryOp {
    pub fn is_comparison(self) -> bool {
        use BinaryOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }

    /// numpy's ufunc name, used in error messages.
    pub fn ufunc_name(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "add",
            Sub => "subtract",
            Mul => "multiply",
            Div => "divide",
            FloorDiv => "floor_divide",
            Mod => "remainder",
            Pow => "power",
            Maximum => "maximum",
            Minimum => "minimum",
            BitAnd => "bitwise_and",
            BitOr => "bitwise_or",
            BitXor => "bitwise_xor",
            LShift => "left_shift",
            RShift => "right_shift",
            Eq => "equal",
            Ne => "not_equal",
            Lt => "less",
            Le => "less_equal",
            Gt => "greater",
            Ge => "greater_equal",
        }
    }
}

fn unsupported_types(ufunc: &str) -> TensorError {
    TensorError::new(
        ErrorKind::Type,
        format!(
            "ufunc '{ufunc}' not supported for the input types, and the inputs could not be safely \
             coerced to any supported types according to the casting rule ''safe''"
        ),
    )
}

/// The dtype a binary op computes in and the dtype of its result, given the promoted input dtype.
pub(crate) fn binary_types(op: BinaryOp, promoted: DType) -> Result<(DType, DType)> {
    use BinaryOp::*;
    let same = Ok((promoted, promoted));
    match op {
        Add | Mul | Maximum | Minimum => same,
        Sub if promoted == DType::Bool => Err(TensorError::new(
            ErrorKind::Type,
            "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the \
             `^` operator, or the logical_xor function instead.",
        )),
        Sub => same,
        Div if promoted.is_float() => same,
        Div => Ok((DType::F64, DType::F64)),
        // numpy gives int8 for these on bools; int8 does not exist here, int64 is the closest.
        FloorDiv | Mod | Pow | LShift | RShift if promoted == DType::Bool => {
            Ok((DType::I64, DType::I64))
        }
        FloorDiv | Mod | Pow => same,
        BitAnd | BitOr | BitXor | LShift | RShift if promoted.is_float() => {
            Err(unsupported_types(op.ufunc_name()))
        }
        BitAnd | BitOr | BitXor | LShift | RShift => same,
        Eq | Ne | Lt | Le | Gt | Ge => Ok((promoted, DType::Bool)),
    }
}

/// Result dtype of `binary(op, a, b)` for tensors of dtypes `a` and `b`.
pub fn binary_result_dtype(op: BinaryOp, a: DType, b: DType) -> Result<DType> {
    binary_types(op, promote_types(a, b)).map(|(_, out)| out)
}

/// The dtype a Python scalar takes next to a tensor of dtype `t` (NEP 50: the scalar is "weak"
/// and adopts the tensor's kind when it can).
pub(crate) fn weak_scalar_dtype(op: BinaryOp, t: DType, s: Scalar) -> DType {
    match s {
        Scalar::Bool(_) => t,
        Scalar::Int(_) => match t {
            DType::Bool => DType::I64,
            // numpy 2 accepts out-of-range Python ints here: comparisons are exact, and true
            // division computes in float64 anyway. int64 holds every Python int we get.
            DType::I32 | DType::I8 | DType::U8 if op.is_comparison() || op == BinaryOp::Div => {
                DType::I64
            }
            _ => t,
        },
        Scalar::Float(_) if t.is_float() => t,
        Scalar::Float(_) => DType::F64,
    }
}

/// numpy's result dtype of several operands taken together (`np.result_type` under NEP 50):
/// the tensors' dtypes promoted, then each Python scalar as a weak operand of that. `clip`
/// promotes its operands so: `clip(bool_tensor, -4, int32_tensor)` is int32, where `maximum`
/// then `minimum` would make it int64. `None` without a tensor.
pub fn result_type(dtypes: &[DType], scalars: &[Scalar]) -> Option<DType> {
    let mut d = dtypes.iter().copied().reduce(promote_types)?;
    for &s in scalars {
        d = promote_types(d, weak_scalar_dtype(BinaryOp::Maximum, d, s));
    }
    Some(d)
}

/// Result dtype of `binary_scalar(op, t, s, _)`.
pub fn binary_scalar_result_dtype(op: BinaryOp, t: DType, s: Scalar) -> Result<DType> {
    binary_result_dtype(op, t, weak_scalar_dtype(op, t, s))
}

/// The dtype a unary op computes in (= its result dtype), or the TypeError numpy raises.
pub fn unary_result_dtype(op: UnaryOp, a: DType) -> Result<DType> {
    use UnaryOp::*;
    match op {
        Neg if a == DType::Bool => Err(TensorError::new(
            ErrorKind::Type,
            "The numpy boolean negative, the `-` operator, is not supported, use the `~` operator \
             or the logical_not function instead.",
        )),
        Pos if a == DType::Bool => Err(TensorError::new(
            ErrorKind::Type,
            "ufunc 'positive' did not contain a loop with signature matching types \
             <class 'numpy.dtypes.BoolDType'> -> None",
        )),
        Invert if a.is_float() => Err(unsupported_types("invert")),
        Relu if a == DType::Bool => Err(TensorError::new(
            ErrorKind::Type,
            "relu is not supported for boolean tensors",
        )),
        Sign if a == DType::Bool => Err(TensorError::new(
            ErrorKind::Type,
            "ufunc 'sign' did not contain a loop with signature matching types \
             <class 'numpy.dtypes.BoolDType'> -> None",
        )),
        Neg | Pos | Abs | Invert | Relu | Sign => Ok(a),
        LogicalNot => Ok(DType::Bool),
        // numpy picks float16 for bool and 8-bit inputs; bool keeps float64, as for ints.
        Exp | Log | Sqrt | Tanh | Sin | Cos | Sigmoid | Log1p | Expm1 | Erf | Gelu | GeluTanh
        | Silu | Softplus | Rsqrt
            if a.is_narrow_int() =>
        {
            Ok(DType::F16)
        }
        Exp | Log | Sqrt | Tanh | Sin | Cos | Sigmoid | Log1p | Expm1 | Erf | Gelu | GeluTanh
        | Silu | Softplus | Rsqrt
            if a.is_float() =>
        {
            Ok(a)
        }
        Exp | Log | Sqrt | Tanh | Sin | Cos | Sigmoid | Log1p | Expm1 | Erf | Gelu | GeluTanh
        | Silu | Softplus | Rsqrt => Ok(DType::F64),
    }
}

/// Python's conversion of a float to an integer (`int(x)` then a range check), as numpy does
/// when a Python float is stored into an integer array.
fn float_to_int(f: f64, dtype: DType) -> Result<i64> {
    if f.is_nan() {
        return Err(TensorError::new(
            ErrorKind::Value,
            "cannot convert float NaN to integer",
        ));
    }
    if f.is_infinite() {
        return Err(TensorError::new(
            ErrorKind::Overflow,
            "cannot convert float infinity to integer",
        ));
    }
    let t = f.trunc();
    if !(-TWO_POW_63..TWO_POW_63).contains(&t) {
        return Err(TensorError::new(
            ErrorKind::Overflow,
            "Python int too large to convert to C long",
        ));
    }
    int_in_range(t as i64, dtype)
}

fn int_in_range(i: i64, dtype: DType) -> Result<i64> {
    let fits = match dtype {
        DType::I32 => i32::try_from(i).is_ok(),
        DType::I8 => i8::try_from(i).is_ok(),
        DType::U8 => u8::try_from(i).is_ok(),
        _ => true,
    };
    if !fits {
        return Err(TensorError::new(
            ErrorKind::Overflow,
            format!("Python integer {i} out of bounds for {dtype}"),
        ));
    }
    Ok(i)
}

/// A Python scalar converted to `dtype` as `np.array(value, dtype=dtype)` does; the value comes
/// back as the widest Scalar of the dtype's kind (`Bool`, `Int` or `Float`).
pub(crate) fn convert_scalar(value: Scalar, dtype: DType) -> Result<Scalar> {
    Ok(match (value, dtype) {
        (_, DType::Bool) => Scalar::Bool(value.as_f64() != 0.0),
        (Scalar::Bool(b), DType::I32 | DType::I64 | DType::I8 | DType::U8) => {
            Scalar::Int(i64::from(b))
        }
        (Scalar::Int(i), DType::I32 | DType::I64 | DType::I8 | DType::U8) => {
            Scalar::Int(int_in_range(i, dtype)?)
        }
        (Scalar::Float(f), DType::I32 | DType::I64 | DType::I8 | DType::U8) => {
            Scalar::Int(float_to_int(f, dtype)?)
        }
        (_, DType::F32) => Scalar::Float(f64::from(value.as_f64() as f32)),
        (_, DType::F64) => Scalar::Float(value.as_f64()),
        (_, DType::F16 | DType::BF16) => {
            let t = crate::Tensor::scalar(Scalar::Float(value.as_f64()), DType::F64)?;
            Scalar::Float(crate::narrow::cast(&t, dtype)?.to_f64_vec()[0])
        }
    })
}
