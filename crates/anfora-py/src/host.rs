//! The Python side of name resolution: a compiled function's globals, closure cells and
//! `self` attributes are looked up here, and the Python objects found become constants,
//! Parameters (by reference), namespaces, or further functions compiled from their source.

use std::collections::HashMap;

use anfora_front::{HostFunction, Namespace, Resolved, Resolver, ScopeId};
use anfora_ir::{Const, Prim};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyModule, PyTuple};

use crate::tensor::to_value;

/// Where one compiled function's global names are looked up.
struct Scope {
    globals: Py<PyDict>,
    /// Free variables (closure cells), by name.
    closure: HashMap<String, Option<Py<PyAny>>>,
}

/// The Python objects the compiler has seen, so that ids stay valid (and refer to the same
/// object) for as long as the compiler lives.
#[derive(Default)]
pub struct Host {
    scopes: Vec<Scope>,
    objects: Vec<Py<PyAny>>,
    object_ids: HashMap<usize, u64>,
    /// The host functions made so far, by their key: the frontend parses a function once per
    /// key, so its source and scope are read once too (name resolution asks again at every
    /// use of the name).
    functions: HashMap<(u64, u64), HostFunction>,
}

impl Host {
    /// The id of `obj` as a host object (the same object always gets the same id).
    pub fn object_id(&mut self, obj: &Bound<'_, PyAny>) -> u64 {
        let addr = obj.as_ptr() as usize;
        if let Some(&id) = self.object_ids.get(&addr) {
            return id;
        }
        let id = self.objects.len() as u64;
        self.objects.push(obj.clone().unbind());
        self.object_ids.insert(addr, id);
        id
    }

    fn object<'py>(&self, py: Python<'py>, id: u64) -> Bound<'py, PyAny> {
        self.objects[id as usize].bind(py).clone()
    }

    /// The host function for Python function `func`, bound to `bound_self` if given: its
    /// source, file and line (through `inspect`), and a scope with its globals and closure.
    pub fn function(
        &mut self,
        func: &Bound<'_, PyAny>,
        bound_self: Option<&Bound<'_, PyAny>>,
    ) -> Result<HostFunction, String> {
        let py = func.py();
        let key = (
            self.object_id(func),
            bound_self.map_or(u64::MAX, |o| self.object_id(o)),
        );
        if let Some(h) = self.functions.get(&key) {
            return Ok(h.clone());
        }
        let qualname: String = func
            .getattr("__qualname__")
            .and_then(|q| q.extract())
            .unwrap_or_else(|_| "<function>".into());
        let source = (|| -> PyResult<(String, u32, String, String)> {
            let inspect = py.import("inspect")?;
            let (lines, first): (Vec<String>, u32) =
                inspect.call_method1("getsourcelines", (func,))?.extract()?;
            let file: String = match inspect.call_method1("getsourcefile", (func,))?.extract() {
                Ok(f) => f,
                Err(_) => func
                    .getattr("__code__")?
                    .getattr("co_filename")?
                    .extract()?,
            };
            let before: String = if first > 1 {
                py.import("linecache")?
                    .call_method1("getline", (file.as_str(), first - 1))?
                    .extract()?
            } else {
                String::new()
            };
            Ok((lines.concat(), first.max(1), file, before))
        })();
        let (source, first_line, file, line_before) = source.map_err(|e| {
            format!(
                "cannot read the source of '{qualname}' ({}); anfora compiles functions from their source file",
                e.value(py)
            )
        })?;
        let lambda_body = lambda_body(func).map_err(|e| e.to_string())?;
        // A lambda is found in its whole file: `inspect` gives only the lines it starts on,
        // which are not a statement when it sits inside a multi-line expression.
        let (source, first_line, line_before) = match lambda_body {
            Some(_) => match whole_file(py, &file) {
                Some(text) => (text, 1, String::new()),
                None => (source, first_line, line_before),
            },
            None => (source, first_line, line_before),
        };
        let scope = self.scope_of(func).map_err(|e| e.to_string())?;
        let h = HostFunction {
            key,
            file,
            source,
            first_line,
            line_before,
            scope,
            qualname,
            bound_self: (key.1 != u64::MAX).then_some(key.1),
            lambda_body,
        };
        self.functions.insert(key, h.clone());
        Ok(h)
    }

    fn scope_of(&mut self, func: &Bound<'_, PyAny>) -> PyResult<ScopeId> {
        let globals = func.getattr("__globals__")?.cast_into::<PyDict>()?.unbind();
        let code = func.getattr("__code__")?;
        let freevars: Vec<String> = code.getattr("co_freevars")?.extract()?;
        let cells = func.getattr("__closure__")?;
        let mut closure = HashMap::new();
        if !cells.is_none() {
            for (name, cell) in freevars.into_iter().zip(cells.try_iter()?) {
                // An empty cell: the enclosing function has not assigned it yet.
                let value = cell?.getattr("cell_contents").ok().map(Bound::unbind);
                closure.insert(name, value);
            }
        }
        self.scopes.push(Scope { globals, closure });
        Ok(ScopeId(self.scopes.len() as u32 - 1))
    }
}

/// The text of a source file as Python's `linecache` has it (what `inspect` reads), if any.
fn whole_file(py: Python<'_>, file: &str) -> Option<String> {
    let lines: Vec<String> = py
        .import("linecache")
        .ok()?
        .call_method1("getlines", (file,))
        .ok()?
        .extract()
        .ok()?;
    (!lines.is_empty()).then(|| lines.concat())
}

/// Where a lambda's body starts, (line, byte column), from its code object's positions: the
/// earliest start of an instruction with a non-empty span (the instruction spanning the whole
/// body starts there; `RESUME` and the implicit return have empty spans at column 0). `None`
/// for a function defined with `def`.
fn lambda_body(func: &Bound<'_, PyAny>) -> PyResult<Option<(u32, u32)>> {
    let name: String = func.getattr("__name__")?.extract()?;
    if name != "<lambda>" {
        return Ok(None);
    }
    let mut start: Option<(u32, u32)> = None;
    for pos in func
        .getattr("__code__")?
        .call_method0("co_positions")?
        .try_iter()?
    {
        let (line, end_line, col, end_col): (Option<u32>, Option<u32>, Option<u32>, Option<u32>) =
            pos?.extract()?;
        if let (Some(line), Some(col)) = (line, col)
            && (end_line, end_col) != (Some(line), Some(col))
        {
            start = Some(start.map_or((line, col), |s| s.min((line, col))));
        }
    }
    Ok(start)
}

/// A [`Resolver`] over the host's Python objects, while the GIL is held.
pub struct PyResolver<'a, 'py> {
    pub py: Python<'py>,
    pub host: &'a mut Host,
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

impl PyResolver<'_, '_> {
    /// What a Python object found under `what` (for messages: "global 'x'") stands for.
    fn convert(&mut self, obj: &Bound<'_, PyAny>, what: &str) -> Resolved {
        self.convert_nested(obj, what, 0)
    }

    fn convert_nested(&mut self, obj: &Bound<'_, PyAny>, what: &str, depth: usize) -> Resolved {
        let py = self.py;
        if let Ok(m) = obj.cast::<PyModule>() {
            let name = m.name().map(|n| n.to_string()).unwrap_or_default();
            return match name.as_str() {
                "anfora" => Resolved::Namespace(Namespace::Anfora),
                "anfora.ops" => Resolved::Namespace(Namespace::Ops),
                // The compatibility layers' modules (`mstype.float32`, `ms.ops.sum` in a
                // MindSpore script) are read as objects: each attribute compiled code reads
                // resolves to what it holds (a dtype, an anfora operation, a function).
                _ if name.starts_with("anfora.compat.") => {
                    Resolved::Object(self.host.object_id(obj))
                }
                _ => Resolved::Refused {
                    message: format!("{what} is the module '{name}', which compiled code cannot call into"),
                    hint: "use `anfora.ops` inside compiled functions (numpy and other modules run only outside them)".into(),
                },
            };
        }
        if let Some(p) = marker(obj, "__anfora_prim__").and_then(|n| Prim::anfora_function(&n)) {
            return Resolved::Value(Const::Prim(p));
        }
        if let Some(p) = marker(obj, "__anfora_op__").and_then(|n| Prim::op(&n)) {
            return Resolved::Value(Const::Prim(p));
        }
        if let Some((func, bound)) = compiled_function(obj) {
            return self.source(&func, bound.as_ref());
        }
        let types = match py.import("types") {
            Ok(t) => t,
            Err(e) => return refused(what, &e.to_string()),
        };
        let is = |ty: &str| {
            types
                .getattr(ty)
                .and_then(|t| obj.is_instance(&t))
                .unwrap_or(false)
        };
        if is("FunctionType") {
            return self.source(obj, None);
        }
        if is("MethodType")
            && let (Ok(func), Ok(this)) = (obj.getattr("__func__"), obj.getattr("__self__"))
        {
            if let Some((f, _)) = compiled_function(&func) {
                return self.source(&f, Some(&this));
            }
            return self.source(&func, Some(&this));
        }
        if is("BuiltinFunctionType") || obj.is_instance_of::<pyo3::types::PyType>() {
            return Resolved::Refused {
                message: format!(
                    "{what} is the Python {} '{}', which compiled code cannot call",
                    if is("BuiltinFunctionType") {
                        "builtin"
                    } else {
                        "class"
                    },
                    obj.getattr("__name__")
                        .and_then(|n| n.extract::<String>())
                        .unwrap_or_default()
                ),
                hint: "use anfora.ops and the supported builtins inside compiled functions".into(),
            };
        }
        match to_value(obj) {
            Ok(v) => match anfora_ops::value::to_const(&v) {
                Some(c) => Resolved::Value(c),
                None => refused(what, &type_name(obj)),
            },
            // A tuple or list holding functions: each item resolved as a global would be.
            Err(_) if obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>() => {
                if depth >= crate::tensor::MAX_NESTING {
                    return refused(what, "deeply nested tuple or list");
                }
                let mut items = Vec::new();
                for (i, item) in obj.try_iter().into_iter().flatten().enumerate() {
                    let Ok(item) = item else {
                        return refused(what, &type_name(obj));
                    };
                    match self.convert_nested(&item, &format!("item {i} of {what}"), depth + 1) {
                        r @ Resolved::Refused { .. } => return r,
                        r => items.push(r),
                    }
                }
                if obj.is_instance_of::<PyTuple>() {
                    Resolved::Tuple(items)
                } else {
                    Resolved::List(items)
                }
            }
            // Instances of user classes (Cells, configuration objects) resolve their
            // attributes when compiled code reads them.
            Err(_) if obj.hasattr("__dict__").unwrap_or(false) => {
                Resolved::Object(self.host.object_id(obj))
            }
            Err(_) => refused(what, &type_name(obj)),
        }
    }

    fn source(&mut self, func: &Bound<'_, PyAny>, bound: Option<&Bound<'_, PyAny>>) -> Resolved {
        match self.host.function(func, bound) {
            Ok(h) => Resolved::Source(Box::new(h)),
            Err(message) => Resolved::Refused {
                message,
                hint: "define the function in a .py file (not in an interactive session or exec)"
                    .into(),
            },
        }
    }
}

fn marker(obj: &Bound<'_, PyAny>, attr: &str) -> Option<String> {
    obj.getattr(attr).ok()?.extract().ok()
}

fn refused(what: &str, ty: &str) -> Resolved {
    Resolved::Refused {
        message: format!("{what} is a '{ty}' object, which compiled code cannot use"),
        hint: "compiled code uses tensors, numbers, strings, tuples, lists, Parameters, functions and objects holding them; pass other values in as arguments".into(),
    }
}

impl Resolver for PyResolver<'_, '_> {
    fn resolve_global(&mut self, scope: ScopeId, name: &str) -> Resolved {
        let py = self.py;
        let s = &self.host.scopes[scope.0 as usize];
        if let Some(cell) = s.closure.get(name) {
            return match cell {
                Some(v) => {
                    let v = v.bind(py).clone();
                    self.convert(&v, &format!("free variable '{name}'"))
                }
                None => Resolved::Refused {
                    message: format!(
                        "free variable '{name}' is referenced before assignment in the enclosing function"
                    ),
                    hint: "assign it before the function is compiled".into(),
                },
            };
        }
        let globals = s.globals.bind(py).clone();
        match globals.get_item(name) {
            Ok(Some(v)) => self.convert(&v, &format!("global '{name}'")),
            _ => Resolved::Unknown,
        }
    }

    fn resolve_attr(&mut self, obj: u64, attr: &str) -> Resolved {
        let py = self.py;
        let o = self.host.object(py, obj);
        let ty = type_name(&o);
        // Calling a Cell runs its `construct`.
        let value = if attr == "__call__" {
            o.getattr("construct").or_else(|_| o.getattr("__call__"))
        } else {
            o.getattr(attr)
        };
        match value {
            Ok(v) => self.convert(&v, &format!("'{ty}.{attr}'")),
            Err(_) => Resolved::Unknown,
        }
    }

    fn object_type(&mut self, obj: u64) -> String {
        type_name(&self.host.object(self.py, obj))
    }
}

/// The Python function of an `@anfora.jit` function, and the object it is bound to.
#[allow(clippy::type_complexity)]
fn compiled_function<'py>(
    obj: &Bound<'py, PyAny>,
) -> Option<(Bound<'py, PyAny>, Option<Bound<'py, PyAny>>)> {
    let pair = obj.getattr("__anfora_jit__").ok()?;
    pair.extract().ok()
}
