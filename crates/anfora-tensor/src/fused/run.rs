//! Running a prepared plan: chunk by chunk over registers, or as generated code, split over
//! threads for large outputs; and the unfused reference evaluation.

use std::mem::MaybeUninit;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::plan::{Arg, Dst, InputMode, Plan, out_of, run_inst};
use super::{Const, FusedKernel, FusedOp, ValueId, generated};
use crate::element::{AnyOut, AnyVal, Element, Val, with_storage, with_type};
use crate::elementwise::DataError;
use crate::loops::{CHUNK, as_uninit, for_parts, parallel, task_len};
use crate::parallel::for_each_part;
use crate::shape::BroadcastRead;
use crate::{DType, Result, Scalar, Storage, Tensor, alloc};

/// The chunk registers of one thread. Their starts sit at the same address modulo 4 KiB, half a
/// page away from the tensors that steps read or write: a load running ahead of a store to an
/// address that agrees with it modulo 4 KiB waits for the store, which would slow the loops
/// several times over.
struct Regs {
    bufs: Vec<Storage>,
    offsets: Vec<usize>,
}

const PAGE: usize = 4096;

impl Regs {
    /// Registers of `len` elements of `dtypes`, starting at `phase` modulo 4 KiB.
    fn new(dtypes: &[DType], len: usize, phase: usize) -> Regs {
        let mut bufs = Vec::with_capacity(dtypes.len());
        let mut offsets = Vec::with_capacity(dtypes.len());
        for &d in dtypes {
            let size = d.size_of();
            let buf =
                with_type!(d, T => T::into_storage(vec![T::from_bool(false); len + PAGE / size]));
            let addr = with_storage!(&buf, v => v.as_ptr() as usize);
            offsets.push((phase + PAGE - addr % PAGE) % PAGE / size);
            bufs.push(buf);
        }
        Regs { bufs, offsets }
    }

    fn val(&self, r: usize, len: usize) -> AnyVal<'_> {
        let o = self.offsets[r];
        with_storage!(&self.bufs[r], v => Element::any_val(Val::Slice(&v[o..o + len])))
    }

    fn typed_mut<T: Element>(&mut self, r: usize, len: usize) -> &mut [T] {
        let o = self.offsets[r];
        &mut T::vec_mut(&mut self.bufs[r]).expect("register of its dtype")[o..o + len]
    }
}

/// The start (modulo 4 KiB) for registers that is farthest from the given addresses.
fn register_phase(addrs: &[usize]) -> usize {
    (0..16)
        .map(|k| k * PAGE / 16)
        .max_by_key(|&p| {
            addrs
                .iter()
                .map(|&a| {
                    let d = (p + PAGE - a % PAGE) % PAGE;
                    d.min(PAGE - d)
                })
                .min()
                .unwrap_or(PAGE)
        })
        .expect("candidates")
}

fn gather<T: Element>(read: &BroadcastRead, src: &Storage, start: usize, dst: &mut [T]) {
    read.read(T::slice(src).expect("input of its dtype"), start, dst);
}

/// Asks for the `bytes` bytes at `addr` to be brought into the cache (for writing when
/// `write`). Only a hint: nothing is read or written.
#[inline]
fn prefetch(addr: usize, bytes: usize, write: bool) {
    #[cfg(target_arch = "x86_64")]
    for a in (addr..addr + bytes).step_by(64) {
        use std::arch::x86_64::{_MM_HINT_ET1, _MM_HINT_T1, _mm_prefetch};
        let p = a as *const i8;
        // SAFETY: a prefetch never faults, whatever the address, and has no effect on memory
        // (the addresses are within a tensor or the output anyway).
        unsafe {
            if write {
                _mm_prefetch::<_MM_HINT_ET1>(p)
            } else {
                _mm_prefetch::<_MM_HINT_T1>(p)
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (addr, bytes, write);
}

/// Runs `plan` with its generated code into `target`, split over threads for large outputs.
fn run_generated<T: Element>(
    g: &generated::Generated,
    plan: &Plan,
    inputs: &[&Tensor],
    target: Target<'_, T>,
) {
    assert_eq!(T::DTYPE, DType::F32, "generated code writes float32");
    let pool = generated::pool(&g.kernel, plan);
    let dst = match target {
        Target::Fresh(p) => p,
        Target::Reused(p) => as_uninit(p),
    };
    debug_assert_eq!(dst.len(), plan.n);
    // Per stream: the address of an input read in place, or `None` for the output itself.
    let addrs: Vec<Option<usize>> = g
        .streams
        .iter()
        .map(|s| s.map(|i| inputs[i].as_ptr_addr()))
        .collect();
    for_parts(dst, |start, part| {
        let out = part.as_mut_ptr().cast::<f32>();
        let mut streams = [std::ptr::null::<f32>(); crate::codegen::MAX_STREAMS];
        for (p, a) in streams.iter_mut().zip(&addrs) {
            *p = a.map_or(out.cast_const(), |a| (a as *const f32).wrapping_add(start));
        }
        // SAFETY: the streams are inputs read in place (their row-major data has the output's
        // n elements, `Plan`'s Full mode, of which this part reads `start..start + len`) or
        // the part itself (a reused input, each vector read before it is written); `part` is
        // a unique borrow of `len` float32 slots (T is f32). The pool comes from the kernel.
        unsafe {
            g.kernel
                .run(&pool, &streams[..addrs.len()], out, part.len())
        };
    });
}

/// Where a fused kernel writes its result.
enum Target<'a, T> {
    Fresh(&'a mut [MaybeUninit<T>]),
    Reused(&'a mut [T]),
}

impl FusedKernel {
    /// Evaluates the steps over the output positions `start..start + out.len()`.
    fn chunk(
        &self,
        plan: &Plan,
        inputs: &[&Tensor],
        regs: &mut Regs,
        start: usize,
        mut out: AnyOut,
    ) -> std::result::Result<(), DataError> {
        let len = out.len();
        // The next chunk of the inputs read in place, on its way from memory while this one
        // computes (the hardware prefetcher loses the stream between the steps).
        for (i, mode) in plan.inputs.iter().enumerate() {
            if matches!(mode, InputMode::Full) {
                with_storage!(inputs[i].data(), v => {
                    let next = &v[(start + len).min(v.len())..(start + 2 * len).min(v.len())];
                    prefetch(next.as_ptr() as usize, std::mem::size_of_val(next), false)
                });
            }
        }
        for (i, mode) in plan.inputs.iter().enumerate() {
            if let InputMode::Gather(r, read) = mode {
                let o = regs.offsets[*r];
                with_storage!(&mut regs.bufs[*r], v => {
                    gather(read, inputs[i].data(), start, &mut v[o..o + len])
                });
            }
        }
        for step in &plan.steps {
            let mut dbuf = match step.dst {
                Dst::Reg(r) => Some((
                    std::mem::replace(&mut regs.bufs[r], Storage::Bool(Vec::new())),
                    regs.offsets[r],
                )),
                Dst::Out => None,
            };
            let mut args = [Const::Bool(false).val(); 3];
            for (a, arg) in args.iter_mut().zip(&step.args[..step.n_args]) {
                *a = match *arg {
                    Arg::Input(i) => with_storage!(inputs[i].data(), v => {
                        Element::any_val(Val::Slice(&v[start..start + len]))
                    }),
                    Arg::Reg(r) => regs.val(r, len),
                    Arg::Const(c) => c.val(),
                };
            }
            let dst = match &mut dbuf {
                Some((buf, o)) => out_of(buf, *o, len),
                None => out.reborrow(),
            };
            let res = run_inst(step.kind, &args[..step.n_args], dst);
            if let (Dst::Reg(r), Some((buf, _))) = (step.dst, dbuf) {
                regs.bufs[r] = buf;
            }
            res?;
        }
        Ok(())
    }

    /// Runs the plan into `target`, split over threads for large outputs.
    fn execute<T: Element>(
        &self,
        plan: &Plan,
        inputs: &[&Tensor],
        target: Target<'_, T>,
    ) -> std::result::Result<(), DataError> {
        if let Some(g) = self.generated_for(plan) {
            run_generated(&g, plan, inputs, target);
            return Ok(());
        }
        let failed = AtomicBool::new(false);
        let reused = plan.reused_reg();
        let mut addrs: Vec<usize> = match &target {
            Target::Fresh(p) => vec![p.as_ptr() as usize],
            Target::Reused(p) => vec![p.as_ptr() as usize],
        };
        for (t, m) in inputs.iter().zip(&plan.inputs) {
            if matches!(m, InputMode::Full) {
                addrs.push(t.as_ptr_addr());
            }
        }
        let phase = register_phase(&addrs);
        let task = |start: usize, part: Target<'_, T>| {
            let len = match &part {
                Target::Fresh(p) => p.len(),
                Target::Reused(p) => p.len(),
            };
            let mut regs = Regs::new(&plan.regs, len.min(CHUNK), phase);
            match part {
                Target::Fresh(p) => {
                    let (base, n, size) = (p.as_ptr() as usize, p.len(), size_of::<T>());
                    for (k, sub) in p.chunks_mut(CHUNK).enumerate() {
                        let at = start + k * CHUNK;
                        // The next chunk of the output, on its way into the cache.
                        let next = ((k + 1) * CHUNK).min(n);
                        let end = ((k + 2) * CHUNK).min(n);
                        prefetch(base + next * size, (end - next) * size, true);
                        if failed.load(Ordering::Relaxed)
                            || self
                                .chunk(plan, inputs, &mut regs, at, T::any_out(sub))
                                .is_err()
                        {
                            failed.store(true, Ordering::Relaxed);
                            return;
                        }
                    }
                }
                Target::Reused(p) => {
                    let r = reused.expect("a reused input");
                    for (k, sub) in p.chunks_mut(CHUNK).enumerate() {
                        regs.typed_mut::<T>(r, sub.len()).copy_from_slice(sub);
                        let at = start + k * CHUNK;
                        let out = T::any_out(as_uninit(sub));
                        if self.chunk(plan, inputs, &mut regs, at, out).is_err() {
                            failed.store(true, Ordering::Relaxed);
                            return;
                        }
                    }
                }
            }
        };
        if parallel(plan.n) {
            let len = task_len(plan.n);
            match target {
                Target::Fresh(p) => for_each_part(p, len, |i, c| task(i * len, Target::Fresh(c))),
                Target::Reused(p) => for_each_part(p, len, |i, c| task(i * len, Target::Reused(c))),
            }
        } else {
            task(0, target);
        }
        if failed.into_inner() {
            Err(DataError)
        } else {
            Ok(())
        }
    }

    /// The generated code for plans like `plan`, compiled at the first one; `None` when
    /// generated code is off or does not cover the plan.
    fn generated_for(&self, plan: &Plan) -> Option<Arc<generated::Generated>> {
        if !crate::codegen::enabled() {
            return None;
        }
        let key = generated::key(plan)?;
        let mut cache = self
            .generated
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, g)) = cache.iter().find(|(k, _)| *k == key) {
            return g.clone();
        }
        let g = generated::lower(plan, &self.input_dtypes, self.output_dtype()).map(Arc::new);
        cache.push((key, g.clone()));
        g
    }

    /// Whether `run` evaluates these inputs with generated code (one loop over the whole
    /// program) rather than op by op in chunks. For tests and benchmarks.
    #[doc(hidden)]
    pub fn uses_generated_code(&self, inputs: &[&Tensor]) -> bool {
        self.check_inputs(inputs).is_ok()
            && self
                .shapes(inputs)
                .and_then(|shapes| self.plan(inputs, &shapes, None))
                .is_some_and(|plan| self.generated_for(&plan).is_some())
    }

    /// Broadcasts the inputs to their common shape (numpy rules, same errors as
    /// `Tensor::binary`) and evaluates the program in one pass over memory, in chunks that fit in
    /// L1/L2, with no full-size temporaries, vectorized, and split over threads (rayon) above a
    /// size threshold. Allocates the output through the crate's fallible allocator.
    ///
    /// The result, or the error, is exactly [`FusedKernel::run_unfused`]'s.
    pub fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        self.check_inputs(inputs)?;
        let Some(shapes) = self.shapes(inputs) else {
            return self.run_unfused(inputs);
        };
        let Some(plan) = self.plan(inputs, &shapes, None) else {
            return self.run_unfused(inputs);
        };
        with_type!(self.output_dtype(), T => {
            let (mut v, n) = alloc::try_vec_capped::<T>(&plan.shape, alloc::cap())?;
            let target = Target::Fresh(&mut v.spare_capacity_mut()[..n]);
            if self.execute(&plan, inputs, target).is_err() {
                return self.run_unfused(inputs);
            }
            // SAFETY: `execute` succeeded, so every chunk ran its steps, exactly one of which
            // writes the whole chunk of the output; the chunks cover the `n` elements.
            unsafe { v.set_len(n) };
            Ok(Tensor::from_storage(T::into_storage(v), plan.shape))
        })
    }

    /// Like [`FusedKernel::run`], but may write the result into the buffer of an input passed
    /// by value when that input is uniquely owned and has the output's shape and dtype (not when
    /// the program can raise a zero division or negative power, whose check needs the inputs
    /// intact).
    pub fn run_owned(&self, mut inputs: Vec<Tensor>) -> Result<Tensor> {
        let refs: Vec<&Tensor> = inputs.iter().collect();
        self.check_inputs(&refs)?;
        let Some(shapes) = self.shapes(&refs) else {
            return self.run_unfused(&refs);
        };
        let out = shapes.last().expect("at least one value");
        let dtype = self.output_dtype();
        let candidate = (!self.may_raise)
            .then(|| {
                (0..refs.len()).find(|&i| refs[i].dtype() == dtype && refs[i].shape() == &out[..])
            })
            .flatten();
        drop(refs);
        let Some(i) = candidate.filter(|&i| inputs[i].storage_mut().is_some()) else {
            return self.run(&inputs.iter().collect::<Vec<_>>());
        };
        let refs: Vec<&Tensor> = inputs.iter().collect();
        let Some(plan) = self.plan(&refs, &shapes, Some(i)) else {
            return self.run_unfused(&refs);
        };
        drop(refs);
        with_type!(dtype, T => {
            let storage = inputs[i].storage_mut().expect("checked unique");
            let mut v = std::mem::take(T::vec_mut(storage).expect("input of the output dtype"));
            let refs: Vec<&Tensor> = inputs.iter().collect();
            self.execute(&plan, &refs, Target::Reused(&mut v))
                .expect("a program that cannot raise");
            Ok(Tensor::from_storage(T::into_storage(v), plan.shape))
        })
    }

    /// The reference semantics: the ops evaluated one by one with `Tensor::binary`,
    /// `binary_scalar`, `unary`, `try_cast` and `where_`. Intermediates are dropped after their
    /// last use.
    pub fn run_unfused(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        self.check_inputs(inputs)?;
        #[derive(Clone)]
        enum Value {
            Tensor(Tensor),
            Scalar(Scalar),
        }
        let n_in = inputs.len();
        let n_values = n_in + self.ops.len();
        let mut last_use = vec![0usize; n_values];
        for (k, op) in self.ops.iter().enumerate() {
            let used: Vec<ValueId> = match *op {
                FusedOp::Scalar(_) => vec![],
                FusedOp::Unary(_, a) | FusedOp::Cast(_, a) => vec![a],
                FusedOp::Binary(_, a, b) => vec![a, b],
                FusedOp::Where(c, x, y) => vec![c, x, y],
            };
            for u in used {
                last_use[u as usize] = n_in + k;
            }
        }
        let mut values: Vec<Option<Value>> = inputs
            .iter()
            .map(|t| Some(Value::Tensor((*t).clone())))
            .collect();
        for (k, op) in self.ops.iter().enumerate() {
            let id = n_in + k;
            let get = |values: &[Option<Value>], v: ValueId| {
                values[v as usize].clone().expect("live value")
            };
            let tensor = |values: &[Option<Value>], v: ValueId| match get(values, v) {
                Value::Tensor(t) => t,
                Value::Scalar(_) => unreachable!("checked by new"),
            };
            let value = match *op {
                FusedOp::Scalar(s) => Value::Scalar(s),
                FusedOp::Unary(u, a) => Value::Tensor(Tensor::unary(u, &tensor(&values, a))?),
                FusedOp::Cast(d, a) => Value::Tensor(tensor(&values, a).try_cast(d)?),
                FusedOp::Binary(b, x, y) => {
                    Value::Tensor(match (get(&values, x), get(&values, y)) {
                        (Value::Tensor(x), Value::Tensor(y)) => Tensor::binary(b, &x, &y)?,
                        (Value::Tensor(x), Value::Scalar(y)) => {
                            Tensor::binary_scalar(b, &x, y, false)?
                        }
                        (Value::Scalar(x), Value::Tensor(y)) => {
                            Tensor::binary_scalar(b, &y, x, true)?
                        }
                        (Value::Scalar(_), Value::Scalar(_)) => unreachable!("checked by new"),
                    })
                }
                FusedOp::Where(c, x, y) => Value::Tensor(Tensor::where_(
                    &tensor(&values, c),
                    &tensor(&values, x),
                    &tensor(&values, y),
                )?),
            };
            values.push(Some(value));
            for v in 0..id {
                if last_use[v] == id {
                    values[v] = None;
                }
            }
        }
        match values.pop().flatten() {
            Some(Value::Tensor(t)) => Ok(t),
            _ => unreachable!("the output is a tensor"),
        }
    }
}
