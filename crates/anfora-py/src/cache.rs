//! What a compiled function keeps: its compiled signatures per thread, and running one.

use std::cell::RefCell;
use std::rc::Rc;

use anfora_driver::Arg;
use anfora_ir::Options;
use anfora_ops::Abs;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::compiler::{Entry, with_compiler};
use anfora_ops::Value;

use crate::tensor::{ArrayTensor, from_value, py_error, to_value};

/// The compiled signatures of one function, or of one of its gradients, per Python thread:
/// at most `MAX_SIGNATURES` each, the oldest dropped first.
///
/// Compiled programs share `Rc`s with the compiler of the thread that made them (a
/// thread-local), so each thread compiles and keeps its own entries, and only that thread
/// ever touches them; a function called from several threads compiles once in each.
#[derive(Default)]
// Boxed: `local` hands out references that must not move when the vector grows.
#[allow(clippy::vec_box)]
pub(crate) struct Cache(std::sync::Mutex<Vec<Box<ThreadEntries>>>);

/// One thread's entries, touched only by that thread (see [`Cache`]).
struct ThreadEntries {
    thread: std::thread::ThreadId,
    entries: std::mem::ManuallyDrop<RefCell<Vec<Rc<Entry>>>>,
}

// SAFETY: the entries are reached only from their own thread (`Cache::local`) and, when the
// cache is dropped on another thread, leaked instead of dropped (`Drop` below).
unsafe impl Send for ThreadEntries {}
unsafe impl Sync for ThreadEntries {}

impl Drop for ThreadEntries {
    fn drop(&mut self) {
        if std::thread::current().id() == self.thread {
            // SAFETY: dropped once, here, on the owning thread.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.entries) };
        }
        // Otherwise leaked: their `Rc`s may be shared with that thread's compiler.
    }
}

impl Cache {
    /// This thread's entries.
    fn local(&self) -> &RefCell<Vec<Rc<Entry>>> {
        let me = std::thread::current().id();
        let mut threads = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let i = match threads.iter().position(|t| t.thread == me) {
            Some(i) => i,
            None => {
                threads.push(Box::new(ThreadEntries {
                    thread: me,
                    entries: Default::default(),
                }));
                threads.len() - 1
            }
        };
        let ptr: *const RefCell<Vec<Rc<Entry>>> = &*threads[i].entries;
        // SAFETY: boxes are never removed before the cache is dropped and do not move when
        // the vector grows, and only this thread uses its entries.
        unsafe { &*ptr }
    }

    /// The entry for these arguments compiled for the current device (`writing`: for a
    /// call with numpy arrays the function may update in place).
    pub(crate) fn get(&self, args: &[Arg], weights: &[u64], writing: bool) -> Option<Rc<Entry>> {
        let device = anfora_ops::kernels::default_device();
        (self.local().borrow().iter())
            .find(|e| {
                e.weights == weights
                    // One compiled for arrays to update that updates none serves all calls.
                    && (e.writing == writing || (e.writing && e.writes.is_none()))
                    && e.device() == device
                    && fits(&e.key, args)
            })
            .cloned()
    }

    /// The entry compiled last.
    pub(crate) fn last(&self) -> Option<Rc<Entry>> {
        self.local().borrow().last().cloned()
    }

    pub(crate) fn insert(&self, entry: Entry) -> Rc<Entry> {
        let entry = Rc::new(entry);
        let mut entries = self.local().borrow_mut();
        if entries.len() >= MAX_SIGNATURES {
            entries.remove(0);
        }
        entries.push(entry.clone());
        entry
    }

    pub(crate) fn len(&self) -> usize {
        self.local().borrow().len()
    }
}

/// Most signatures kept per function; the least recently compiled is dropped beyond.
pub(crate) const MAX_SIGNATURES: usize = 16;

pub(crate) fn args_of(args: &Bound<'_, PyTuple>) -> PyResult<Vec<Arg>> {
    args.iter().map(|a| to_arg(&a)).collect()
}

pub(crate) fn to_arg(a: &Bound<'_, PyAny>) -> PyResult<Arg> {
    if let Ok(m) = a.cast::<crate::Mutable>() {
        return Ok(Arg::mutable(to_value(m.get().value.bind(a.py()))?));
    }
    Ok(Arg::from(to_value(a)?))
}

/// Whether `args` have the signature `key` was compiled for.
pub(crate) fn fits(key: &[Abs], args: &[Arg]) -> bool {
    key.len() == args.len() && key.iter().zip(args).all(|(k, a)| a.has_abstract(k))
}

/// Writes what compiled code printed to Python's `sys.stdout` (so capture works).
pub(crate) fn flush_output(py: Python<'_>, out: &[u8]) -> PyResult<()> {
    if out.is_empty() {
        return Ok(());
    }
    let stdout = py.import("sys")?.getattr("stdout")?;
    stdout.call_method1("write", (String::from_utf8_lossy(out),))?;
    Ok(())
}

/// A computation that touches no Python object, run with the GIL released (and its result).
///
/// `Python::detach` asks for `Send` (its stand-in for "holds nothing of Python's") while
/// compiled programs share `Rc`s. The closure runs on this same thread before `detach`
/// returns, and the `Rc`s it reaches belong to this thread's compiler and to this thread's
/// entries of the function's cache (each thread compiles its own; see [`Cache`]), so no `Rc`
/// is touched from two threads.
struct NotPython<F>(F);

// SAFETY: see above: the value never leaves the calling thread.
unsafe impl<F> Send for NotPython<F> {}

impl<R, F: FnOnce() -> R> NotPython<F> {
    fn run(self) -> R {
        (self.0)()
    }
}

/// Runs a compiled program and converts its result (or its exception) for Python.
pub(crate) fn run<'py>(
    py: Python<'py>,
    entry: &Entry,
    args: Vec<Arg>,
) -> PyResult<Bound<'py, PyAny>> {
    from_value(py, &call(py, entry, args)?)
}

/// Runs an entry that returns the updated objects of the arguments at `positions` (its
/// [`Entry::writes`]) for the Python arguments `given` (bound, one per parameter): the numpy
/// and anfora arrays among those get the updated values, as numpy's in-place operations would
/// have left them.
pub(crate) fn run_writing<'py>(
    py: Python<'py>,
    entry: &Entry,
    positions: &[usize],
    args: Vec<Arg>,
    given: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    // `(value, objects)`, as `ssa/write_back.rs` has such a function return.
    let (value, objects) = pair(call(py, entry, args)?)?;
    write_objects(py, positions, objects, given)?;
    from_value(py, &value)
}

/// Runs the gradient of a function that writes its arguments back, compiled with the objects
/// as its aux: `(grads, objects)`, or `((value, objects), grads)` with `with_value`. The
/// objects go into `given` (as [`run_writing`]); the result is what the gradient of a
/// function writing nothing returns: `grads`, or `(value, grads)`.
pub(crate) fn run_writing_gradient<'py>(
    py: Python<'py>,
    entry: &Entry,
    positions: &[usize],
    args: Vec<Arg>,
    given: &Bound<'py, PyTuple>,
    with_value: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let result = call(py, entry, args)?;
    let (out, objects) = if with_value {
        let (inner, grads) = pair(result)?;
        let (value, objects) = pair(inner)?;
        (Value::tuple(vec![value, grads]), objects)
    } else {
        pair(result)?
    };
    write_objects(py, positions, objects, given)?;
    from_value(py, &out)
}

/// The two items of a pair.
fn pair(v: Value) -> PyResult<(Value, Value)> {
    match &v {
        Value::Tuple(items) if items.len() == 2 => Ok((items[0].clone(), items[1].clone())),
        _ => Err(no_pair()),
    }
}

/// Writes each updated object into the Python argument at its position among `given`: numpy
/// arrays get `np.copyto`, anfora arrays their new value; numbers were only rebound.
fn write_objects(
    py: Python<'_>,
    positions: &[usize],
    objects: Value,
    given: &Bound<'_, PyTuple>,
) -> PyResult<()> {
    let objects = match &objects {
        Value::Tuple(objects) if objects.len() == positions.len() => objects,
        _ => return Err(no_pair()),
    };
    let numpy = py.import("numpy")?;
    for (&p, object) in positions.iter().zip(objects.iter()) {
        let arg = given.get_item(p)?;
        if arg.cast::<numpy::PyUntypedArray>().is_ok() {
            numpy.call_method1("copyto", (&arg, from_value(py, object)?))?;
        } else if let (Ok(t), Value::Tensor(new)) = (arg.cast::<ArrayTensor>(), object) {
            t.as_super().get().cell.write(new.clone())?;
        }
    }
    Ok(())
}

fn no_pair() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(
        "a function writing its arguments back returned no (value, objects) pair",
    )
}

/// Calls an entry's program with `args` (the GIL released while it runs).
fn call(py: Python<'_>, entry: &Entry, args: Vec<Arg>) -> PyResult<Value> {
    let values: Vec<Value> = args.into_iter().map(|a| a.value).collect();
    let program = (entry.compiled)
        .program
        .as_ref()
        .expect("compiled entries are lowered");
    let mut out = Vec::new();
    // Other Python threads run while the program does (it never touches Python objects:
    // printed text is buffered and written afterwards).
    let work = NotPython(|| program.call(values, &mut out, &Options::default()));
    let result = py.detach(move || NotPython(work.run())).0;
    flush_output(py, &out)?;
    match result {
        Ok(v) => Ok(v),
        Err(e) => {
            let err = py_error(&e.kind, e.message.clone());
            let trace = with_compiler(|c| e.render(c.sources(entry.generation)));
            let _ = err.value(py).call_method1("add_note", (trace,));
            Err(err)
        }
    }
}
