//! Optimizer updates, in place on their Parameters: `sgd`, `apply_momentum` and `adam`, and
//! the kernels that write an SGD step into the Parameter's own buffer.

use std::sync::{Arc, Mutex, PoisonError};

use anfora_tensor::fused::{FusedKernel, FusedOp};
use anfora_tensor::{BinaryOp, DType, Scalar, Tensor};

use crate::abs::{Abs, Rule};
use crate::def::{Backward, Kernels, PrimDef, Py, primitives};
use crate::param::ParamRef;
use crate::prim::Prim;
use crate::pynum::{PyErr, tensor_err};
use crate::python::{binary, truth};
use crate::state::{check_update, current, param_arg, store, written_abs};
use crate::value::{OpResult, Value};

primitives! {
    family optim = 12;

    /// `ops.sgd(param, grad, lr)`: `param -= lr * grad`; written into the Parameter's own
    /// buffer when it is free.
    Sgd = PrimDef::new("SGD", "(param, grad, lr)", sgd_abs, |_, a, _| sgd(a), Backward::Zero)
        .writing(1).called(&[Py::Op("sgd")]).with_kernels(Kernels::Update(|_, a, _| sgd_owned(a)));
    ApplyMomentum = PrimDef::new("ApplyMomentum",
        "(variable, accumulation, learning_rate, gradient, momentum, use_nesterov=False)",
        written_abs, |_, a, _| apply_momentum(a), Backward::Zero)
        .writing(2).called(&[Py::Op("apply_momentum")]);
    Adam = PrimDef::new("Adam",
        "(param, m, v, grad, step, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-08)", written_abs,
        |_, a, _| adam(a), Backward::Zero)
        .writing(3).called(&[Py::Op("adam")]);
}

fn sgd_abs(p: Prim, args: &[Abs]) -> Rule {
    let r = written_abs(p, args)?;
    if let Abs::Ref(param) = &args[0] {
        let step = Prim::Mul.infer(&[args[2].clone(), args[1].clone()])?;
        check_update(param, &Prim::Sub.infer(&[param.value(), step])?)?;
    }
    Ok(r)
}

/// `param -= lr * grad`, computed as user code would.
fn sgd(args: &[Value]) -> OpResult {
    let func = "ops.sgd";
    let first = param_arg(&args[0], func, "first")?;
    let step = binary(Prim::Mul, &args[2], &args[1])?;
    step_down(first, &step, func)
}

fn apply_momentum(args: &[Value]) -> OpResult {
    let func = "ops.apply_momentum";
    let first = param_arg(&args[0], func, "first")?;
    let accum = param_arg(&args[1], func, "second")?;
    let (lr, grad, momentum) = (&args[2], &args[3], &args[4]);
    // accum = accum * momentum + grad
    let acc = binary(
        Prim::Add,
        &binary(Prim::Mul, &current(accum), momentum)?,
        grad,
    )?;
    store(accum, acc.clone(), func)?;
    let acc = current(accum);
    let delta = if truth(&args[5])? {
        // Nesterov: var -= grad * lr + accum * momentum * lr
        binary(
            Prim::Add,
            &binary(Prim::Mul, grad, lr)?,
            &binary(Prim::Mul, &binary(Prim::Mul, &acc, momentum)?, lr)?,
        )?
    } else {
        binary(Prim::Mul, &acc, lr)?
    };
    step_down(first, &delta, func)
}

fn adam(args: &[Value]) -> OpResult {
    let func = "ops.adam";
    let first = param_arg(&args[0], func, "first")?;
    let m = param_arg(&args[1], func, "second")?;
    let v = param_arg(&args[2], func, "third")?;
    let (grad, step, lr, beta1, beta2, eps) =
        (&args[3], &args[4], &args[5], &args[6], &args[7], &args[8]);
    let one_minus = |b: &Value| binary(Prim::Sub, &Value::Float(1.0), b);
    // m = beta1 * m + (1 - beta1) * grad
    let m_new = binary(
        Prim::Add,
        &binary(Prim::Mul, beta1, &current(m))?,
        &binary(Prim::Mul, &one_minus(beta1)?, grad)?,
    )?;
    store(m, m_new, func)?;
    // v = beta2 * v + (1 - beta2) * grad^2
    let v_new = binary(
        Prim::Add,
        &binary(Prim::Mul, beta2, &current(v))?,
        &binary(
            Prim::Mul,
            &one_minus(beta2)?,
            &binary(Prim::Mul, grad, grad)?,
        )?,
    )?;
    store(v, v_new, func)?;
    // Bias correction with the 1-based step count.
    let c1 = one_minus(&binary(Prim::Pow, beta1, step)?)?;
    let c2 = one_minus(&binary(Prim::Pow, beta2, step)?)?;
    let m_hat = binary(Prim::Div, &current(m), &c1)?;
    let v_hat = binary(Prim::Div, &current(v), &c2)?;
    let denom = binary(Prim::Add, &Prim::Sqrt.eval(&[v_hat])?, eps)?;
    let delta = binary(Prim::Mul, lr, &binary(Prim::Div, &m_hat, &denom)?)?;
    step_down(first, &delta, func)
}

/// `param -= delta`, as user code would compute it; returns the Parameter.
fn step_down(param: &ParamRef, delta: &Value, func: &str) -> OpResult {
    let new = binary(Prim::Sub, &current(param), delta)?;
    store(param, new, func)?;
    Ok(Value::Ref(param.clone()))
}

/// `ops.sgd(param, grad, lr)` with its operands owned, for the compiled engine: when the
/// Parameter's value is free (the usual case inside a training step, where the step's reads of
/// it are dead by then), `param - lr * grad` is computed in one pass over memory into its own
/// buffer, so a step allocates nothing for its updates and reads the gradient once. The values
/// are those of [`update`] (a fused kernel gives the bits of the unfused ops: `lr * grad` rounded
/// to the dtype, then the subtraction), which it falls back to for anything but a float
/// gradient of the Parameter's shape and dtype and a Python number as learning rate.
pub fn sgd_owned(args: &mut [Value]) -> OpResult {
    // A trailing monad, when the program threads one, is not an operand.
    let [Value::Ref(param), Value::Tensor(grad), lr, ..] = args else {
        return sgd(args);
    };
    let dtype = param.dtype();
    let Some(rate) = learning_rate(lr) else {
        return sgd(args);
    };
    if !matches!(dtype, DType::F32 | DType::F64)
        || grad.dtype() != dtype
        || grad.shape() != param.shape()
    {
        return sgd(args);
    }
    let kernel = sgd_kernel(dtype, rate)?;
    let param = param.clone();
    // The update runs with the Parameter locked, so a reader on another thread (the program
    // runs without the GIL) waits for the new value instead of seeing the buffer mid-update.
    let done = param.with_value_mut(|value| {
        if !value.is_unique() {
            return Ok(false);
        }
        let Ok(grad) = std::mem::replace(&mut args[1], Value::None).into_tensor() else {
            unreachable!("matched a tensor above")
        };
        // The program cannot raise, and the value is a free buffer of the result's shape and
        // dtype: it is written in place.
        let old = std::mem::replace(value, Tensor::zeros(&[0], dtype).map_err(tensor_err)?);
        *value = kernel.run_owned(vec![old, grad]).map_err(tensor_err)?;
        Ok(true)
    })?;
    if !done {
        return sgd(args);
    }
    Ok(Value::Ref(param))
}

/// `ops.sgd(param, gemm(a, b, None, ta, tb), lr)` as one kernel, for the compiled engine when
/// the product's only use is the update right after it: `sgd_args` are the update's operands
/// with the gradient not yet computed, `gemm_args` the product's. The values are those of
/// [`crate::ops`]'s `gemm` followed by [`sgd_owned`] ([`Tensor::sgd_product`]). `None`, with
/// nothing changed, where that kernel does not apply (a Parameter whose value is shared, a
/// learning rate that is a tensor, operands that are not a large float product of the
/// Parameter's shape and dtype): the caller then runs the two ops as written.
pub fn sgd_product(sgd_args: &[Value], gemm_args: &[Value]) -> Option<OpResult> {
    let [Value::Ref(param), _, lr, ..] = sgd_args else {
        return None;
    };
    let [
        Value::Tensor(a),
        Value::Tensor(b),
        Value::None,
        Value::Bool(ta),
        Value::Bool(tb),
    ] = gemm_args
    else {
        return None;
    };
    let rate = learning_rate(lr)?;
    // As in `sgd_owned`, the update runs with the Parameter locked; the kernel itself leaves a
    // value that is not uniquely owned alone.
    let done = param.with_value_mut(|value| value.sgd_product(a, b, *ta, *tb, rate));
    match done {
        Ok(true) => Some(Ok(Value::Ref(param.clone()))),
        Ok(false) => None,
        Err(e) => Some(Err(tensor_err(e))),
    }
}

/// The learning rate of the fused SGD kernels: a Python number (a tensor, even one-element,
/// takes the general `update`).
fn learning_rate(lr: &Value) -> Option<Scalar> {
    lr.as_scalar().filter(|_| !matches!(lr, Value::Tensor(_)))
}

/// The fused kernel of `param - rate * grad` for `dtype`, kept for the next steps: a kernel
/// keeps its generated code, which is compiled at its first run. A few recent (dtype, rate)
/// pairs are kept (a schedule that changes the rate every step rebuilds it each time).
fn sgd_kernel(dtype: DType, rate: Scalar) -> Result<Arc<FusedKernel>, PyErr> {
    const KEPT: usize = 8;
    static KERNELS: Mutex<Vec<(DType, Scalar, Arc<FusedKernel>)>> = Mutex::new(Vec::new());
    let mut kernels = KERNELS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(k) = kernels
        .iter()
        .position(|(d, r, _)| *d == dtype && *r == rate)
    {
        let entry = kernels.remove(k);
        let kernel = entry.2.clone();
        kernels.push(entry);
        return Ok(kernel);
    }
    // Values: 0 the Parameter, 1 the gradient, 2 the rate (a weak operand, so the step keeps the
    // float dtype), 3 `lr * grad`, 4 the result.
    let ops = vec![
        FusedOp::Scalar(rate),
        FusedOp::Binary(BinaryOp::Mul, 2, 1),
        FusedOp::Binary(BinaryOp::Sub, 0, 3),
    ];
    let kernel = Arc::new(FusedKernel::new(&[dtype, dtype], ops).map_err(tensor_err)?);
    if kernels.len() == KEPT {
        kernels.remove(0);
    }
    kernels.push((dtype, rate, kernel.clone()));
    Ok(kernel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Monad, ParamRef};

    fn f32s(v: &[f32], shape: &[usize]) -> Tensor {
        Tensor::from_f32(v.to_vec(), shape).unwrap()
    }

    /// Runs `ops.sgd` both ways on fresh Parameters holding `value` and returns the results
    /// (`Ok` with the new value, or the error text).
    fn both(value: &Tensor, grad: &Tensor, lr: Value) -> [Result<Tensor, String>; 2] {
        let run = |owned: bool| {
            let p = ParamRef::new(Some("w"), value.clone().contiguous(), true);
            let mut args = vec![
                Value::Ref(p.clone()),
                Value::Tensor(grad.clone()),
                lr.clone(),
                Value::Monad(Monad::U),
            ];
            let r = if owned {
                sgd_owned(&mut args)
            } else {
                sgd(&args)
            };
            r.map(|_| p.get()).map_err(|(k, m)| format!("{k}: {m}"))
        };
        [run(true), run(false)]
    }

    #[test]
    fn owned_sgd_gives_the_values_of_the_reference_update() {
        let w = f32s(&[1.0, -2.5, 3.25, 0.1, 1e-8, -7.0], &[2, 3]);
        let g = f32s(&[0.3, 0.7, -1.1, 2.0, 1e-3, 0.0], &[2, 3]);
        let cases: Vec<(Tensor, Tensor, Value)> = vec![
            (w.clone(), g.clone(), Value::Float(0.1)),
            (w.clone(), g.clone(), Value::Int(2)),
            (w.clone(), g.clone(), Value::Bool(true)),
            (w.cast(DType::F64), g.cast(DType::F64), Value::Float(0.1)),
            // Fallbacks: a broadcast gradient, a 0-d float64 rate, another dtype, ints.
            (w.clone(), f32s(&[1.0, 2.0, 3.0], &[3]), Value::Float(0.5)),
            (
                w.clone(),
                g.clone(),
                Value::Tensor(Tensor::from_f64(vec![0.1], &[]).unwrap()),
            ),
            (w.clone(), g.cast(DType::F64), Value::Float(0.1)),
            (w.cast(DType::I64), g.cast(DType::I64), Value::Int(1)),
            (w.cast(DType::I64), g.cast(DType::I64), Value::Float(0.5)),
            (w.clone(), f32s(&[1.0, 2.0], &[2]), Value::Float(0.5)),
            (w.clone(), g.clone(), Value::str("fast")),
        ];
        for (value, grad, lr) in cases {
            let [owned, reference] = both(&value, &grad, lr.clone());
            match (&owned, &reference) {
                (Ok(a), Ok(b)) => assert!(a.same_as(b), "{lr:?}: {} vs {}", a.repr(), b.repr()),
                (Err(a), Err(b)) => assert_eq!(a, b, "{lr:?}"),
                (a, b) => panic!("{lr:?}: {:?} vs {:?}", a.as_ref().err(), b.as_ref().err()),
            }
        }
        // The float32 case computes lr * g in float32, then subtracts (two roundings).
        let [Ok(got), _] = both(&w, &g, Value::Float(0.1)) else {
            panic!()
        };
        let want: Vec<f32> = w
            .as_f32_slice()
            .unwrap()
            .iter()
            .zip(g.as_f32_slice().unwrap())
            .map(|(&w, &g)| w - 0.1f32 * g)
            .collect();
        assert_eq!(got.as_f32_slice().unwrap(), &want[..]);
    }

    /// A reader on another thread never sees the Parameter mid-update: every value it reads
    /// has the Parameter's shape and is one of the values the updates produce.
    #[test]
    fn readers_on_other_threads_see_whole_values() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let p = ParamRef::new(Some("w"), Tensor::zeros(&[1024], DType::F32).unwrap(), true);
        let (stop, reads) = (AtomicBool::new(false), AtomicUsize::new(0));
        let mut updates = 0;
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let v = p.get();
                    assert_eq!(v.shape(), &[1024]);
                    let first = v.as_f32_slice().unwrap()[0];
                    assert!(v.as_f32_slice().unwrap().iter().all(|&x| x == first));
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            });
            // At least 2,000 updates, and on until the reader has read 100 times (on a loaded
            // machine it may start late), within a bound.
            while (updates < 2000 || reads.load(Ordering::Relaxed) < 100) && updates < 10_000_000 {
                let g = Tensor::ones(&[1024], DType::F32).unwrap();
                let mut args = [Value::Ref(p.clone()), Value::Tensor(g), Value::Float(1.0)];
                sgd_owned(&mut args).unwrap();
                updates += 1;
            }
            stop.store(true, Ordering::Relaxed);
        });
        assert!(reads.load(Ordering::Relaxed) >= 100);
        assert_eq!(p.get().as_f32_slice().unwrap()[0], -(updates as f32));
    }

    #[test]
    fn owned_sgd_writes_into_free_buffers_only() {
        let w = f32s(&[1.0, 2.0, 3.0, 4.0], &[4]);
        let g = f32s(&[1.0, 1.0, 1.0, 1.0], &[4]);
        let p = ParamRef::new(Some("w"), w, true);
        let before = p.get().as_f32_slice().unwrap().as_ptr();
        let mut args = [
            Value::Ref(p.clone()),
            Value::Tensor(g.clone()),
            Value::Float(0.5),
        ];
        sgd_owned(&mut args).unwrap();
        let now = p.get();
        assert_eq!(now.as_f32_slice().unwrap(), &[0.5, 1.5, 2.5, 3.5]);
        assert_eq!(
            now.as_f32_slice().unwrap().as_ptr(),
            before,
            "updated in place"
        );
        // A value someone still holds (a read of the Parameter) keeps its elements.
        let held = p.get();
        let mut args = [
            Value::Ref(p.clone()),
            Value::Tensor(g.clone()),
            Value::Float(0.5),
        ];
        sgd_owned(&mut args).unwrap();
        assert_eq!(held.as_f32_slice().unwrap(), &[0.5, 1.5, 2.5, 3.5]);
        assert_eq!(p.get().as_f32_slice().unwrap(), &[0.0, 1.0, 2.0, 3.0]);
        // The caller's gradient (shared) is not overwritten by the step.
        assert_eq!(g.as_f32_slice().unwrap(), &[1.0; 4]);
    }

    #[test]
    fn sgd_kernels_are_kept_per_dtype_and_rate() {
        let a = sgd_kernel(DType::F32, Scalar::Float(0.125)).unwrap();
        let b = sgd_kernel(DType::F32, Scalar::Float(0.125)).unwrap();
        assert!(
            Arc::ptr_eq(&a, &b),
            "the same kernel (and its generated code) again"
        );
        let c = sgd_kernel(DType::F64, Scalar::Float(0.125)).unwrap();
        let d = sgd_kernel(DType::F32, Scalar::Float(0.25)).unwrap();
        assert!(!Arc::ptr_eq(&a, &c) && !Arc::ptr_eq(&a, &d));
        assert_eq!(c.output_dtype(), DType::F64);
        // The bound: after more pairs than are kept, the first is rebuilt.
        for k in 0..20 {
            sgd_kernel(DType::F32, Scalar::Int(k)).unwrap();
        }
        let e = sgd_kernel(DType::F32, Scalar::Float(0.125)).unwrap();
        assert!(!Arc::ptr_eq(&a, &e));
    }
}
