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
    /// Equality where NaN equals NaN and `-0.0` differs from `0.0` (floats define their own).
    fn same(self, other: Self) -> bool {
        self == other
    }

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
        fn slice(storage: &Storage) -> Option<&[Self]> {
            match storage {
                Storage::$v(v) => Some(v),
                _ => None,
            }
        }
        fn into_storage(v: Vec<Self>) -> Storage {
            Storage::$v(v)
        }
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
    any_conversions!(Bool);
}

/// The numeric dtypes: `$t` in variant `$v`, a Python `Scalar::$scalar`; `cast` goes through
/// `D::$from` (which every dtype converts from exactly), and float64 becomes `$t` by
/// `$from_f64`. Integers convert directly: int64 to int32 wraps (numpy's C cast), and into a
/// float they round once (through float64 they could round twice).
macro_rules! numeric_element {
    ($t:ty, $v:ident, $scalar:ident, $from:ident, $from_f64:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$v;

            fn from_bool(v: bool) -> Self {
                <$t>::from(u8::from(v))
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            fn from_i32(v: i32) -> Self {
                v as $t
            }
            fn from_f64(v: f64) -> Self {
                $from_f64(v)
            }
            fn cast<D: Element>(self) -> D {
                D::$from(self)
            }
            fn to_scalar(self) -> Scalar {
                Scalar::$scalar(self.into())
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn is_zero(self) -> bool {
                self == 0 as $t
            }
            same_of!($scalar);
            any_conversions!($v);
        }
    };
}

/// [`Element::same`] of a numeric type by its kind of Python scalar: integers keep the default
/// equality, floats compare bits (NaN equal to NaN whatever its payload).
macro_rules! same_of {
    (Int) => {};
    (Float) => {
        fn same(self, other: Self) -> bool {
            self.to_bits() == other.to_bits() || (self.is_nan() && other.is_nan())
        }
    };
}
numeric_element!(i32, I32, Int, from_i32, f64_to_i32);
numeric_element!(i64, I64, Int, from_i64, f64_to_i64);
numeric_element!(f32, F32, Float, from_f32, |v| v as f32);
numeric_element!(f64, F64, Float, from_f64, |v| v);

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
            $crate::Storage::I8(_) | $crate::Storage::U8(_) => {
                unreachable!("8-bit integer tensors reach kernels as int32")
            }
            $crate::Storage::View(_) | $crate::Storage::Device(_) => {
                unreachable!("views are read through Tensor::data")
            }
        }
    };
}
pub(crate) use with_storage;

/// Like [`with_storage`] but binds a type alias `$t` for the element type as well.
macro_rules! with_type {
    ($dtype:expr, $t:ident => $body:expr) => {
        $crate::element::with_type!(@arms $dtype, $t => $body;
            Bool: bool, I32: i32, I64: i64, F32: f32, F64: f64)
    };
    // One arm per compute dtype: its `DType` variant and its element type.
    (@arms $dtype:expr, $t:ident => $body:expr; $($variant:ident: $ty:ty),+) => {
        match $dtype {
            $($crate::DType::$variant => {
                type $t = $ty;
                $body
            })+
            $crate::DType::F16 | $crate::DType::BF16 => {
                unreachable!("half-precision tensors reach kernels as float32")
            }
            $crate::DType::I8 | $crate::DType::U8 => {
                unreachable!("8-bit integer tensors reach kernels as int32")
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
