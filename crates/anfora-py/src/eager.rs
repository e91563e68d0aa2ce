//! Eager calls of `anfora.ops` outside compiled code: the reference implementation of each
//! primitive, so eager and compiled results agree.

use pyo3::prelude::*;

use crate::array::Cell;
use crate::cache::flush_output;
use crate::pycall::{Args, Kwargs, Returned};
use crate::tensor::{array_object, derived_object, from_value, to_value};
use anfora_ops::Value;

/// An eager call of `anfora.ops.<name>` outside compiled code.
#[pyfunction]
#[pyo3(signature = (name, args, kwargs=None))]
pub fn call_op<'py>(
    py: Python<'py>,
    name: &str,
    args: &Args<'py>,
    kwargs: Option<&Kwargs<'py>>,
) -> Returned<'py> {
    let p = op_prim(name)?;
    let values = args
        .iter()
        .map(|a| to_value(&a))
        .collect::<PyResult<Vec<_>>>()?;
    let kw = match kwargs {
        Some(k) if !k.is_empty() => {
            let mut names = Vec::new();
            let mut vals = Vec::new();
            for (key, v) in k.iter() {
                names.push(key.extract::<String>()?);
                vals.push(to_value(&v)?);
            }
            Some((names, vals))
        }
        _ => None,
    };
    let bound = anfora_ops::call::bind_prim(p, values, kw).map_err(crate::tensor::vm_error)?;
    let mut out = Vec::new();
    let result = anfora_ops::call::call_prim(p, &bound, &mut out);
    flush_output(py, &out)?;
    let v = result.map_err(crate::tensor::vm_error)?;
    // numpy's objects: a view's base is its first argument; a constructor makes an array.
    match (&v, args.get_item(0)) {
        (_, Ok(base)) if p.views() => {
            let how = crate::array::Relayout::of_prim(p).map(|r| (r, &bound[1..]));
            derived_object(&base, &p.python_name(), how, v)
        }
        (Value::Tensor(t), _) if p.makes_array() => array_object(py, Cell::own(t.clone())),
        _ => from_value(py, &v),
    }
}

/// The parameter list of `anfora.ops.<name>` as Python writes it, `"(x, axis=None)"`.
#[pyfunction]
pub fn op_signature(name: &str) -> PyResult<String> {
    Ok(op_prim(name)?.signature().python_text())
}

/// The primitive `anfora.ops.<name>` names.
fn op_prim(name: &str) -> PyResult<anfora_ir::Prim> {
    anfora_ir::Prim::op(name).ok_or_else(|| {
        pyo3::exceptions::PyAttributeError::new_err(format!(
            "module 'anfora.ops' has no attribute '{name}'"
        ))
    })
}

/// The names of `anfora.ops`.
#[pyfunction]
pub fn op_names() -> Vec<&'static str> {
    anfora_ir::Prim::op_names().collect()
}
