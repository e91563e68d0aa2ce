//! Tensors made from Python values: `zeros`, `ones`, `full`, `arange`, `tensor` and the
//! `_like` forms, with numpy's default dtypes.

use anfora_tensor::{DType, Nested as Data, Scalar, Tensor};

use crate::abs::{Abs, Rule};
use crate::args::{
    Kind, dtype_arg, dtype_arg_abs, kind, need_tensor, shape_arg, shape_arg_abs, tensor_abs,
};
use crate::def::{Backward, Kernels, PrimDef, Py, primitives, unless_known_floats};
use crate::prim::Prim;
use crate::pynum::{PyErr, tensor, type_error};
use crate::value::{OpResult, Value};

primitives! {
    family creation = 3;

    Zeros = constructor("Zeros", "(shape, dtype=None)", &[Py::Op("zeros")]);
    Ones = constructor("Ones", "(shape, dtype=None)", &[Py::Op("ones")]);
    Full = constructor("Full", "(shape, fill_value, dtype=None)", &[Py::Op("full")]);
    Arange = constructor("Arange", "(start, stop=None, step=None, dtype=None)",
        &[Py::Op("arange")]);
    MakeTensor = constructor("MakeTensor", "(data, dtype=None)", &[Py::Op("tensor")]);
    ZerosLike = like_tensor(constructor("ZerosLike", "(x, dtype=None)", &[Py::Op("zeros_like")]));
    OnesLike = like_tensor(constructor("OnesLike", "(x, dtype=None)", &[Py::Op("ones_like")]));
}

/// A tensor made from Python values: no gradient.
const fn constructor(
    name: &'static str,
    signature: &'static str,
    python: &'static [Py],
) -> PrimDef {
    PrimDef::new(
        name,
        signature,
        creation_abs,
        |p, a, _| creation(p, a),
        Backward::Zero,
    )
    .called(python)
    .making_arrays()
}

/// The `_like` forms compute on a tensor (a kernel on its device), and cannot raise once
/// inference has checked it.
const fn like_tensor(def: PrimDef) -> PrimDef {
    def.with_kernels(Kernels::Tensor { fused: false })
        .raising(unless_known_floats)
}

fn nested(v: &Value) -> Result<Data, PyErr> {
    crate::deep(|| nested_inner(v))
}

fn nested_inner(v: &Value) -> Result<Data, PyErr> {
    match v {
        Value::Tuple(items) | Value::List(items) => Ok(Data::List(
            items.iter().map(nested).collect::<Result<_, _>>()?,
        )),
        Value::Tensor(t) if t.ndim() == 0 => Ok(Data::Scalar(tensor(t.item())?)),
        other => other.as_scalar().map(Data::Scalar).ok_or_else(|| {
            type_error(format!(
                "ops.tensor() expects numbers or nested lists of numbers, got {}",
                other.type_name()
            ))
        }),
    }
}

fn creation(p: Prim, args: &[Value]) -> OpResult {
    let t = match p {
        Prim::Zeros | Prim::Ones => {
            let shape = shape_arg(&args[0])?;
            let d = dtype_arg(&args[1], Some(DType::F32))?.unwrap_or(DType::F32);
            if p == Prim::Zeros {
                tensor(Tensor::zeros(&shape, d))?
            } else {
                tensor(Tensor::ones(&shape, d))?
            }
        }
        Prim::Full => {
            let shape = shape_arg(&args[0])?;
            let fill = match &args[1] {
                Value::Tensor(t) if t.ndim() == 0 => tensor(t.item())?,
                v => v.as_scalar().ok_or_else(|| {
                    type_error(format!(
                        "ops.full() fill_value must be a number, got {}",
                        v.type_name()
                    ))
                })?,
            };
            let default = match fill {
                Scalar::Bool(_) => DType::Bool,
                Scalar::Int(_) => DType::I64,
                Scalar::Float(_) => DType::F32,
            };
            let d = dtype_arg(&args[2], Some(default))?.unwrap_or(default);
            tensor(Tensor::full(&shape, fill, d))?
        }
        Prim::Arange => {
            let scalar = |v: &Value| {
                v.as_scalar().ok_or_else(|| {
                    type_error(format!(
                        "ops.arange() expects numbers, got {}",
                        v.type_name()
                    ))
                })
            };
            let (start, stop) = match &args[1] {
                Value::None => (Scalar::Int(0), scalar(&args[0])?),
                s => (scalar(&args[0])?, scalar(s)?),
            };
            let step = match &args[2] {
                Value::None => Scalar::Int(1),
                s => scalar(s)?,
            };
            let d = dtype_arg(&args[3], None)?;
            tensor(Tensor::arange(start, stop, step, d))?
        }
        Prim::MakeTensor => {
            let d = dtype_arg(&args[1], None)?;
            match &args[0] {
                Value::Tensor(t) => match d {
                    Some(d) => tensor(t.try_cast(d))?,
                    None => t.clone(),
                },
                data => tensor(Tensor::from_nested(&nested(data)?, d))?,
            }
        }
        _ => {
            let x = need_tensor(&args[0], &p.python_name())?;
            let d = dtype_arg(&args[1], Some(x.dtype()))?.unwrap_or(x.dtype());
            if p == Prim::ZerosLike {
                tensor(Tensor::zeros(x.shape(), d))?
            } else {
                tensor(Tensor::ones(x.shape(), d))?
            }
        }
    };
    Ok(Value::Tensor(t))
}

fn creation_abs(p: Prim, args: &[Abs]) -> Rule {
    let t = match p {
        Prim::Zeros | Prim::Ones => {
            let Some(shape) = shape_arg_abs(&args[0]) else {
                return Ok(Abs::Bottom);
            };
            let Some(d) = dtype_arg_abs(&args[1], DType::F32) else {
                return Ok(Abs::Any);
            };
            tensor_abs(d, shape)
        }
        Prim::Full => {
            let Some(shape) = shape_arg_abs(&args[0]) else {
                return Ok(Abs::Bottom);
            };
            // The fill value is a Python scalar (a 0-d tensor becomes one): its kind picks the
            // default dtype.
            let default = match &args[1] {
                Abs::Bool(_) => DType::Bool,
                Abs::Int(_) => DType::I64,
                Abs::Float(_) => DType::F32,
                Abs::Tensor(t) if t.shape.is_empty() => match t.dtype {
                    DType::Bool => DType::Bool,
                    DType::I32 | DType::I64 | DType::I8 | DType::U8 => DType::I64,
                    DType::F32 | DType::F64 | DType::F16 | DType::BF16 => DType::F32,
                },
                Abs::Any => return Ok(Abs::Any),
                // ops.full() fill_value must be a number: TypeError at run time.
                _ => return Ok(Abs::Bottom),
            };
            let Some(d) = dtype_arg_abs(&args[2], default) else {
                return Ok(Abs::Any);
            };
            tensor_abs(d, shape)
        }
        Prim::Arange => {
            let all_int = args[..3]
                .iter()
                .all(|a| matches!(a, Abs::Int(_) | Abs::Bool(_) | Abs::None));
            let default = if all_int { DType::I64 } else { DType::F32 };
            let Some(d) = dtype_arg_abs(&args[3], default) else {
                return Ok(Abs::Any);
            };
            tensor_abs(d, vec![None])
        }
        Prim::ZerosLike | Prim::OnesLike => match &args[0] {
            Abs::Tensor(x) => {
                let Some(d) = dtype_arg_abs(&args[1], x.dtype) else {
                    return Ok(Abs::Any);
                };
                tensor_abs(d, x.shape.clone())
            }
            Abs::Any => return Ok(Abs::Any),
            _ => return Ok(Abs::Bottom),
        },
        // ops.tensor(data): the shape comes from the data.
        _ => match &args[0] {
            Abs::Tensor(x) => match dtype_arg_abs(&args[1], x.dtype) {
                Some(d) => tensor_abs(d, x.shape.clone()),
                None => return Ok(Abs::Any),
            },
            data => match nested_data(data) {
                Nested::Shape(shape, kind) => {
                    // Float data (or none) defaults to float32, as literals do.
                    let default = match kind {
                        Some(Kind::Bool) => DType::Bool,
                        Some(Kind::Int) => DType::I64,
                        Some(Kind::Float) | None => DType::F32,
                    };
                    match dtype_arg_abs(&args[1], default) {
                        Some(d) => tensor_abs(d, shape.into_iter().map(Some).collect()),
                        None => return Ok(Abs::Any),
                    }
                }
                Nested::Unknown => return Ok(Abs::Any),
                Nested::Invalid => return Ok(Abs::Bottom),
            },
        },
    };
    Ok(t)
}

/// What `ops.tensor` sees in nested tuples and lists of numbers.
enum Nested {
    /// Their shape and the widest kind of number (`None` when there are none).
    Shape(Vec<usize>, Option<Kind>),
    /// Something is not known at compile time.
    Unknown,
    /// Not numbers, or ragged: an error at run time.
    Invalid,
}

fn nested_data(a: &Abs) -> Nested {
    fn wider(a: Option<Kind>, b: Option<Kind>) -> Option<Kind> {
        match (a, b) {
            (Some(Kind::Float), _) | (_, Some(Kind::Float)) => Some(Kind::Float),
            (Some(Kind::Int), _) | (_, Some(Kind::Int)) => Some(Kind::Int),
            (Some(Kind::Bool), _) | (_, Some(Kind::Bool)) => Some(Kind::Bool),
            _ => None,
        }
    }
    match a {
        Abs::Bool(_) | Abs::Int(_) | Abs::Float(_) => Nested::Shape(vec![], kind(a)),
        Abs::Tensor(t) if t.shape.is_empty() => Nested::Shape(
            vec![],
            Some(match t.dtype {
                DType::Bool => Kind::Bool,
                DType::I32 | DType::I64 | DType::I8 | DType::U8 => Kind::Int,
                DType::F32 | DType::F64 | DType::F16 | DType::BF16 => Kind::Float,
            }),
        ),
        Abs::Tuple(items) | Abs::List(items) => {
            let mut shape: Option<Vec<usize>> = None;
            let mut widest = None;
            for item in items.iter() {
                match nested_data(item) {
                    Nested::Shape(s, k) => {
                        if shape.as_ref().is_some_and(|prev| *prev != s) {
                            return Nested::Invalid;
                        }
                        shape = Some(s);
                        widest = wider(widest, k);
                    }
                    other => return other,
                }
            }
            let mut full = vec![items.len()];
            full.extend(shape.unwrap_or_default());
            Nested::Shape(full, widest)
        }
        Abs::Any | Abs::Bottom => Nested::Unknown,
        _ => Nested::Invalid,
    }
}
