//! Custom primitives registered through the Rust API.
//!
//! A custom primitive is called from Python as `ops.<name>(...)` and goes through the same
//! pipeline as a built-in one: its inference rule gives dtypes and shapes, its effect attributes
//! decide how the auto-monad stage orders it and whether passes may merge, fold or drop it, and
//! its kernel runs in both engines.
//!
//! Arguments are tensors (a Parameter passed where a value is expected is read there). A
//! primitive that writes memory takes the Parameters it writes as its first `written_refs`
//! arguments: its kernel receives their current values and returns their new values, followed
//! by its result.

use std::sync::{OnceLock, RwLock};

use anfora_tensor::{DType, Tensor};

use crate::Prim;
use crate::prim::Effects;
use crate::signature::{Param, Signature};

/// Index of a registered custom primitive (`Prim::Custom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CustomId(pub u32);

/// dtype and shape of a tensor argument or result (`None`: a dimension known only at run time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec {
    pub dtype: DType,
    pub shape: Vec<Option<usize>>,
}

/// Inference rule: the spec of the result from the specs of the arguments, or an error message
/// reported at the call.
pub type InferFn = dyn Fn(&[TensorSpec]) -> Result<TensorSpec, String> + Send + Sync;

/// Kernel: the new values of the written Parameters (if any) followed by the result.
pub type KernelFn = dyn Fn(&[Tensor]) -> Result<Vec<Tensor>, String> + Send + Sync;

/// Backward rule: from the arguments, the result and the result's sensitivity, one gradient per
/// argument (shaped like it). Only pure primitives may have one.
pub type BpropFn = dyn Fn(&[Tensor], &Tensor, &Tensor) -> Result<Vec<Tensor>, String> + Send + Sync;

/// What a caller registers.
pub struct CustomPrimitive {
    /// `ops.<name>` in Python; also the name in dumps.
    pub name: String,
    /// Positional parameter names (keywords bind to them).
    pub params: Vec<String>,
    pub effects: Effects,
    /// How many leading arguments are Parameters written in place (needs `effects.mem`).
    pub written_refs: usize,
    pub infer: Box<InferFn>,
    pub kernel: Box<KernelFn>,
    /// The backward rule; without one, differentiating through the primitive is E0502.
    pub bprop: Option<Box<BpropFn>>,
}

/// A registered custom primitive. Registrations live as long as the process.
pub struct CustomDef {
    pub name: &'static str,
    pub signature: Signature,
    pub effects: Effects,
    pub written_refs: usize,
    pub infer: Box<InferFn>,
    pub kernel: Box<KernelFn>,
    pub bprop: Option<Box<BpropFn>>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegisterError {
    #[error("a primitive named 'ops.{0}' already exists")]
    Duplicate(String),
    #[error("'{0}' is not a valid Python identifier")]
    BadName(String),
    #[error(
        "custom primitive '{name}' writes {written} Parameters but has only {params} parameters"
    )]
    TooFewParams {
        name: String,
        written: usize,
        params: usize,
    },
    #[error("custom primitive '{0}' writes Parameters but is not marked side_effect_mem")]
    WritesWithoutMem(String),
    #[error(
        "custom primitive '{0}' is marked side_effect_propagate, which only Depend, Partial and grad may be"
    )]
    Propagate(String),
    #[error("custom primitive '{0}' has effects: only pure primitives may have a backward rule")]
    BpropWithEffects(String),
}

fn registry() -> &'static RwLock<Vec<&'static CustomDef>> {
    static REGISTRY: OnceLock<RwLock<Vec<&'static CustomDef>>> = OnceLock::new();
    REGISTRY.get_or_init(|| RwLock::new(Vec::new()))
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// Registers a custom primitive and returns it. It is visible as `ops.<name>` to every module
/// compiled afterwards.
pub fn register(p: CustomPrimitive) -> Result<Prim, RegisterError> {
    for n in std::iter::once(&p.name).chain(&p.params) {
        if !is_identifier(n) {
            return Err(RegisterError::BadName(n.clone()));
        }
    }
    if p.written_refs > p.params.len() {
        return Err(RegisterError::TooFewParams {
            name: p.name,
            written: p.written_refs,
            params: p.params.len(),
        });
    }
    if p.written_refs > 0 && !p.effects.mem {
        return Err(RegisterError::WritesWithoutMem(p.name));
    }
    if p.effects.propagate {
        return Err(RegisterError::Propagate(p.name));
    }
    if p.bprop.is_some() && (p.effects.mem || p.effects.io || p.effects.hidden) {
        return Err(RegisterError::BpropWithEffects(p.name));
    }
    let mut reg = registry().write().unwrap_or_else(|e| e.into_inner());
    if Prim::builtin_op(&p.name).is_some() || reg.iter().any(|d| d.name == p.name) {
        return Err(RegisterError::Duplicate(p.name));
    }
    let name: &'static str = Box::leak(p.name.into_boxed_str());
    let params = p.params.iter().map(|n| Param::required(n)).collect();
    let def = CustomDef {
        name,
        signature: Signature::new(&format!("ops.{name}"), params, false, vec![]),
        effects: p.effects,
        written_refs: p.written_refs,
        infer: p.infer,
        kernel: p.kernel,
        bprop: p.bprop,
    };
    reg.push(Box::leak(Box::new(def)));
    Ok(Prim::Custom(CustomId(reg.len() as u32 - 1)))
}

/// The definition of a registered primitive.
pub fn get(id: CustomId) -> &'static CustomDef {
    let reg = registry().read().unwrap_or_else(|e| e.into_inner());
    reg[id.0 as usize]
}

/// The custom primitive called `name`, if one is registered.
pub fn lookup(name: &str) -> Option<Prim> {
    let reg = registry().read().unwrap_or_else(|e| e.into_inner());
    reg.iter()
        .position(|d| d.name == name)
        .map(|i| Prim::Custom(CustomId(i as u32)))
}

/// Names of the registered custom primitives.
pub fn names() -> Vec<&'static str> {
    let reg = registry().read().unwrap_or_else(|e| e.into_inner());
    reg.iter().map(|d| d.name).collect()
}

impl std::fmt::Debug for CustomDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CustomDef")
            .field("name", &self.name)
            .field("effects", &self.effects)
            .field("written_refs", &self.written_refs)
            .finish_non_exhaustive()
    }
}
