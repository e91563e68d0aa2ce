//! What a compilation is for: the abstract signature of a call's arguments, which keys the
//! compile caches, and why a call compiles again.

use anfora_ops::{Abs, TensorAbs, Value};

/// The abstract a call argument is compiled for: Python scalars and strings by value (a
/// different value compiles again), tensors by dtype and shape.
pub fn arg_abstract(v: &Value) -> Abs {
    match v {
        Value::Tensor(t) => Abs::tensor(TensorAbs::new(
            t.dtype(),
            t.shape().iter().map(|&d| Some(d)).collect(),
        )),
        Value::Tuple(items) => Abs::tuple(items.iter().map(arg_abstract).collect()),
        Value::List(items) => Abs::List(items.iter().map(arg_abstract).collect()),
        other => anfora_ops::abs::from_value(other),
    }
}

/// A call argument. Python scalars are compile-time constants — a different value compiles
/// again — unless the argument is marked mutable (as MindSpore's `mutable`).
#[derive(Clone, Debug)]
pub struct Arg {
    pub value: Value,
    pub mutable: bool,
}

impl From<Value> for Arg {
    fn from(value: Value) -> Arg {
        Arg {
            value,
            mutable: false,
        }
    }
}

impl Arg {
    pub fn mutable(value: Value) -> Arg {
        Arg {
            value,
            mutable: true,
        }
    }

    /// The abstract the argument is compiled for.
    pub fn abstract_value(&self) -> Abs {
        let a = arg_abstract(&self.value);
        if self.mutable { a.broaden() } else { a }
    }

    /// Whether the argument has abstract `abs` (what `abstract_value() == *abs` says, without
    /// building the abstract for tensors: the cache checks this on every call).
    pub fn has_abstract(&self, abs: &Abs) -> bool {
        match (&self.value, abs) {
            (Value::Tensor(t), Abs::Tensor(ta)) => {
                ta.value.is_none()
                    && ta.dtype == t.dtype()
                    && ta.shape.len() == t.shape().len()
                    && ta.shape.iter().zip(t.shape()).all(|(a, &b)| *a == Some(b))
            }
            (Value::Tensor(_), _) | (_, Abs::Tensor(_)) => false,
            _ => self.abstract_value() == *abs,
        }
    }
}

/// Why a call compiles: the first signature, or what changed from the signature `previous`
/// compiled last.
pub fn explain(entry: &str, key: &[Abs], previous: Option<&[Abs]>, names: Vec<String>) -> String {
    let sig: Vec<String> = key.iter().map(|a| a.to_string()).collect();
    let Some(prev) = previous else {
        return format!("compiling '{entry}' for ({}): first call", sig.join(", "));
    };
    if prev.len() != key.len() {
        return format!(
            "recompiling '{entry}': called with {} arguments instead of {}",
            key.len(),
            prev.len()
        );
    }
    let mut changes = Vec::new();
    for (i, (old, new)) in prev.iter().zip(key).enumerate() {
        if old != new {
            let name = names
                .get(i)
                .map(|n| format!(" ('{n}')"))
                .unwrap_or_default();
            changes.push(format!(
                "argument {}{name} changed from {old} to {new}",
                i + 1
            ));
        }
    }
    let numbers = prev
        .iter()
        .zip(key)
        .any(|(o, n)| o != n && o.is_number() && n.is_number());
    let hint = if numbers {
        "; Python numbers are compile-time constants: mark the argument mutable to compile once for any value"
    } else {
        ""
    };
    format!("recompiling '{entry}': {}{hint}", changes.join(", "))
}
