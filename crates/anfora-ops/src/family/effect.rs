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
use std::io::Write;

use crate::def::{Backward, PrimDef, Py, first, never, primitives};
use crate::param::{Monad, ParamRef};
use crate::prim::{Effects, Prim, Refs};
use crate::pynum::{tensor_err, type_error, value_error};
use crate::python::{binary, truth};
use crate::state::{check_update, current, known, need, param_arg, store, written_abs};
use crate::value::{OpResult, Value};

primitives! {
    family effect = 11;

    /// `Load(param, u)`: the value of a Parameter in memory state `u`.
    Load = plumbing(PrimDef::new("Load", "(param, u)", load_abs, load, Backward::Zero))
        .with_refs(Refs::First);
    /// `UpdateState(u, x...)`: the memory (or IO) state after `x` happened.
    UpdateState = plumbing(PrimDef::new("UpdateState", "(*args)", update_state_abs, first_value,
        Backward::Zero));
    /// `Depend(x, s...)`: `x`, once the states `s` are reached.
    Depend = plumbing(PrimDef::new("Depend", "(value, *states)", |_, a| Ok(a[0].clone()),
        first_value, first(|_, c| c.d)))
        .with_effects(Effects::PROPAGATE).called(&[Py::Op("depend")]).passing_values().viewing();
    /// `anfora.Parameter(data, name, requires_grad)`: a new Parameter (module level only).
    /// Creating one makes a new identity: never merged, folded or removed.
    MakeParameter = PrimDef::new("Parameter", "(data, name=None, requires_grad=True)",
        |_, _| Err(err("Parameters can only be created by module-level code")),
        |_, a, _| make_parameter(a), Backward::Zero)
        .with_effects(Effects::IO).called(&[Py::Anfora("Parameter")]);
    Assign = PrimDef::new("Assign", "(variable, value)", assign_abs, assign, Backward::Zero)
        .writing(1).called(&[Py::Op("assign")]);
    AssignAdd = PrimDef::new("AssignAdd", "(variable, value)", assign_op_abs, assign_op,
        Backward::Zero)
        .writing(1).called(&[Py::Op("assign_add")]);
    AssignSub = PrimDef::new("AssignSub", "(variable, value)", assign_op_abs, assign_op,
        Backward::Zero)
        .writing(1).called(&[Py::Op("assign_sub")]);
    ScatterUpdate = scatter("ScatterUpdate", &[Py::Op("scatter_update")]);
    ScatterAdd = scatter("ScatterAdd", &[Py::Op("scatter_add")]);
    ScatterNdUpdate = scatter("ScatterNdUpdate", &[Py::Op("scatter_nd_update")]);
    ScatterNdAdd = scatter("ScatterNdAdd", &[Py::Op("scatter_nd_add")]);
    /// `MakeCell(value)`: a new cell holding `value` (`Unbound` for a variable not assigned
    /// yet), for a variable a closure reads after its function assigns it again (late binding)
    /// or assigns through `nonlocal`. Each evaluation makes a new identity: never merged,
    /// folded or removed. Inference gives it the site it was made at (`Abs::Cell`).
    MakeCell = PrimDef::new("MakeCell", "(value)", cell_abs, make_cell, Backward::Refused(CELL_GRAD))
        .raising(never).with_refs(Refs::All).unfoldable().opaque();
    /// `CellGet(cell)`: what the cell holds now (a memory read, ordered on the `U` chain).
    CellGet = PrimDef::new("CellGet", "(cell)", cell_abs, cell_get, Backward::Refused(CELL_GRAD))
        .raising(never).with_effects(Effects::MEM).with_refs(Refs::All).unfoldable();
    /// `CellSet(cell, value)`: stores `value` in the cell (a memory write).
    CellSet = PrimDef::new("CellSet", "(cell, value)", |_, _| Ok(Abs::None), cell_set,
        Backward::Refused(CELL_GRAD))
        .raising(never).with_effects(Effects::MEM).with_refs(Refs::All).unfoldable();
}

/// Why a gradient does not pass through a variable shared with closures.
/// Calls of the cell operations are differentiated by the grad stage itself, with adjoint
/// cells (`anfora-ad`'s `cells`); no rule of their own applies.
const CELL_GRAD: &str = "cell operations are differentiated by the grad stage, not as primitives";

/// Cells are made and read by the abstract interpreter itself, which knows their sites; a
/// rule that sees one without it knows nothing of its value.
fn cell_abs(_: Prim, _: &[Abs]) -> Rule {
    Ok(Abs::Any)
}

fn make_cell(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    Ok(Value::Cell(std::rc::Rc::new(std::cell::RefCell::new(
        a[0].clone(),
    ))))
}

fn cell_get(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    match &a[0] {
        Value::Cell(c) => Ok(c.borrow().clone()),
        other => Err(type_error(format!(
            "CellGet expects a cell, got {}",
            other.type_name()
        ))),
    }
}

fn cell_set(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    match &a[0] {
        Value::Cell(c) => {
            // The old value is dropped after the borrow ends: dropping it may drop a closure
            // whose captures hold this very cell.
            let old = c.replace(a[1].clone());
            drop(old);
            Ok(Value::None)
        }
        other => Err(type_error(format!(
            "CellSet expects a cell, got {}",
            other.type_name()
        ))),
    }
}

/// State plumbing: takes every argument as it is (Parameters, states), never folded.
const fn plumbing(def: PrimDef) -> PrimDef {
    def.raising(never)
        .with_refs(Refs::All)
        .unfoldable()
        .with_states()
}

/// A scatter into the Parameter that is its first argument.
const fn scatter(name: &'static str, python: &'static [Py]) -> PrimDef {
    let signature = "(input_x, indices, updates)";
    PrimDef::new(name, signature, written_abs, scatter_update, Backward::Zero)
        .writing(1)
        .called(python)
}

fn load_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match &a[0] {
        Abs::Ref(r) => r.value(),
        other => other.clone(),
    })
}

fn load(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    Ok(match &a[0] {
        Value::Ref(r) => Value::Tensor(r.get()),
        other => other.clone(),
    })
}

fn update_state_abs(_: Prim, a: &[Abs]) -> Rule {
    Ok(match a.first() {
        Some(Abs::Monad(m)) => Abs::Monad(*m),
        _ => Abs::Monad(Monad::U),
    })
}

/// The state (or the value) passes through.
fn first_value(_: Prim, a: &[Value], _: &mut dyn Write) -> OpResult {
    Ok(a.first().cloned().unwrap_or(Value::None))
}

fn scatter_update(p: Prim, args: &[Value], _: &mut dyn Write) -> OpResult {
    let f: ScatterFn = match p {
        Prim::ScatterUpdate => Tensor::scatter_update,
        Prim::ScatterAdd => Tensor::scatter_add,
        Prim::ScatterNdUpdate => Tensor::scatter_nd_update,
        _ => Tensor::scatter_nd_add,
    };
    scatter_into(p, args, f)
}

/// numpy's `p[...] = v`: `v` broadcast to the Parameter's shape, any cast.
fn assign(p: Prim, args: &[Value], _: &mut dyn Write) -> OpResult {
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

fn assign_op(p: Prim, args: &[Value], _: &mut dyn Write) -> OpResult {
    let func = p.python_name();
    let first = param_arg(&args[0], &func, "first")?;
    let new = binary(assign_operator(p), &current(first), &args[1])?;
    store(first, new, &func)?;
    Ok(Value::Ref(first.clone()))
}

type ScatterFn = fn(&Tensor, &Tensor, &Tensor) -> Result<Tensor, anfora_tensor::TensorError>;

fn scatter_into(p: Prim, args: &[Value], f: ScatterFn) -> OpResult {
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
                r.param.as_ref().map_or("?".into(), |p| p.name()),
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
