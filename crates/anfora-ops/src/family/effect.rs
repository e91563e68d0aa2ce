//! Parameters and the state plumbing of the auto-monad stage: reads (`Load`), states
//! (`UpdateState`, `Depend`), creation, and the in-place writes `assign`, `assign_add`,
//! `assign_sub` and the scatter family.
//!
//! An update computes the new value with the same operations as user code (numpy semantics),
//! then checks that it still has the Parameter's shape and can be cast to its dtype under
//! numpy's `same_kind` rule, as numpy's in-place operators do. `assign` is numpy's
//! `p[...] = v`: the value is broadcast to the Parameter's shape and cast (any cast).

use anfora_tensor::{DType, Scalar, Tensor, broadcast_shapes, tuple_repr};

use crate::abs::{Abs, Rule, err, shape_text};
use crate::def::{Backward, Kernels, Py, always, never, primitives};
use crate::param::{Monad, ParamRef};
use crate::prim::{Effects, Prim, Refs};
use crate::pynum::{tensor_err, type_error, value_error};
use crate::python::{binary, truth};
use crate::state::{check_update, current, known, need, param_arg, store, written_abs};
use crate::value::{OpResult, Value};

primitives! {
    family effect = 11;

    /// `Load(param, u)`: the value of a Parameter in memory state `u`.
    Load {
        name: "Load", python: &[], signature: "(param, u)",
        effects: Effects::PURE,
        infer: |_, a| Ok(match &a[0] {
            Abs::Ref(r) => r.value(),
            other => other.clone(),
        }),
        raises: never,
        eval: |_, a, _| Ok(match &a[0] {
            Value::Ref(r) => Value::Tensor(r.get()),
            other => other.clone(),
        }),
        kernels: Kernels::None, backward: Backward::Zero,
        refs: Refs::First, fold: false, states: true,
    }
    /// `UpdateState(u, x...)`: the memory (or IO) state after `x` happened.
    UpdateState {
        name: "UpdateState", python: &[], signature: "(*args)",
        effects: Effects::PURE,
        infer: |_, a| Ok(match a.first() {
            Some(Abs::Monad(m)) => Abs::Monad(*m),
            _ => Abs::Monad(Monad::U),
        }),
        raises: never,
        eval: |_, a, _| Ok(a.first().cloned().unwrap_or(Value::None)),
        kernels: Kernels::None, backward: Backward::Zero,
        refs: Refs::All, fold: false, states: true,
    }
    /// `Depend(x, s...)`: `x`, once the states `s` are reached.
    Depend {
        name: "Depend", python: &[Py::Op("depend")], signature: "(value, *states)",
        effects: Effects::PROPAGATE,
        infer: |_, a| Ok(a[0].clone()),
        raises: never,
        eval: |_, a, _| Ok(a.first().cloned().unwrap_or(Value::None)),
        kernels: Kernels::None,
        backward: Backward::Rule(|e, c| Some(c.first(e, |_| c.d))),
        refs: Refs::All, passes_values: true, fold: false, states: true,
    }
    /// `anfora.Parameter(data, name, requires_grad)`: a new Parameter (module level only).
    /// Creating one makes a new identity: never merged, folded or removed.
    MakeParameter {
        name: "Parameter", python: &[Py::Anfora("Parameter")],
        signature: "(data, name=None, requires_grad=True)",
        effects: Effects::IO,
        infer: |_, _| Err(err("Parameters can only be created by module-level code")),
        raises: always, eval: |_, a, _| make_parameter(a),
        kernels: Kernels::None, backward: Backward::Zero,
    }
    Assign {
        name: "Assign", python: &[Py::Op("assign")], signature: "(variable, value)",
        effects: Effects::MEM,
        infer: assign_abs, raises: always, eval: |p, a, _| assign(p, a),
        kernels: Kernels::None, backward: Backward::Zero,
        refs: Refs::Writes(1),
    }
    AssignAdd {
        name: "AssignAdd", python: &[Py::Op("assign_add")], signature: "(variable, value)",
        effects: Effects::MEM,
        infer: assign_op_abs, raises: always, eval: |p, a, _| assign_op(p, a),
        kernels: Kernels::None, backward: Backward::Zero,
        refs: Refs::Writes(1),
    }
    AssignSub {
        name: "AssignSub", python: &[Py::Op("assign_sub")], signature: "(variable, value)",
        effects: Effects::MEM,
        infer: assign_op_abs, raises: always, eval: |p, a, _| assign_op(p, a),
        kernels: Kernels::None, backward: Backward::Zero,
        refs: Refs::Writes(1),
    }
    ScatterUpdate {
        name: "ScatterUpdate", python: &[Py::Op("scatter_update")],
        signature: "(input_x, indices, updates)",
        effects: Effects::MEM,
        infer: written_abs, raises: always, eval: |p, a, _| scatter(p, a, Tensor::scatter_update),
        kernels: Kernels::None, backward: Backward::Zero,
        refs: Refs::Writes(1),
    }
    ScatterAdd {
        name: "ScatterAdd", python: &[Py::Op("scatter_add")],
        signature: "(input_x, indices, updates)",
        effects: Effects::MEM,
        infer: written_abs, raises: always, eval: |p, a, _| scatter(p, a, Tensor::scatter_add),
        kernels: Kernels::None, backward: Backward::Zero,
        refs: Refs::Writes(1),
    }
    ScatterNdUpdate {
        name: "ScatterNdUpdate", python: &[Py::Op("scatter_nd_update")],
        signature: "(input_x, indices, updates)",
        effects: Effects::MEM,
        infer: written_abs, raises: always,
        eval: |p, a, _| scatter(p, a, Tensor::scatter_nd_update),
        kernels: Kernels::None, backward: Backward::Zero,
        refs: Refs::Writes(1),
    }
    ScatterNdAdd {
        name: "ScatterNdAdd", python: &[Py::Op("scatter_nd_add")],
        signature: "(input_x, indices, updates)",
        effects: Effects::MEM,
        infer: written_abs, raises: always, eval: |p, a, _| scatter(p, a, Tensor::scatter_nd_add),
        kernels: Kernels::None, backward: Backward::Zero,
        refs: Refs::Writes(1),
    }
}

/// numpy's `p[...] = v`: `v` broadcast to the Parameter's shape, any cast.
fn assign(p: Prim, args: &[Value]) -> OpResult {
    let func = p.python_name();
    let first = param_arg(&args[0], &func, "first")?;
    let v = match &args[1] {
        Value::Tensor(t) => t.clone(),
        v => match v.as_scalar() {
            Some(s) => Tensor::scalar(s, first.dtype()).map_err(tensor_err)?,
            None => {
                return Err(type_error(format!(
                    "{func}() expects a Tensor or a number as value, got {}",
                    v.type_name()
                )));
            }
        },
    };
    let shape = broadcast_shapes(first.shape(), v.shape()).map_err(tensor_err)?;
    if shape != first.shape() {
        return Err(value_error(format!(
            "{func}: could not broadcast input array from shape {} into shape {} (Parameter '{}')",
            tuple_repr(v.shape()),
            tuple_repr(first.shape()),
            first.name()
        )));
    }
    let mask = Tensor::full(first.shape(), Scalar::Bool(true), DType::Bool).map_err(tensor_err)?;
    let spread = Tensor::where_(&mask, &v, &v).map_err(tensor_err)?;
    first.set(spread.try_cast(first.dtype()).map_err(tensor_err)?);
    Ok(Value::Ref(first.clone()))
}

/// The operator an `assign_add`/`assign_sub` applies.
fn assign_operator(p: Prim) -> Prim {
    if p == Prim::AssignAdd {
        Prim::Add
    } else {
        Prim::Sub
    }
}

fn assign_op(p: Prim, args: &[Value]) -> OpResult {
    let func = p.python_name();
    let first = param_arg(&args[0], &func, "first")?;
    let new = binary(assign_operator(p), &current(first), &args[1])?;
    store(first, new, &func)?;
    Ok(Value::Ref(first.clone()))
}

type ScatterFn = fn(&Tensor, &Tensor, &Tensor) -> Result<Tensor, anfora_tensor::TensorError>;

fn scatter(p: Prim, args: &[Value], f: ScatterFn) -> OpResult {
    let func = p.python_name();
    let first = param_arg(&args[0], &func, "first")?;
    let indices = need(&args[1], &func, "indices")?;
    let updates = need(&args[2], &func, "updates")?;
    let new = f(&first.get(), indices, updates).map_err(tensor_err)?;
    store(first, Value::Tensor(new), &func)?;
    Ok(Value::Ref(first.clone()))
}

fn assign_abs(p: Prim, args: &[Abs]) -> Rule {
    let r = written_abs(p, args)?;
    if let (Abs::Ref(r), Abs::Tensor(v)) = (&args[0], &args[1]) {
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
    Ok(r)
}

fn assign_op_abs(p: Prim, args: &[Abs]) -> Rule {
    let r = written_abs(p, args)?;
    if let Abs::Ref(param) = &args[0] {
        let update = assign_operator(p).infer(&[param.value(), args[1].clone()])?;
        check_update(param, &update)?;
    }
    Ok(r)
}

/// `anfora.Parameter(data, name=None, requires_grad=True)`.
fn make_parameter(args: &[Value]) -> OpResult {
    let data = match &args[0] {
        Value::Tensor(t) => t.clone(),
        other => {
            return Err(type_error(format!(
                "Parameter() expects a Tensor as data, got {}",
                other.type_name()
            )));
        }
    };
    let requires_grad = truth(&args[2])?;
    let p = match &args[1] {
        Value::Str(name) => ParamRef::new(Some(name), data, requires_grad),
        Value::None => ParamRef::new(None, data, requires_grad),
        other => {
            return Err(type_error(format!(
                "Parameter() name must be a str, got {}",
                other.type_name()
            )));
        }
    };
    Ok(Value::Ref(p))
}
