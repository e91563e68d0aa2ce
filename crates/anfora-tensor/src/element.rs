//! The five element types behind one trait, so kernels are written once and monomorphized.

use std::mem::MaybeUninit;

use crate::{DType, Scalar, Storage};

/// A Rust type that stores one of the tensor dtypes.
pub(crate) trait Element: Copy + PartialEq + PartialOrd + Send + Sync + 'static {
    /// The dtype this type stores.
    const DTYPE: DType;

    fn from_bool(v: bool) -> Self;
    fn from_i64(v: i64) -> Self;
    fn from_f64(v: f64) -> Self;
    fn from_i32(v: i32) -> Self {
        Self::from_i64(i64::from(v))
    }
    fn from_f32(v: f32) -> Self {
        // f32 -> f64 is exact, so going through f64 loses nothing.
        Self::from_f64(f64::from(v))
    }

    /// numpy's `astype` (C casts: ints wrap, floats truncate toward zero).
    fn cast<D: Element>(self) -> D;
    fn to_scalar(self) -> Scalar;
    fn to_f64(self) -> f64;
    fn is_zero(self) -> bool;
    /// Equality where NaN equals NaN and `-0.0` differs from `0.0`.
    fn same(self, other: Self) -> bool;

    fn slice(storage: &Storage) -> Option<&[Self]>;
    fn into_storage(v: Vec<Self>) -> Storage;
    /// The vector inside `storage`, when it holds this type.
    fn vec_mut(storage: &mut Storage) -> Option<&mut Vec<Self>>;

    /// A chunk operand of this type, and back.
    fn any_val(v: Val<'_, Self>) -> AnyVal<'_>;
    fn from_any_val(v: AnyVal<'_>) -> Option<Val<'_, Self>>;
    /// A chunk destination of this type, and back.
    fn any_out(o: &mut [MaybeUninit<Self>]) -> AnyOut<'_>;
    fn from_any_out(o: AnyOut<'_>) -> Option<&mut [MaybeUninit<Self>]>;
}

/// The conversions between a typed value and the dtype-tagged enums, for variant `$v`.
macro_rules! any_conversions {
    ($v:ident) => {
        fn vec_mut(storage: &mut Storage) -> Option<&mut Vec<Self>> {
            match storage {
                Storage::$v(v) => Some(v),
                _ => None,
            }
        }
        #[inline(always)]
        fn any_val(v: Val<'_, Self>) -> AnyVal<'_> {
            AnyVal::$v(v)
        }
        #[inline(always)]
        fn from_any_val(v: AnyVal<'_>) -> Option<Val<'_, Self>> {
            match v {
                AnyVal::$v(v) => Some(v),
                _ => None,
            }
        }
        #[inline(always)]
        fn any_out(o: &mut [MaybeUninit<Self>]) -> AnyOut<'_> {
            AnyOut::$v(o)
        }
        #[inline(always)]
        fn from_any_out(o: AnyOut<'_>) -> Option<&mut [MaybeUninit<Self>]> {
            match o {
                AnyOut::$v(o) => Some(o),
                _ => None,
            }
        }
    };
}

/// 2**63, the first float above the int64 range.
pub(crate) const TWO_POW_63: f64 = -(i64::MIN as f64);

/// Float to int64 as x86 `cvttsd2si` does: NaN and out-of-range values give `i64::MIN`.
fn f64_to_i64(v: f64) -> i64 {
    if (-TWO_POW_63..TWO_POW_63).contains(&v) {
        v as i64
    } else {
        i64::MIN
    }
}

/// Float to int32 as x86 `cvttsd2si` (32-bit) does: NaN and out-of-range values give `i32::MIN`.
fn f64_to_i32(v: f64) -> i32 {
    if v > -2_147_483_649.0 && v < 2_147_483_648.0 {
        v as i32
    } else {
        i32::MIN
    }
}

impl Element for bool {
    const DTYPE: DType = DType::Bool;

    fn from_bool(v: bool) -> Self {
        v
    }
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    fn cast<D: Element>(self) -> D {
        D::from_bool(self)
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
    fn to_f64(self) -> f64 {
        f64::from(u8::from(self))
    }
    fn is_zero(self) -> bool {
        !self
    }
    fn same(self, other: Self) -> bool {
        self == other
    }
    fn slice(storage: &Storage) -> Option<&[Self]> {
        match storage {
            Storage::Bool(v) => Some(v),
            _ => None,
        }
    }
    fn into_storage(v: Vec<Self>) -> Storage {
        Storage::Bool(v)
    }
    any_conversions!(Bool);
}

impl Element for i32 {
    const DTYPE: DType = DType::I32;

    fn from_bool(v: bool) -> Self {
        i32::from(v)
    }
    fn from_i64(v: i64) -> Self {
        v as i32
    }
    fn from_f64(v: f64) -> Self {
        f64_to_i32(v)
    }
    fn from_i32(v: i32) -> Self {
        v
    }
    fn cast<D: Element>(self) -> D {
        D::from_i32(self)
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Int(i64::from(self))
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn is_zero(self) -> bool {
        self == 0
    }
    fn same(self, other: Self) -> bool {
        self == other
    }
    fn slice(storage: &Storage) -> Option<&[Self]> {
        match storage {
            Storage::I32(v) => Some(v),
            _ => None,
        }
    }
    fn into_storage(v: Vec<Self>) -> Storage {
        Storage::I32(v)
    }
    any_conversions!(I32);
}

impl Element for i64 {
    const DTYPE: DType = DType::I64;

    fn from_bool(v: bool) -> Self {
        i64::from(v)
    }
    fn from_i64(v: i64) -> Self {
        v
    }
    fn from_f64(v: f64) -> Self {
        f64_to_i64(v)
    }
    fn cast<D: Element>(self) -> D {
        D::from_i64(self)
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Int(self)
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn is_zero(self) -> bool {
        self == 0
    }
    fn same(self, other: Self) -> bool {
        self == other
    }
    fn slice(storage: &Storage) -> Option<&[Self]> {
        match storage {
            Storage::I64(v) => Some(v),
            _ => None,
        }
    }
    fn into_storage(v: Vec<Self>) -> Storage {
        Storage::I64(v)
    }
    any_conversions!(I64);
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;

    fn from_bool(v: bool) -> Self {
        f32::from(u8::from(v))
    }
    fn from_i64(v: i64) -> Self {
        // Direct rounding: going through f64 could round twice.
        v as f32
    }
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn from_i32(v: i32) -> Self {
        v as f32
    }
    fn from_f32(v: f32) -> Self {
        v
    }
    fn cast<D: Element>(self) -> D {
        D::from_f32(self)
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Float(f64::from(self))
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn is_zero(self) -> bool {
        self == 0.0
    }
    fn same(self, other: Self) -> bool {
        self.to_bits() == other.to_bits() || (self.is_nan() && other.is_nan())
    }
    fn slice(storage: &Storage) -> Option<&[Self]> {
        match storage {
            Storage::F32(v) => Some(v),
            _ => None,
        }
    }
    fn into_storage(v: Vec<Self>) -> Storage {
        Storage::F32(v)
    }
    any_conversions!(F32);
}

impl Element for f64 {
    const DTYPE: DType = DType::F64;

    fn from_bool(v: bool) -> Self {
        f64::from(u8::from(v))
    }
    fn from_i64(v: i64) -> Self {
        v as f64
    }
    fn from_f64(v: f64) -> Self {
        v
    }
    fn cast<D: Element>(self) -> D {
        D::from_f64(self)
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Float(self)
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn is_zero(self) -> bool {
        self == 0.0
    }
    fn same(self, other: Self) -> bool {
        self.to_bits() == other.to_bits() || (self.is_nan() && other.is_nan())
    }
    fn slice(storage: &Storage) -> Option<&[Self]> {
        match storage {
            Storage::F64(v) => Some(v),
            _ => None,
        }
    }
    fn into_storage(v: Vec<Self>) -> Storage {
        Storage::F64(v)
    }
    any_conversions!(F64);
}

/// Runs `$body` with `$v` bound to the typed `Vec` inside a `Storage` (one monomorphized arm
/// per dtype).
macro_rules! with_storage {
    ($storage:expr, $v:ident => $body:expr) => {
        match $storage {
            $crate::Storage::Bool($v) => $body,
            $crate::Storage::I32($v) => $body,
            $crate::Storage::I64($v) => $body,
            $crate::Storage::F32($v) => $body,
            $crate::Storage::F64($v) => $body,
            $crate::Storage::F16(_) | $crate::Storage::BF16(_) => {
                unreachable!("half-precision tensors reach kernels as float32")
            }
            $crate::Storage::View(_) => unreachable!("views are read through Tensor::data"),
        }
    };
}
pub(crate) use with_storage;

/// Like [`with_storage`] but binds a type alias `$t` for the element type as well.
macro_rules! with_type {
    ($dtype:expr, $t:ident => $body:expr) => {
        match $dtype {
            $crate::DType::Bool => {
                type $t = bool;
                $body
            }
            $crate::DType::I32 => {
                type $t = i32;
                $body
            }
            $crate::DType::I64 => {
                type $t = i64;
                $body
            }
            $crate::DType::F32 => {
                type $t = f32;
                $body
            }
            $crate::DType::F64 => {
                type $t = f64;
                $body
            }
            $crate::DType::F16 | $crate::DType::BF16 => {
                unreachable!("half-precision tensors reach kernels as float32")
            }
        }
    };
}
pub(crate) use with_type;

/// An operand of a chunk: one value per element, or one value for all.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Val<'a, T> {
    Slice(&'a [T]),
    Splat(T),
}

/// An operand of any dtype.
#[derive(Clone, Copy, Debug)]
pub(crate) enum AnyVal<'a> {
    Bool(Val<'a, bool>),
    I32(Val<'a, i32>),
    I64(Val<'a, i64>),
    F32(Val<'a, f32>),
    F64(Val<'a, f64>),
}

impl AnyVal<'_> {
    pub(crate) fn dtype(&self) -> DType {
        match self {
            AnyVal::Bool(_) => DType::Bool,
            AnyVal::I32(_) => DType::I32,
            AnyVal::I64(_) => DType::I64,
            AnyVal::F32(_) => DType::F32,
            AnyVal::F64(_) => DType::F64,
        }
    }
}

/// A destination of any dtype.
#[derive(Debug)]
pub(crate) enum AnyOut<'a> {
    Bool(&'a mut [MaybeUninit<bool>]),
    I32(&'a mut [MaybeUninit<i32>]),
    I64(&'a mut [MaybeUninit<i64>]),
    F32(&'a mut [MaybeUninit<f32>]),
    F64(&'a mut [MaybeUninit<f64>]),
}
