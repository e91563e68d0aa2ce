//! Inference rules of the primitives with effects: Parameter reads and updates, the state
//! plumbing of the auto-monad stage, and the random generators.

use crate::custom::{CustomId, TensorSpec};
use crate::{Monad, Prim};
use anfora_tensor::DType;

use crate::abs::{Abs, RefAbs, shape_text};
use crate::state::same_kind;

use crate::rules::{RuleError, binary, dtype_arg, shape_arg, tensor_abs};

type Rule = Result<Abs, RuleError>;

fn err(msg: impl Into<String>) -> RuleError {
    RuleError(msg.into())
}

fn known(shape: &[usize]) -> Vec<Option<usize>> {
    shape.iter().map(|&d| Some(d)).collect()
}

/// Checks that `update`, the new value computed for Parameter `r`, can be stored in it.
fn check_update(r: &RefAbs, update: &Abs) -> Result<(), RuleError> {
    let Abs::Tensor(t) = update else {
        return Ok(());
    };
    let name = r.param.as_ref().map(|p| p.name()).unwrap_or("?");
    let fits = t.shape.len() == r.shape.len()
        && t.shape
            .iter()
            .zip(&r.shape)
            .all(|(a, b)| a.is_none_or(|a| a == *b));
    if !fits {
        return Err(err(format!(
            "the update of Parameter '{name}' has shape {}, but the Parameter has shape {}",
            shape_text(&t.shape, "?", ", "),
            shape_text(&known(&r.shape), "?", ", ")
        )));
    }
    if !same_kind(t.dtype, r.dtype) {
        return Err(err(format!(
            "cannot cast the update of Parameter '{name}' from {} to {} with casting rule 'same_kind'",
            t.dtype, r.dtype
        )));
    }
    Ok(())
}

fn float_dtype(a: &Abs, func: &str) -> Result<Option<DType>, RuleError> {
    match dtype_arg(a, DType::F32) {
        Some(d) if d.is_float() => Ok(Some(d)),
        Some(d) => Err(err(format!("{func}() needs a floating dtype, got {d}"))),
        None => Ok(None),
    }
}

/// A custom primitive: its registered rule on the dtypes and shapes of its arguments.
fn custom(id: CustomId, args: &[Abs]) -> Rule {
    let def = crate::custom::get(id);
    let mut specs = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        specs.push(match a {
            Abs::Any => return Ok(Abs::Any),
            Abs::Ref(r) if i < def.written_refs => TensorSpec {
                dtype: r.dtype,
                shape: known(&r.shape),
            },
            other if i < def.written_refs => {
                return Err(err(format!(
                    "ops.{}() writes a Parameter, but argument {} is {other}",
                    def.name,
                    i + 1
                )));
            }
            Abs::Tensor(t) => TensorSpec {
                dtype: t.dtype,
                shape: t.shape.clone(),
            },
            other => {
                return Err(err(format!(
                    "ops.{}() takes tensors, but argument {} is {other}",
                    def.name,
                    i + 1
                )));
            }
        });
    }
    let out = (def.infer)(&specs).map_err(|m| err(format!("ops.{}: {m}", def.name)))?;
    Ok(tensor_abs(out.dtype, out.shape))
}

pub(crate) fn infer(p: Prim, args: &[Abs]) -> Rule {
    if let Prim::Custom(id) = p {
        return custom(id, args);
    }
    let func = p.python_name();
    // Updates: the first argument must be a Parameter; the result is that Parameter.
    if p.written_refs() > 0 {
        for (i, a) in args.iter().take(p.written_refs()).enumerate() {
            match a {
                Abs::Ref(_) | Abs::Any => {}
                other => {
                    return Err(err(format!(
                        "{func}() writes a Parameter, but argument {} is {other}",
                        i + 1
                    )));
                }
            }
        }
        let Abs::Ref(r) = &args[0] else {
            return Ok(Abs::Any);
        };
        let current = r.value();
        match p {
            Prim::Assign => {
                if let Abs::Tensor(v) = &args[1] {
                    let fits = v.shape.len() <= r.shape.len()
                        && v.shape
                            .iter()
                            .rev()
                            .zip(r.shape.iter().rev())
                            .all(|(a, b)| a.is_none_or(|a| a == *b || a == 1));
                    if !fits {
                        return Err(err(format!(
                            "could not broadcast a value of shape {} into Parameter '{}' of shape {}",
                            shape_text(&v.shape, "?", ", "),
                            r.param.as_ref().map(|p| p.name()).unwrap_or("?"),
                            shape_text(&known(&r.shape), "?", ", ")
                        )));
                    }
                }
            }
            Prim::AssignAdd | Prim::AssignSub => {
                let op = if p == Prim::AssignAdd {
                    Prim::Add
                } else {
                    Prim::Sub
                };
                let update = binary(op, &current, &args[1])?;
                check_update(r, &update)?;
            }
            Prim::Sgd => {
                let step = binary(Prim::Mul, &args[2], &args[1])?;
                check_update(r, &binary(Prim::Sub, &current, &step)?)?;
            }
            _ => {}
        }
        return Ok(args[0].clone());
    }
    Ok(match p {
        Prim::Load => match &args[0] {
            Abs::Ref(r) => r.value(),
            other => other.clone(),
        },
        Prim::UpdateState => match args.first() {
            Some(Abs::Monad(m)) => Abs::Monad(*m),
            _ => Abs::Monad(Monad::U),
        },
        Prim::Depend => args[0].clone(),
        Prim::MakeParameter => {
            return Err(err("Parameters can only be created by module-level code"));
        }
        Prim::SetSeed => match &args[0] {
            Abs::Int(_) | Abs::Bool(_) | Abs::Any => Abs::None,
            other => return Err(err(format!("set_seed() expects an int, got {other}"))),
        },
        Prim::Uniform | Prim::Normal => {
            let Some(shape) = shape_arg(&args[0]) else {
                return Ok(Abs::Bottom);
            };
            match float_dtype(&args[3], &func)? {
                Some(d) => tensor_abs(d, shape),
                None => Abs::Any,
            }
        }
        Prim::Randint => {
            let Some(shape) = shape_arg(&args[2]) else {
                return Ok(Abs::Bottom);
            };
            match dtype_arg(&args[3], DType::I64) {
                Some(d) if d.is_int() => tensor_abs(d, shape),
                Some(d) => return Err(err(format!("{func}() needs an integer dtype, got {d}"))),
                None => Abs::Any,
            }
        }
        Prim::Bernoulli | Prim::Dropout | Prim::DropoutMask | Prim::DropoutApply => {
            match &args[0] {
                Abs::Tensor(t) if t.dtype.is_float() && p == Prim::DropoutMask => {
                    tensor_abs(DType::Bool, t.shape.clone())
                }
                Abs::Tensor(t) if t.dtype.is_float() => tensor_abs(t.dtype, t.shape.clone()),
                Abs::Tensor(t) => {
                    return Err(err(format!(
                        "{func}() expects a floating tensor, got {}",
                        t.dtype
                    )));
                }
                Abs::Any => Abs::Any,
                _ => Abs::Bottom,
            }
        }
        _ => Abs::Any,
    })
}
