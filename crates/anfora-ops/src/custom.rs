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

use std::io::Write;
use std::sync::{OnceLock, RwLock};

use anfora_tensor::{DType, Tensor};

use crate::abs::{Abs, Rule, err};
use crate::args::{need_tensor, sens_tensor, tensor_abs};
use crate::constant::Const;
use crate::def::{Attrs, Backward, Kernels, PrimDef, Py, always};
use crate::emit::{Call, Emit, Grads};
use crate::prim::{Effects, Prim, Refs};
use crate::pynum::{type_error, value_error};
use crate::signature::{Param, Signature};
use crate::state::{known, store};
use crate::value::{OpResult, Value};

pub use crate::prim::CustomId;

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
    /// Its declaration, whose rules run the closures below.
    pub def: &'static PrimDef,
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
    if p.bprop.is_some() && p.effects.ordered() {
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
        def: Box::leak(Box::new(declaration(
            name,
            &p.params,
            p.effects,
            p.written_refs,
        ))),
        signature: Signature::new(&format!("ops.{name}"), params, false, vec![]),
        effects: p.effects,
        written_refs: p.written_refs,
        infer: p.infer,
        kernel: p.kernel,
        bprop: p.bprop,
    };
    reg.push(Box::leak(Box::new(def)));
    Ok(Prim::custom(CustomId(reg.len() as u32 - 1)))
}

/// The declaration of a custom primitive: its rules are this module's, which run the
/// registered closures.
fn declaration(name: &'static str, params: &[String], effects: Effects, written: usize) -> PrimDef {
    let python: &'static [Py] = Box::leak(Box::new([Py::Op(name)]));
    let signature: &'static str = Box::leak(format!("({})", params.join(", ")).into_boxed_str());
    PrimDef {
        ident: name,
        name,
        python,
        signature,
        effects,
        infer,
        raises: always,
        eval,
        kernels: Kernels::None,
        backward: Backward::Rule(backward),
        attrs: Attrs {
            refs: Refs::Writes(written),
            // Custom kernels are never run at compile time.
            fold: false,
            ..Attrs::NONE
        },
    }
}

fn registered(p: Prim) -> &'static CustomDef {
    get(p.custom_id().expect("a custom primitive"))
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
        .map(|i| Prim::custom(CustomId(i as u32)))
}

/// Names of the registered custom primitives.
pub fn names() -> Vec<&'static str> {
    let reg = registry().read().unwrap_or_else(|e| e.into_inner());
    reg.iter().map(|d| d.name).collect()
}

/// A custom primitive: its kernel gets the current values of the Parameters it writes and its
/// other tensor arguments, and returns the new values of those Parameters and then its result.
fn eval(p: Prim, args: &[Value], _: &mut dyn Write) -> OpResult {
    let def = registered(p);
    let func = format!("ops.{}", def.name);
    let mut tensors = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        tensors.push(match a {
            Value::Ref(p) if i < def.written_refs => p.get(),
            other if i < def.written_refs => {
                return Err(type_error(format!(
                    "{func}() expects a Parameter as argument {}, got {}",
                    i + 1,
                    other.type_name()
                )));
            }
            Value::Tensor(t) => t.clone(),
            other => {
                return Err(type_error(format!(
                    "{func}() takes tensors, got {} as argument {}",
                    other.type_name(),
                    i + 1
                )));
            }
        });
    }
    let mut outs = (def.kernel)(&tensors).map_err(|m| ("RuntimeError", format!("{func}: {m}")))?;
    if outs.len() != def.written_refs + 1 {
        return Err((
            "RuntimeError",
            format!(
                "{func}: the kernel returned {} tensors, expected {} (the written Parameters and the result)",
                outs.len(),
                def.written_refs + 1
            ),
        ));
    }
    let result = outs.pop().map(Value::Tensor).unwrap_or(Value::None);
    for (i, new) in outs.into_iter().enumerate() {
        if let Value::Ref(p) = &args[i] {
            store(p, Value::Tensor(new), &func)?;
        }
    }
    Ok(result)
}

/// A custom primitive: its registered rule on the dtypes and shapes of its arguments.
fn infer(p: Prim, args: &[Abs]) -> Rule {
    let def = registered(p);
    let mut specs = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        specs.push(match a {
            Abs::Any => return Ok(Abs::Any),
            Abs::Ref(r) if i < def.written_refs => TensorSpec {
                dtype: r.dtype,
                shape: known(&r.shape),
            },
            other if i < def.written_refs => {
                return Err(err(format!(
                    "ops.{}() writes a Parameter, but argument {} is {other}",
                    def.name,
                    i + 1
                )));
            }
            Abs::Tensor(t) => TensorSpec {
                dtype: t.dtype,
                shape: t.shape.clone(),
            },
            other => {
                return Err(err(format!(
                    "ops.{}() takes tensors, but argument {} is {other}",
                    def.name,
                    i + 1
                )));
            }
        });
    }
    let out = (def.infer)(&specs).map_err(|m| err(format!("ops.{}: {m}", def.name)))?;
    Ok(tensor_abs(out.dtype, out.shape))
}

/// `CustomGrad(prim, d, out, args...)`: the registered backward rule of a custom primitive.
/// `CustomGrad(prim, d, out, args...)`: the registered backward rule of `prim`.
pub(crate) fn custom_grad(args: &[Value]) -> OpResult {
    let (Some(Value::Prim(p)), true) = (args.first(), args.len() >= 3) else {
        return Err(type_error(
            "CustomGrad expects a custom primitive, a sensitivity and a result",
        ));
    };
    let Some(id) = p.custom_id() else {
        return Err(type_error("CustomGrad expects a custom primitive"));
    };
    let def = get(id);
    let func = format!("ops.{}", def.name);
    let inputs = &args[3..];
    if matches!(args[1], Value::None) {
        return Ok(Value::tuple(vec![Value::None; inputs.len()]));
    }
    let Some(bprop) = def.bprop.as_ref() else {
        return Err(type_error(format!("{func} has no backward rule")));
    };
    let xs = inputs
        .iter()
        .map(|v| need_tensor_owned(v, &func))
        .collect::<Result<Vec<_>, _>>()?;
    let out = need_tensor_owned(&args[2], &func)?;
    let d = sens_tensor(&args[1], out.shape(), out.dtype())?
        .ok_or_else(|| type_error(format!("{func}: the sensitivity is not a number")))?;
    let grads = bprop(&xs, &out, &d).map_err(|m| value_error(format!("{func} backward: {m}")))?;
    let (n, m) = (grads.len(), xs.len());
    if n != m {
        let msg = format!("{func} backward returned {n} gradients for {m} arguments");
        return Err(value_error(msg));
    }
    let mismatch = grads
        .iter()
        .zip(&xs)
        .position(|(g, x)| g.shape() != x.shape());
    if let Some(i) = mismatch {
        let (g, x) = (grads[i].shape(), xs[i].shape());
        let msg = format!("{func} backward: gradient {i} has shape {g:?}, its argument {x:?}");
        return Err(value_error(msg));
    }
    Ok(Value::tuple(grads.into_iter().map(Value::Tensor).collect()))
}

fn need_tensor_owned(v: &Value, func: &str) -> Result<Tensor, crate::pynum::PyErr> {
    need_tensor(v, func).cloned()
}

/// A custom primitive with a registered backward rule: its gradients come from
/// `CustomGrad(prim, d, out, args...)`.
fn backward(e: &mut dyn Emit, c: &Call) -> Option<Grads> {
    registered(c.prim).bprop.as_ref()?;
    let k = e.konst(Const::Prim(c.prim));
    let mut ins = vec![k, c.d, c.out];
    ins.extend_from_slice(c.x);
    let grads = e.op(Prim::CustomGrad, &ins);
    Some(c.each(e, 0..c.x.len(), |e, i| {
        let ki = e.konst(Const::Int(i as i64));
        e.op(Prim::TupleGetItem, &[grads, ki])
    }))
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
