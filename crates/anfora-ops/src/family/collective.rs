//! The collectives (issue 30): operations every process of the group issues together, on
//! the communication chain of the auto-monad stage, so every process issues them in program
//! order and no pass reorders, merges or drops one. Their kernels are `crate::collective`'s;
//! the group is the one the host registered (`anfora.distributed.init()`).
//!
//! Gradients: `all_reduce`'s (sum, mean) is the same all_reduce of the sensitivities; max's
//! splits the summed sensitivity between the processes that hold the maximum. `all_gather`
//! and `reduce_scatter` are each other's adjoints; `broadcast`'s sums the sensitivities on
//! the root.

use anfora_tensor::{BinaryOp, DType, Tensor};

use crate::abs::{Abs, Rule, err};
use crate::args::{int_arg, need_tensor, normalize_axis, tensor_abs};
use crate::collective;
use crate::constant::Const;
use crate::def::{Backward, PrimDef, Py, primitives};
use crate::emit::{Call, Emit, Grads};
use crate::prim::{Effects, Prim};
use crate::pynum::{PyErr, tensor, type_error};
use crate::value::{OpResult, Value};

primitives! {
    family collective = 17;

    /// `ops.all_reduce(x, op="sum")`: `x` summed (`"mean"`: averaged, `"max"`: its maximum)
    /// elementwise over every process of the group. A tuple of tensors of one dtype (a
    /// gradient bucket) is reduced in one collective and comes back as a tuple.
    AllReduce = comm(PrimDef::new("AllReduce", "(x, op='sum')", all_reduce_abs,
        |_, a, _| all_reduce(a), Backward::Rule(all_reduce_back)))
        .called(&[Py::Op("all_reduce")]);
    /// `AllReduceGrad(d, x, out, op)`: all_reduce's sensitivity when `op` is known only at
    /// run time (the rule emits the operations themselves for a constant `op`).
    AllReduceGrad = comm(PrimDef::new("AllReduceGrad", "(d, x, out, op)", |_, a| Ok(match &a[0] {
            Abs::Tensor(t) => tensor_abs(t.dtype, t.shape.clone()),
            _ => Abs::Any,
        }),
        |_, a, _| all_reduce_grad(a),
        Backward::Refused("the second derivative of an all_reduce whose op is known only at run time")));
    /// `ops.all_reduce_start(x, op="mean")`: starts `all_reduce(x, op)` ("sum" or "mean"; `x`
    /// a tensor or a tuple of one dtype) and returns a handle at once; the data moves while
    /// the program computes. The schedule pass issues it as soon as `x` is computed.
    AllReduceStart = comm(PrimDef::new("AllReduceStart", "(x, op='mean')", start_abs,
        |_, a, _| all_reduce_start(a), Backward::Refused(SPLIT)))
        .called(&[Py::Op("all_reduce_start")]);
    /// `ops.all_reduce_wait(handle, x)`: the result of the all-reduce `handle` started on `x`
    /// (given again for its dtypes and shapes).
    AllReduceWait = comm(PrimDef::new("AllReduceWait", "(handle, x)", wait_abs,
        |_, a, _| all_reduce_wait(a), Backward::Refused(SPLIT)))
        .called(&[Py::Op("all_reduce_wait")]);
    /// `ops.all_gather(x, axis=0)`: every process's `x`, concatenated in rank order along
    /// `axis`.
    AllGather = comm(PrimDef::new("AllGather", "(x, axis=0)", gathered_abs,
        |_, a, _| along(a, collective::all_gather),
        Backward::First(|e, c| e.op(Prim::ReduceScatter, &[c.d, c.x[1]]))))
        .called(&[Py::Op("all_gather")]);
    /// `ops.reduce_scatter(x, axis=0)`: this process's block of the sum of every process's
    /// `x`, split along `axis` into one block per process.
    ReduceScatter = comm(PrimDef::new("ReduceScatter", "(x, axis=0)", scattered_abs,
        |_, a, _| along(a, collective::reduce_scatter),
        Backward::First(|e, c| e.op(Prim::AllGather, &[c.d, c.x[1]]))))
        .called(&[Py::Op("reduce_scatter")]);
    /// `ops.broadcast(x, root=0)`: process `root`'s `x`, on every process.
    Broadcast = comm(PrimDef::new("Broadcast", "(x, root=0)", same_abs,
        |_, a, _| along(a, collective::broadcast),
        Backward::First(|e, c| e.op(Prim::BroadcastGrad, &[c.d, c.x[1]]))))
        .called(&[Py::Op("broadcast")]);
    /// `BroadcastGrad(d, root)`: broadcast's adjoint, the sum of every process's `d` on
    /// `root` and zeros elsewhere.
    BroadcastGrad = comm(PrimDef::new("BroadcastGrad", "(d, root)", same_abs,
        |_, a, _| along(a, collective::broadcast_grad),
        Backward::First(|e, c| e.op(Prim::Broadcast, &[c.d, c.x[1]]))));
}

const SPLIT: &str =
    "the split all-reduce (start, wait) has no gradient: differentiate ops.all_reduce";

/// A collective: ordered on the communication chain, never folded at compile time.
const fn comm(def: PrimDef) -> PrimDef {
    def.with_effects(Effects::COMM).unfoldable()
}

/// A tensor of `x`'s dtype and shape, whose value (known or not when compiling) is never
/// `x`'s: it depends on the other processes.
fn same_abs(_: Prim, a: &[Abs]) -> Rule {
    match &a[0] {
        Abs::Tensor(t) => Ok(tensor_abs(t.dtype, t.shape.clone())),
        Abs::Any => Ok(Abs::Any),
        _ => Err(err("takes a tensor")),
    }
}

fn all_reduce_abs(_: Prim, a: &[Abs]) -> Rule {
    let op = match &crate::abs::to_value(&a[1]) {
        Some(Value::Str(s)) => s.clone(),
        Some(_) => return Err(err("op must be 'sum', 'mean' or 'max'")),
        // Known only at run time: the kernel checks it.
        None => return Ok(Abs::Any),
    };
    if !["sum", "mean", "max"].contains(&&*op) {
        return Err(err(format!(
            "op must be 'sum', 'mean' or 'max', not {}",
            crate::pynum::str_repr(&op)
        )));
    }
    if let Abs::Tuple(items) = &a[0] {
        if &*op == "max" {
            return Err(err("op='max' takes one tensor, not a tuple"));
        }
        let dtypes: Vec<DType> = items
            .iter()
            .map(|i| match i {
                Abs::Tensor(t) => Ok(t.dtype),
                _ => Err(err("takes a tensor or a tuple of tensors")),
            })
            .collect::<Result<_, _>>()?;
        if dtypes.windows(2).any(|w| w[0] != w[1]) {
            return Err(err("takes a tuple of tensors of one dtype"));
        }
        dtypes.first().map_or(Ok(()), |d| reducible(*d, &op))?;
        return items
            .iter()
            .map(|i| same_abs(Prim::AllReduce, std::slice::from_ref(i)))
            .collect::<Result<Vec<_>, _>>()
            .map(|v| Abs::Tuple(v.into()));
    }
    if let Abs::Tensor(t) = &a[0] {
        reducible(t.dtype, &op)?;
    }
    same_abs(Prim::AllReduce, a)
}

fn reducible(dtype: DType, op: &str) -> Result<(), crate::abs::RuleError> {
    if dtype == DType::Bool {
        return Err(err("does not take a bool tensor"));
    }
    if op == "mean" && !dtype.wide().is_float() {
        return Err(err(format!("op='mean' takes a float tensor, not {dtype}")));
    }
    Ok(())
}

/// The tensor with its `axis` dimension multiplied (`Some`) or divided (`None`) by the
/// group's size, which is known only when the program runs.
fn resized_abs(a: &[Abs]) -> Rule {
    let Abs::Tensor(t) = &a[0] else {
        return same_abs(Prim::AllGather, a);
    };
    let axis = match crate::abs::to_value(&a[1]) {
        Some(v) => int_arg(&v).map_err(|e| err(e.1))?,
        None => return Ok(tensor_abs(t.dtype, vec![None; t.shape.len()])),
    };
    if t.shape.is_empty() {
        return Err(err("takes a tensor of at least one dimension"));
    }
    let axis = normalize_axis(axis, t.shape.len())?;
    let mut shape = t.shape.clone();
    shape[axis] = None;
    Ok(tensor_abs(t.dtype, shape))
}

fn gathered_abs(_: Prim, a: &[Abs]) -> Rule {
    resized_abs(a)
}

fn scattered_abs(_: Prim, a: &[Abs]) -> Rule {
    resized_abs(a)
}

fn all_reduce(a: &[Value]) -> OpResult {
    let Value::Str(op) = &a[1] else {
        return Err(type_error("all_reduce: op must be a string"));
    };
    if let Value::Tuple(items) | Value::List(items) = &a[0] {
        let xs: Vec<Tensor> = items
            .iter()
            .map(|v| need_tensor(v, "all_reduce").cloned())
            .collect::<Result<_, _>>()?;
        let out = collective::all_reduce_many(&xs, op)?;
        return Ok(Value::tuple(out.into_iter().map(Value::Tensor).collect()));
    }
    let x = need_tensor(&a[0], "all_reduce")?;
    Ok(Value::Tensor(collective::all_reduce(x, op)?))
}

/// A collective of a tensor and one int (an axis or a root).
fn along(a: &[Value], f: fn(&Tensor, i64) -> Result<Tensor, PyErr>) -> OpResult {
    let x = need_tensor(&a[0], "a collective")?;
    Ok(Value::Tensor(f(x, int_arg(&a[1])?)?))
}

/// all_reduce's sensitivity: the same all_reduce of `d` for a sum or a mean; for a max, the
/// summed `d` split evenly between the processes whose `x` is the maximum.
fn all_reduce_back(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    let op = c.x[1];
    let known = match e.constant(op) {
        Some(Const::Str(s)) => Some(&*s == "max"),
        _ => None,
    };
    Some(c.first(e, |e| {
        let Some(max) = known else {
            return e.op(Prim::AllReduceGrad, &[c.d, c.x[0], c.out, op]);
        };
        if !max {
            return e.op(Prim::AllReduce, &[c.d, op]);
        }
        let none = e.konst(Const::None);
        let sum = e.konst(Const::str("sum"));
        let at_max = e.op(Prim::Eq, &[c.x[0], c.out]);
        let one = e.op(Prim::OnesLike, &[c.x[0], none]);
        let zero = e.op(Prim::ZerosLike, &[c.x[0], none]);
        let mask = e.op(Prim::Where, &[at_max, one, zero]);
        let holders = e.op(Prim::AllReduce, &[mask, sum]);
        let total = e.op(Prim::AllReduce, &[c.d, sum]);
        let share = e.op(Prim::Mul, &[total, mask]);
        e.op(Prim::Div, &[share, holders])
    }))
}

/// `AllReduceGrad`'s kernel: the rule of [`all_reduce_back`], chosen by the op's value.
fn all_reduce_grad(a: &[Value]) -> OpResult {
    if !matches!(&a[3], Value::Str(op) if &**op == "max") {
        return all_reduce(&[a[0].clone(), a[3].clone()]);
    }
    let [d, x, out] = [&a[0], &a[1], &a[2]].map(|v| need_tensor(v, "all_reduce's gradient"));
    let (d, x, out) = (d?, x?, out?);
    let mask = tensor(Tensor::binary(BinaryOp::Eq, x, out))?;
    let mask = tensor(mask.try_cast(d.dtype()))?;
    let holders = collective::all_reduce(&mask, "sum")?;
    let total = collective::all_reduce(d, "sum")?;
    let share = tensor(Tensor::binary(BinaryOp::Mul, &total, &mask))?;
    Ok(Value::Tensor(tensor(Tensor::binary(
        BinaryOp::Div,
        &share,
        &holders,
    ))?))
}

fn start_abs(_: Prim, a: &[Abs]) -> Rule {
    let shaped = all_reduce_abs(Prim::AllReduce, a)?;
    if matches!(&crate::abs::to_value(&a[1]), Some(Value::Str(s)) if &**s == "max") {
        return Err(err("op must be 'sum' or 'mean'"));
    }
    Ok(match shaped {
        Abs::Bottom => Abs::Bottom,
        _ => tensor_abs(DType::I64, vec![]),
    })
}

fn wait_abs(_: Prim, a: &[Abs]) -> Rule {
    match &a[1] {
        Abs::Tuple(items) => items
            .iter()
            .map(|i| same_abs(Prim::AllReduce, std::slice::from_ref(i)))
            .collect::<Result<Vec<_>, _>>()
            .map(|v| Abs::Tuple(v.into())),
        _ => same_abs(Prim::AllReduce, &a[1..]),
    }
}

/// The tensors of a tensor or a tuple (or list) of tensors.
fn tensors_of(v: &Value, what: &str) -> Result<Vec<Tensor>, PyErr> {
    match v {
        Value::Tuple(items) | Value::List(items) => items
            .iter()
            .map(|i| need_tensor(i, what).cloned())
            .collect(),
        other => Ok(vec![need_tensor(other, what)?.clone()]),
    }
}

fn all_reduce_start(a: &[Value]) -> OpResult {
    let Value::Str(op) = &a[1] else {
        return Err(type_error("all_reduce_start: op must be a string"));
    };
    let handle = collective::start_all_reduce(&tensors_of(&a[0], "all_reduce_start")?, op)?;
    Ok(Value::Tensor(tensor(Tensor::from_i64(
        vec![handle as i64],
        &[],
    ))?))
}

fn all_reduce_wait(a: &[Value]) -> OpResult {
    let handle = need_tensor(&a[0], "all_reduce_wait")?;
    let handle = match handle.item() {
        Ok(anfora_tensor::Scalar::Int(h)) if h > 0 => h as u64,
        _ => {
            return Err(type_error(
                "all_reduce_wait: the handle is the int64 all_reduce_start returned",
            ));
        }
    };
    let out = collective::finish_all_reduce(handle)?;
    Ok(match &a[1] {
        Value::Tuple(_) | Value::List(_) => {
            Value::tuple(out.into_iter().map(Value::Tensor).collect())
        }
        _ => Value::Tensor(out.into_iter().next().expect("one tensor in, one out")),
    })
}
