//! The C API (`include/anfora_runtime.h`, generated from this file by cbindgen).
//!
//! Every function that can fail returns an `AnforaStatus*`: `NULL` on success, otherwise a
//! status the caller reads (`anfora_status_code`, `anfora_status_message`) and frees. No
//! error state is kept anywhere else, so threads never see each other's errors. A model may
//! be run from several threads at once. Nothing panics across the boundary: a panic inside
//! becomes `ANFORA_INTERNAL`.

// The C names are the header's: `ANFORA_OK`, not `AnforaOk`.
#![allow(non_camel_case_types)]

use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use anfora_model::types::{dtype_code, dtype_of};
use anfora_tensor::{DType, Tensor};

use crate::{Error, LoadOptions, Model};

#[cfg(not(target_endian = "little"))]
compile_error!("the C API copies tensors as little-endian bytes");

/// What went wrong.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnforaCode {
    ANFORA_OK = 0,
    /// An argument was NULL, out of range, or a tensor of the wrong dtype, shape or size.
    ANFORA_INVALID_ARGUMENT = 1,
    /// The model file was refused (malformed, unsupported version, inconsistent).
    ANFORA_INVALID_MODEL = 2,
    /// A file could not be read or written.
    ANFORA_IO_ERROR = 3,
    /// The program raised a Python exception; the message is its traceback.
    ANFORA_RAISED = 4,
    /// Memory or a configured cap was exhausted.
    ANFORA_OUT_OF_MEMORY = 5,
    /// A bug in anfora.
    ANFORA_INTERNAL = 6,
    /// A run went past the model's time limit (`anfora_model_set_timeout`).
    ANFORA_TIMEOUT = 7,
}

/// Element types, with the codes of the model file.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnforaDType {
    ANFORA_BOOL = 1,
    ANFORA_INT32 = 2,
    ANFORA_INT64 = 3,
    ANFORA_FLOAT32 = 4,
    ANFORA_FLOAT64 = 5,
    ANFORA_FLOAT16 = 6,
    ANFORA_BFLOAT16 = 7,
    ANFORA_INT8 = 8,
    ANFORA_UINT8 = 9,
}

const DTYPES: [AnforaDType; 9] = [
    AnforaDType::ANFORA_BOOL,
    AnforaDType::ANFORA_INT32,
    AnforaDType::ANFORA_INT64,
    AnforaDType::ANFORA_FLOAT32,
    AnforaDType::ANFORA_FLOAT64,
    AnforaDType::ANFORA_FLOAT16,
    AnforaDType::ANFORA_BFLOAT16,
    AnforaDType::ANFORA_INT8,
    AnforaDType::ANFORA_UINT8,
];

fn c_dtype(d: DType) -> AnforaDType {
    let code = dtype_code(d);
    let found = DTYPES.iter().find(|c| **c as i32 == code);
    *found.expect("every dtype has a C code")
}

/// An error: its code and message. Owned by the caller, freed with `anfora_status_free`.
pub struct AnforaStatus {
    code: AnforaCode,
    message: CString,
}

/// A loaded model.
pub struct AnforaModel {
    model: Model,
    inputs: Vec<Info>,
    outputs: Vec<Info>,
    parameters: Vec<Info>,
}

/// A tensor the runtime allocated (a result of `anfora_model_run_alloc`).
pub struct AnforaTensor {
    tensor: Tensor,
    shape: Vec<i64>,
}

/// Names and shapes kept as C data for the model's lifetime.
struct Info {
    name: CString,
    dtype: AnforaDType,
    shape: Vec<i64>,
}

/// A tensor's name, dtype and shape; pointers stay valid while the model lives.
#[repr(C)]
pub struct AnforaTensorInfo {
    pub name: *const c_char,
    pub dtype: AnforaDType,
    pub ndim: usize,
    /// `ndim` dimensions; -1 for one that is not fixed.
    pub shape: *const i64,
}

/// A tensor in the caller's memory: row-major, `byte_size` bytes at `data`.
#[repr(C)]
pub struct AnforaBuffer {
    pub dtype: AnforaDType,
    pub ndim: usize,
    pub shape: *const i64,
    pub data: *mut c_void,
    pub byte_size: usize,
}

type Status = *mut AnforaStatus;

fn status(code: AnforaCode, message: String) -> Status {
    let message = CString::new(message.replace('\0', " ")).expect("no NUL bytes");
    Box::into_raw(Box::new(AnforaStatus { code, message }))
}

fn from_error(e: Error) -> Status {
    let code = match &e {
        Error::Model(anfora_model::ModelError::TooLarge { .. }) => AnforaCode::ANFORA_OUT_OF_MEMORY,
        Error::Model(_) => AnforaCode::ANFORA_INVALID_MODEL,
        Error::Io(_) => AnforaCode::ANFORA_IO_ERROR,
        Error::Argument(_) => AnforaCode::ANFORA_INVALID_ARGUMENT,
        Error::Raised { kind, .. } if kind == "TimeoutError" => AnforaCode::ANFORA_TIMEOUT,
        Error::Raised { .. } => AnforaCode::ANFORA_RAISED,
        Error::Memory(_) => AnforaCode::ANFORA_OUT_OF_MEMORY,
        Error::Plan(_) => AnforaCode::ANFORA_INTERNAL,
    };
    status(code, e.to_string())
}

fn invalid(message: impl Into<String>) -> Status {
    status(AnforaCode::ANFORA_INVALID_ARGUMENT, message.into())
}

/// Runs `f`, turning a panic into `ANFORA_INTERNAL`. Allocations run under
/// `memory::fallibly`, so a tensor the system refuses is `ANFORA_OUT_OF_MEMORY`.
fn guard(f: impl FnOnce() -> Result<(), Status>) -> Status {
    let run = || anfora_tensor::memory::fallibly(f);
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(())) => std::ptr::null_mut(),
        Ok(Err(s)) => s,
        Err(_) => status(
            AnforaCode::ANFORA_INTERNAL,
            "internal error: anfora panicked".into(),
        ),
    }
}

fn info(name: &str, dtype: DType, shape: impl Iterator<Item = i64>) -> Info {
    Info {
        name: CString::new(name.replace('\0', " ")).expect("no NUL bytes"),
        dtype: c_dtype(dtype),
        shape: shape.collect(),
    }
}

fn wrap(model: Model) -> Box<AnforaModel> {
    crate::memory::keep_freed_memory();
    let dims = |s: &[Option<usize>]| {
        s.iter()
            .map(|d| d.map_or(-1, |d| d as i64))
            .collect::<Vec<_>>()
    };
    let inputs = (model.inputs().iter())
        .map(|(n, t)| info(n, t.dtype, dims(&t.shape).into_iter()))
        .collect();
    let outputs = (model.outputs().iter())
        .map(|o| {
            let t = o.tensor_spec();
            info(&o.name, t.dtype, dims(&t.shape).into_iter())
        })
        .collect();
    let parameters = (model.parameters().iter())
        .map(|p| info(&p.name(), p.dtype(), p.shape().iter().map(|&d| d as i64)))
        .collect();
    Box::new(AnforaModel {
        model,
        inputs,
        outputs,
        parameters,
    })
}

unsafe fn c_str<'a>(s: *const c_char, what: &str) -> Result<&'a str, Status> {
    if s.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(s) };
    s.to_str()
        .map_err(|_| invalid(format!("{what} is not UTF-8")))
}

fn out_ptr<T>(out: *mut T, what: &str) -> Result<(), Status> {
    if out.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    Ok(())
}

/// Loads and validates the model file at `path`; `*out` receives the model.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` points to writable memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_load(
    path: *const c_char,
    out: *mut *mut AnforaModel,
) -> *mut AnforaStatus {
    guard(|| {
        out_ptr(out, "out")?;
        // SAFETY: per the contract above.
        let path = unsafe { c_str(path, "path")? };
        let model = Model::load(path, &LoadOptions::default()).map_err(from_error)?;
        // SAFETY: `out` was checked.
        unsafe { *out = Box::into_raw(wrap(model)) };
        Ok(())
    })
}

/// Loads and validates a model file held in memory (`len` bytes at `data`, copied).
///
/// # Safety
/// `data` points to `len` readable bytes; `out` points to writable memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_load_from_buffer(
    data: *const c_void,
    len: usize,
    out: *mut *mut AnforaModel,
) -> *mut AnforaStatus {
    guard(|| {
        out_ptr(out, "out")?;
        if data.is_null() && len > 0 {
            return Err(invalid("data is NULL"));
        }
        let bytes = match len {
            0 => &[][..],
            // SAFETY: per the contract above.
            _ => unsafe { std::slice::from_raw_parts(data as *const u8, len) },
        };
        let model = Model::from_bytes(bytes, &LoadOptions::default()).map_err(from_error)?;
        // SAFETY: `out` was checked.
        unsafe { *out = Box::into_raw(wrap(model)) };
        Ok(())
    })
}

/// Frees a model (NULL is ignored). No call on it may be running.
///
/// # Safety
/// `model` came from a load function and is not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_free(model: *mut AnforaModel) {
    if !model.is_null() {
        // SAFETY: per the contract above.
        drop(unsafe { Box::from_raw(model) });
    }
}

/// # Safety
/// `model` is a live model.
unsafe fn model_ref<'a>(model: *const AnforaModel) -> Result<&'a AnforaModel, Status> {
    // SAFETY: per the contract above.
    unsafe { model.as_ref() }.ok_or_else(|| invalid("model is NULL"))
}

/// The number of inputs a run takes.
///
/// # Safety
/// `model` is a live model or NULL (0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_num_inputs(model: *const AnforaModel) -> usize {
    // SAFETY: per the contract above.
    unsafe { model.as_ref() }.map_or(0, |m| m.inputs.len())
}

/// The number of outputs a run produces.
///
/// # Safety
/// `model` is a live model or NULL (0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_num_outputs(model: *const AnforaModel) -> usize {
    // SAFETY: per the contract above.
    unsafe { model.as_ref() }.map_or(0, |m| m.outputs.len())
}

/// The number of Parameters.
///
/// # Safety
/// `model` is a live model or NULL (0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_num_parameters(model: *const AnforaModel) -> usize {
    // SAFETY: per the contract above.
    unsafe { model.as_ref() }.map_or(0, |m| m.parameters.len())
}

fn describe(list: &[Info], i: usize, out: *mut AnforaTensorInfo, what: &str) -> Result<(), Status> {
    out_ptr(out, "out")?;
    let item = list.get(i).ok_or_else(|| {
        invalid(format!(
            "{what} {i} does not exist (there are {})",
            list.len()
        ))
    })?;
    let info = AnforaTensorInfo {
        name: item.name.as_ptr(),
        dtype: item.dtype,
        ndim: item.shape.len(),
        shape: item.shape.as_ptr(),
    };
    // SAFETY: `out` was checked.
    unsafe { *out = info };
    Ok(())
}

/// Describes input `i`.
///
/// # Safety
/// `model` is a live model; `out` points to writable memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_input_info(
    model: *const AnforaModel,
    i: usize,
    out: *mut AnforaTensorInfo,
) -> *mut AnforaStatus {
    // SAFETY: per the contract above.
    guard(|| describe(&unsafe { model_ref(model)? }.inputs, i, out, "input"))
}

/// Describes output `i` (a Python number is a 0-d tensor: bool, int64 or float64).
///
/// # Safety
/// `model` is a live model; `out` points to writable memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_output_info(
    model: *const AnforaModel,
    i: usize,
    out: *mut AnforaTensorInfo,
) -> *mut AnforaStatus {
    // SAFETY: per the contract above.
    guard(|| describe(&unsafe { model_ref(model)? }.outputs, i, out, "output"))
}

/// Describes Parameter `i`.
///
/// # Safety
/// `model` is a live model; `out` points to writable memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_parameter_info(
    model: *const AnforaModel,
    i: usize,
    out: *mut AnforaTensorInfo,
) -> *mut AnforaStatus {
    // SAFETY: per the contract above.
    guard(|| {
        describe(
            &unsafe { model_ref(model)? }.parameters,
            i,
            out,
            "Parameter",
        )
    })
}

/// The tensor a caller's buffer holds, checked against its declared dtype and size.
unsafe fn tensor_of(b: &AnforaBuffer, what: &str) -> Result<Tensor, Status> {
    let dtype =
        dtype_of(b.dtype as i32).ok_or_else(|| invalid(format!("{what}: unknown dtype")))?;
    if b.ndim > 0 && b.shape.is_null() {
        return Err(invalid(format!("{what}: shape is NULL")));
    }
    let shape = match b.ndim {
        0 => &[][..],
        // SAFETY: the caller's buffer has `ndim` dimensions.
        n => unsafe { std::slice::from_raw_parts(b.shape, n) },
    };
    let shape: Vec<usize> = shape
        .iter()
        .map(|&d| usize::try_from(d).ok())
        .collect::<Option<_>>()
        .ok_or_else(|| invalid(format!("{what}: a negative dimension")))?;
    let bytes = byte_size(dtype, &shape).ok_or_else(|| invalid(format!("{what}: too large")))?;
    if bytes != b.byte_size {
        return Err(invalid(format!(
            "{what}: a {} tensor of shape {shape:?} is {bytes} bytes, the buffer has {}",
            dtype.name(),
            b.byte_size
        )));
    }
    if b.data.is_null() && bytes > 0 {
        return Err(invalid(format!("{what}: data is NULL")));
    }
    let data = match bytes {
        0 => &[][..],
        // SAFETY: the caller's buffer holds `byte_size` bytes.
        n => unsafe { std::slice::from_raw_parts(b.data as *const u8, n) },
    };
    Tensor::from_le_bytes(dtype, &shape, data)
        .map_err(|e| invalid(format!("{what}: {}", e.message)))
}

fn byte_size(dtype: DType, shape: &[usize]) -> Option<usize> {
    shape
        .iter()
        .try_fold(dtype.size_of(), |n, &d| n.checked_mul(d))
}

unsafe fn inputs_of(inputs: *const AnforaBuffer, n: usize) -> Result<Vec<Tensor>, Status> {
    if inputs.is_null() && n > 0 {
        return Err(invalid("inputs is NULL"));
    }
    let buffers = match n {
        0 => &[][..],
        // SAFETY: the caller passes `n` buffers.
        _ => unsafe { std::slice::from_raw_parts(inputs, n) },
    };
    (buffers.iter().enumerate())
        // SAFETY: each buffer is the caller's.
        .map(|(i, b)| unsafe { tensor_of(b, &format!("input {i}")) })
        .collect()
}

/// Copies a tensor into a caller's buffer.
unsafe fn copy_out(t: &Tensor, b: &mut AnforaBuffer, what: &str) -> Result<(), Status> {
    let bytes = t.le_bytes();
    if c_dtype(t.dtype()) != b.dtype || bytes.len() != b.byte_size {
        return Err(invalid(format!(
            "{what}: the result is a {} tensor of shape {:?} ({} bytes); the buffer is a {:?} of {} bytes",
            t.dtype().name(),
            t.shape(),
            bytes.len(),
            b.dtype,
            b.byte_size
        )));
    }
    if b.data.is_null() && !bytes.is_empty() {
        return Err(invalid(format!("{what}: data is NULL")));
    }
    // SAFETY: the buffer holds `byte_size` writable bytes, checked equal to the length.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.data as *mut u8, bytes.len()) };
    Ok(())
}

/// Runs `model` on the caller's `n_inputs` input buffers once the caller's room for outputs
/// (`n_outputs`, `given(n_outputs)` in words, built only for the error) is checked; the
/// results in order.
///
/// # Safety
/// As the run functions below.
unsafe fn run_on(
    model: *const AnforaModel,
    inputs: *const AnforaBuffer,
    n_inputs: usize,
    no_outputs: bool,
    n_outputs: usize,
    given: fn(usize) -> String,
) -> Result<Vec<Tensor>, *mut AnforaStatus> {
    // SAFETY: the caller's contract.
    let m = unsafe { model_ref(model)? };
    if n_outputs != m.outputs.len() || (no_outputs && n_outputs > 0) {
        return Err(invalid(format!(
            "the model has {} outputs, {}",
            m.outputs.len(),
            given(n_outputs)
        )));
    }
    // SAFETY: the caller's contract.
    let tensors = unsafe { inputs_of(inputs, n_inputs)? };
    m.model.run(&tensors).map_err(from_error)
}

/// Runs the model: `inputs` are the caller's tensors; the results are written into the
/// caller's `outputs` buffers, whose dtype and byte size must match
/// (`anfora_model_output_info`). Several threads may run one model at once.
///
/// # Safety
/// `model` is a live model; `inputs` points to `n_inputs` buffers and `outputs` to
/// `n_outputs`, each describing memory of its `byte_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_run(
    model: *const AnforaModel,
    inputs: *const AnforaBuffer,
    n_inputs: usize,
    outputs: *mut AnforaBuffer,
    n_outputs: usize,
) -> *mut AnforaStatus {
    guard(|| {
        let given = |n| format!("{n} buffers were given");
        // SAFETY: per the contract above.
        let results =
            unsafe { run_on(model, inputs, n_inputs, outputs.is_null(), n_outputs, given)? };
        let buffers = match n_outputs {
            0 => &mut [][..],
            // SAFETY: the caller passes `n_outputs` buffers.
            _ => unsafe { std::slice::from_raw_parts_mut(outputs, n_outputs) },
        };
        for (i, (t, b)) in results.iter().zip(buffers).enumerate() {
            // SAFETY: each buffer is the caller's.
            unsafe { copy_out(t, b, &format!("output {i}"))? };
        }
        Ok(())
    })
}

/// Runs the model with outputs the runtime allocates: `outputs` receives `n_outputs`
/// tensors, each freed with `anfora_tensor_free`.
///
/// # Safety
/// `model` is a live model; `inputs` points to `n_inputs` buffers; `outputs` has room for
/// `n_outputs` pointers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_run_alloc(
    model: *const AnforaModel,
    inputs: *const AnforaBuffer,
    n_inputs: usize,
    outputs: *mut *mut AnforaTensor,
    n_outputs: usize,
) -> *mut AnforaStatus {
    guard(|| {
        let given = |n| format!("room for {n} was given");
        // SAFETY: per the contract above.
        let results =
            unsafe { run_on(model, inputs, n_inputs, outputs.is_null(), n_outputs, given)? };
        for (i, t) in results.into_iter().enumerate() {
            let shape = t.shape().iter().map(|&d| d as i64).collect();
            // Gathered here, where an allocation failure is a status: `anfora_tensor_data`
            // then only borrows.
            let tensor = t.contiguous();
            let t = Box::into_raw(Box::new(AnforaTensor { tensor, shape }));
            // SAFETY: `outputs` has room for `n_outputs` pointers.
            unsafe { *outputs.add(i) = t };
        }
        Ok(())
    })
}

/// Frees a tensor from `anfora_model_run_alloc` (NULL is ignored).
///
/// # Safety
/// `t` is a live tensor from `anfora_model_run_alloc`, or NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_tensor_free(t: *mut AnforaTensor) {
    if !t.is_null() {
        // SAFETY: per the contract above.
        drop(unsafe { Box::from_raw(t) });
    }
}

/// The tensor's element type.
///
/// # Safety
/// `t` is a live tensor.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_tensor_dtype(t: *const AnforaTensor) -> AnforaDType {
    // SAFETY: per the contract above.
    c_dtype(unsafe { &*t }.tensor.dtype())
}

/// The number of dimensions (0 for a scalar).
///
/// # Safety
/// `t` is a live tensor.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_tensor_ndim(t: *const AnforaTensor) -> usize {
    // SAFETY: per the contract above.
    unsafe { &*t }.shape.len()
}

/// The dimensions, valid while the tensor lives.
///
/// # Safety
/// `t` is a live tensor.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_tensor_shape(t: *const AnforaTensor) -> *const i64 {
    // SAFETY: per the contract above.
    unsafe { &*t }.shape.as_ptr()
}

/// The elements, row-major, valid while the tensor lives.
///
/// # Safety
/// `t` is a live tensor.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_tensor_data(t: *const AnforaTensor) -> *const c_void {
    // SAFETY: per the contract above.
    let t = &unsafe { &*t }.tensor;
    match t.dtype() {
        DType::Bool => t.as_bool_slice().map(|s| s.as_ptr() as *const c_void),
        DType::I32 => t.as_i32_slice().map(|s| s.as_ptr() as *const c_void),
        DType::I64 => t.as_i64_slice().map(|s| s.as_ptr() as *const c_void),
        DType::F32 => t.as_f32_slice().map(|s| s.as_ptr() as *const c_void),
        DType::F64 => t.as_f64_slice().map(|s| s.as_ptr() as *const c_void),
        DType::F16 | DType::BF16 => t.as_half_bits().map(|s| s.as_ptr() as *const c_void),
        DType::I8 => t.as_i8_slice().map(|s| s.as_ptr() as *const c_void),
        DType::U8 => t.as_u8_slice().map(|s| s.as_ptr() as *const c_void),
    }
    .unwrap_or(std::ptr::null())
}

/// The size of the elements in bytes.
///
/// # Safety
/// `t` is a live tensor.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_tensor_byte_size(t: *const AnforaTensor) -> usize {
    // SAFETY: per the contract above.
    let t = &unsafe { &*t }.tensor;
    t.numel() * t.dtype().size_of()
}

/// Copies Parameter `name`'s value into `data` (`byte_size` bytes, its exact size).
///
/// # Safety
/// `model` is a live model; `name` a NUL-terminated string; `data` has `byte_size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_get_parameter(
    model: *const AnforaModel,
    name: *const c_char,
    data: *mut c_void,
    byte_size: usize,
) -> *mut AnforaStatus {
    guard(|| {
        // SAFETY: per the contract above.
        let (m, name) = unsafe { (model_ref(model)?, c_str(name, "name")?) };
        let p = m
            .model
            .parameter(name)
            .ok_or_else(|| invalid(format!("the model has no Parameter '{name}'")))?;
        let mut b = AnforaBuffer {
            dtype: c_dtype(p.dtype()),
            ndim: 0,
            shape: std::ptr::null(),
            data,
            byte_size,
        };
        // SAFETY: `data` has `byte_size` bytes.
        unsafe { copy_out(&p.get(), &mut b, &format!("Parameter '{name}'")) }
    })
}

/// Sets Parameter `name` from `data` (`byte_size` bytes, its exact size, its dtype).
///
/// # Safety
/// `model` is a live model; `name` a NUL-terminated string; `data` has `byte_size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_set_parameter(
    model: *mut AnforaModel,
    name: *const c_char,
    data: *const c_void,
    byte_size: usize,
) -> *mut AnforaStatus {
    guard(|| {
        // SAFETY: per the contract above.
        let (m, name) = unsafe { (model_ref(model)?, c_str(name, "name")?) };
        let p = m
            .model
            .parameter(name)
            .ok_or_else(|| invalid(format!("the model has no Parameter '{name}'")))?;
        let shape: Vec<i64> = p.shape().iter().map(|&d| d as i64).collect();
        let b = AnforaBuffer {
            dtype: c_dtype(p.dtype()),
            ndim: shape.len(),
            shape: shape.as_ptr(),
            data: data as *mut c_void,
            byte_size,
        };
        // SAFETY: `data` has `byte_size` bytes.
        let t = unsafe { tensor_of(&b, &format!("Parameter '{name}'"))? };
        m.model.set_parameter(name, t).map_err(from_error)
    })
}

/// Writes the model, with its Parameters' current values, to `path`.
///
/// # Safety
/// `model` is a live model; `path` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_save(
    model: *const AnforaModel,
    path: *const c_char,
) -> *mut AnforaStatus {
    guard(|| {
        // SAFETY: per the contract above.
        let (m, path) = unsafe { (model_ref(model)?, c_str(path, "path")?) };
        m.model.save(path).map_err(from_error)
    })
}

/// Bounds each run of `model` to `milliseconds` (0: no bound); a run past it stops at its
/// next call or loop iteration with `ANFORA_TIMEOUT`.
///
/// # Safety
/// `model` is a live model.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_model_set_timeout(
    model: *const AnforaModel,
    milliseconds: u64,
) -> *mut AnforaStatus {
    guard(|| {
        // SAFETY: per the contract above.
        let m = unsafe { model_ref(model)? };
        let limit = (milliseconds > 0).then(|| std::time::Duration::from_millis(milliseconds));
        m.model.set_timeout(limit);
        Ok(())
    })
}

/// Sets how many threads the kernels of a calling thread use (0: one per core). It applies
/// to threads that have not run a model yet; 1 means the calling thread alone.
#[unsafe(no_mangle)]
pub extern "C" fn anfora_set_num_threads(n: usize) {
    crate::set_num_threads(n);
}

/// The status's code (`ANFORA_OK` for NULL).
///
/// # Safety
/// `s` is a live status or NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_status_code(s: *const AnforaStatus) -> AnforaCode {
    // SAFETY: per the contract above.
    unsafe { s.as_ref() }.map_or(AnforaCode::ANFORA_OK, |s| s.code)
}

/// The status's message, valid until it is freed ("" for NULL).
///
/// # Safety
/// `s` is a live status or NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_status_message(s: *const AnforaStatus) -> *const c_char {
    // SAFETY: per the contract above.
    unsafe { s.as_ref() }.map_or(c"".as_ptr(), |s| s.message.as_ptr())
}

/// Frees a status (NULL is ignored).
///
/// # Safety
/// `s` is a status from this library, or NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn anfora_status_free(s: *mut AnforaStatus) {
    if !s.is_null() {
        // SAFETY: per the contract above.
        drop(unsafe { Box::from_raw(s) });
    }
}

/// The runtime's version, e.g. "0.1.0".
#[unsafe(no_mangle)]
pub extern "C" fn anfora_version() -> *const c_char {
    static VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => c"",
        };
    VERSION.as_ptr()
}
