//! Checkpoints: named tensors in a safetensors file (the format Hugging Face and others read),
//! with string metadata. Saving writes a temporary file next to the target and renames it, so
//! an interrupted save never leaves a truncated checkpoint behind.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anfora_tensor::{DType, Tensor};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use safetensors::tensor::{Dtype, SafeTensors, View};

use crate::array::Cell;
use crate::tensor::{Tensor as PyTensor, array_object};

/// The metadata entry holding the names in the order they were saved in.
const ORDER_KEY: &str = "anfora.order";

/// One tensor's little-endian bytes, as the format stores them.
struct Entry {
    dtype: Dtype,
    shape: Vec<usize>,
    bytes: Vec<u8>,
}

impl View for &Entry {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.bytes)
    }
    fn data_len(&self) -> usize {
        self.bytes.len()
    }
}

/// anfora's dtypes and the format's names for them.
const DTYPES: [(DType, Dtype); 7] = [
    (DType::Bool, Dtype::BOOL),
    (DType::I32, Dtype::I32),
    (DType::I64, Dtype::I64),
    (DType::F32, Dtype::F32),
    (DType::F64, Dtype::F64),
    (DType::F16, Dtype::F16),
    (DType::BF16, Dtype::BF16),
];

fn file_dtype(d: DType) -> Dtype {
    let found = DTYPES.iter().find(|(ours, _)| *ours == d);
    found.expect("every dtype has a safetensors name").1
}

fn entry(t: &Tensor) -> Entry {
    Entry {
        dtype: file_dtype(t.dtype()),
        shape: t.shape().to_vec(),
        bytes: t.to_le_bytes(),
    }
}

fn tensor_of(name: &str, file_dtype: Dtype, shape: &[usize], data: &[u8]) -> PyResult<Tensor> {
    let Some(&(dtype, _)) = DTYPES.iter().find(|(_, theirs)| *theirs == file_dtype) else {
        return Err(PyValueError::new_err(format!(
            "checkpoint tensor '{name}' has dtype {file_dtype:?}, which anfora does not support (bool, int32, int64, float16, bfloat16, float32 and float64 are)"
        )));
    };
    Tensor::from_le_bytes(dtype, shape, data)
        .map_err(|e| PyValueError::new_err(format!("checkpoint tensor '{name}': {}", e.message)))
}

fn temporary_next_to(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
}

fn os_error(what: &str, path: &Path, e: std::io::Error) -> PyErr {
    PyOSError::new_err(format!("{what} {}: {e}", path.display()))
}

/// `save_safetensors(path, [(name, Tensor)], metadata)`.
#[pyfunction]
#[pyo3(signature = (path, tensors, metadata=None))]
pub fn save_safetensors(
    path: PathBuf,
    tensors: Vec<(String, PyRef<'_, PyTensor>)>,
    metadata: Option<HashMap<String, String>>,
) -> PyResult<()> {
    let mut seen = std::collections::HashSet::new();
    for (name, _) in &tensors {
        if !seen.insert(name.as_str()) {
            return Err(PyValueError::new_err(format!(
                "two tensors are named '{name}' in one checkpoint"
            )));
        }
        if name.contains('\n') || name.is_empty() {
            return Err(PyValueError::new_err(format!(
                "checkpoint tensor names must be non-empty single lines, not {name:?}"
            )));
        }
    }
    // The format indexes tensors by name; the order they were given in is kept in metadata.
    let mut metadata = metadata.unwrap_or_default();
    let order: Vec<&str> = tensors.iter().map(|(n, _)| n.as_str()).collect();
    metadata.insert(ORDER_KEY.to_string(), order.join("\n"));
    let values = (tensors.iter())
        .map(|(n, t)| Ok((n.clone(), t.cell.read()?)))
        .collect::<PyResult<Vec<_>>>()?;
    let entries: Vec<(String, Entry)> = values.iter().map(|(n, t)| (n.clone(), entry(t))).collect();
    let bytes = safetensors::tensor::serialize(entries.iter().map(|(n, e)| (n, e)), Some(metadata))
        .map_err(|e| PyValueError::new_err(format!("cannot write the checkpoint: {e}")))?;
    let tmp = temporary_next_to(&path);
    std::fs::write(&tmp, bytes).map_err(|e| os_error("cannot write", &tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        os_error("cannot replace", &path, e)
    })
}

/// Named tensors in their saved order, and the file's string metadata.
type Loaded = (Vec<(String, Py<PyAny>)>, HashMap<String, String>);

/// A checkpoint file read and its index validated.
struct Opened {
    bytes: Vec<u8>,
    /// The names in the order they were saved in, as recorded at save time.
    order: Option<String>,
    /// The user's metadata (without the saved order).
    metadata: HashMap<String, String>,
}

fn read_checkpoint(path: &Path) -> PyResult<Opened> {
    let bytes = std::fs::read(path).map_err(|e| os_error("cannot read", path, e))?;
    let (_, meta) = SafeTensors::read_metadata(&bytes).map_err(|e| invalid(path, e))?;
    let mut metadata = meta.metadata().clone().unwrap_or_default();
    let order = metadata.remove(ORDER_KEY);
    Ok(Opened {
        bytes,
        order,
        metadata,
    })
}

fn invalid(path: &Path, e: safetensors::SafeTensorError) -> PyErr {
    PyValueError::new_err(format!(
        "{} is not a valid safetensors checkpoint: {e}",
        path.display()
    ))
}

/// `load_safetensors_metadata(path)`: the string metadata, without decoding the tensors.
#[pyfunction]
pub fn load_safetensors_metadata(path: PathBuf) -> PyResult<HashMap<String, String>> {
    Ok(read_checkpoint(&path)?.metadata)
}

/// `load_safetensors(path) -> ([(name, Tensor)], metadata)`, in the order they were saved.
#[pyfunction]
pub fn load_safetensors(py: Python<'_>, path: PathBuf) -> PyResult<Loaded> {
    let Opened {
        bytes,
        order,
        metadata,
    } = read_checkpoint(&path)?;
    let file = SafeTensors::deserialize(&bytes).map_err(|e| invalid(&path, e))?;
    let mut named: HashMap<String, Py<PyAny>> = HashMap::new();
    let mut names = Vec::new();
    for (name, view) in file.tensors() {
        let t = tensor_of(&name, view.dtype(), view.shape(), view.data())?;
        names.push(name.clone());
        named.insert(name, array_object(py, Cell::own(t))?.unbind());
    }
    // The order they were saved in, if this file records it (and it names every tensor).
    if let Some(order) = order {
        let listed: Vec<String> = order.split('\n').map(str::to_string).collect();
        let mut sorted_listed = listed.clone();
        sorted_listed.sort();
        let mut sorted_names = names.clone();
        sorted_names.sort();
        if sorted_listed == sorted_names {
            names = listed;
        }
    }
    let tensors = names
        .into_iter()
        .map(|n| {
            let t = named.remove(&n).expect("every name has its tensor");
            (n, t)
        })
        .collect();
    Ok((tensors, metadata))
}
