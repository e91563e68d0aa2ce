//! Parameters (named, mutable tensors: the weights) and the monads that order effects on them.
//!
//! Everything else in anfora is an immutable value. A Parameter is shared by reference: the IR
//! holds a [`ParamRef`] constant (a `Ref` with the parameter's key), reading it is `Load` and
//! writing it is `Assign`-like primitives, ordered by the `U` monad (see `anfora-monad`).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use anfora_tensor::{DType, Tensor};

/// The state a side effect is ordered by: memory (`U`, Parameter reads and writes),
/// input/output (`IO`: print, assert) or communication (`Comm`: the collectives, which every
/// process must issue in the same order). The chains are independent of each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Monad {
    U,
    IO,
    Comm,
}

impl Monad {
    /// Every chain, in the order a graph takes their states as parameters.
    pub const ALL: [Monad; 3] = [Monad::U, Monad::IO, Monad::Comm];

    /// The chain's position in [`Monad::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// How the dump writes the constant (MindSpore's `UMonad[U]`, `IOMonad[IO]`).
    pub fn dump_name(self) -> &'static str {
        match self {
            Monad::U => "UMonad[U]",
            Monad::IO => "IOMonad[IO]",
            Monad::Comm => "CommMonad[C]",
        }
    }

    /// How the dump writes the abstract value of a state.
    pub fn abstract_name(self) -> &'static str {
        match self {
            Monad::U => "<UMonad>",
            Monad::IO => "<IOMonad>",
            Monad::Comm => "<CommMonad>",
        }
    }

    /// The name of the parameter that takes the state in a graph other than the entry.
    pub fn param_name(self) -> &'static str {
        match self {
            Monad::U => "u",
            Monad::IO => "io",
            Monad::Comm => "c",
        }
    }

    /// The word of the dump's `# SideEffect: { ... }` line for a graph using the chain.
    pub fn effect_word(self) -> &'static str {
        match self {
            Monad::U => "memory",
            Monad::IO => "io",
            Monad::Comm => "comm",
        }
    }
}

struct ParamCell {
    key: u64,
    /// Renamed only by hosts that name Parameters after where they are held (MindSpore's
    /// `auto_prefix`); the identity is the key.
    name: std::sync::RwLock<Arc<str>>,
    dtype: DType,
    shape: Vec<usize>,
    requires_grad: bool,
    value: Mutex<Tensor>,
    /// Bumped by every write (`set`, `with_value_mut`).
    version: AtomicU64,
}

/// A Parameter: a named tensor whose value changes only through the assign primitives. Its
/// dtype and shape are fixed when it is created. Cloning shares the same Parameter; equality is
/// identity.
#[derive(Clone)]
pub struct ParamRef(Arc<ParamCell>);

static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

impl ParamRef {
    /// A new Parameter; an unnamed one is called `Parameter<key>`.
    pub fn new(name: Option<&str>, value: Tensor, requires_grad: bool) -> ParamRef {
        let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
        let name = match name {
            Some(n) => Arc::from(n),
            None => Arc::from(format!("Parameter{key}").as_str()),
        };
        ParamRef(Arc::new(ParamCell {
            key,
            name: std::sync::RwLock::new(name),
            dtype: value.dtype(),
            shape: value.shape().to_vec(),
            requires_grad,
            value: Mutex::new(value),
            version: AtomicU64::new(0),
        }))
    }

    /// The ref key: unique per Parameter in this process.
    pub fn key(&self) -> u64 {
        self.0.key
    }

    pub fn name(&self) -> Arc<str> {
        self.0
            .name
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Gives the Parameter another name (it stays the same Parameter).
    pub fn set_name(&self, name: &str) {
        *self.0.name.write().unwrap_or_else(|e| e.into_inner()) = Arc::from(name);
    }

    pub fn dtype(&self) -> DType {
        self.0.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.0.shape
    }

    pub fn requires_grad(&self) -> bool {
        self.0.requires_grad
    }

    fn lock(&self) -> MutexGuard<'_, Tensor> {
        // A panic while holding the lock cannot leave a half-written tensor (writes replace the
        // whole value), so a poisoned lock is still consistent.
        self.0.value.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current value (shares the buffer; later writes do not change it).
    pub fn get(&self) -> Tensor {
        self.lock().clone()
    }

    /// How many times it was written: a value read at one version is current while the
    /// version stays.
    pub fn version(&self) -> u64 {
        self.0.version.load(Ordering::Acquire)
    }

    /// Replaces the value. The caller has checked dtype and shape.
    pub fn set(&self, value: Tensor) {
        debug_assert_eq!(value.dtype(), self.0.dtype);
        debug_assert_eq!(value.shape(), &self.0.shape[..]);
        let mut v = self.lock();
        *v = value;
        self.0.version.fetch_add(1, Ordering::Release);
    }

    /// Runs `f` on the value with the Parameter locked, for an update that may write into its
    /// buffer (when nothing else holds it): readers wait for the end of the update. `f` must
    /// leave a value of the Parameter's dtype and shape.
    pub fn with_value_mut<R>(&self, f: impl FnOnce(&mut Tensor) -> R) -> R {
        let mut v = self.lock();
        let r = f(&mut v);
        self.0.version.fetch_add(1, Ordering::Release);
        r
    }
}

impl PartialEq for ParamRef {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ParamRef {}

impl std::hash::Hash for ParamRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.key.hash(state)
    }
}

impl fmt::Debug for ParamRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Parameter({}, key={})", self.name(), self.0.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_shared_cells_with_identity() {
        let p = ParamRef::new(Some("w"), Tensor::ones(&[2], DType::F32).unwrap(), true);
        let q = p.clone();
        let r = ParamRef::new(Some("w"), Tensor::ones(&[2], DType::F32).unwrap(), true);
        assert_eq!(p, q);
        assert_ne!(p, r);
        assert_ne!(p.key(), r.key());
        let before = p.get();
        q.set(Tensor::zeros(&[2], DType::F32).unwrap());
        assert_eq!(before.to_f64_vec(), vec![1.0, 1.0]);
        assert_eq!(p.get().to_f64_vec(), vec![0.0, 0.0]);
        let held = p.get();
        p.with_value_mut(|v| *v = Tensor::ones(&[2], DType::F32).unwrap());
        assert_eq!(held.to_f64_vec(), vec![0.0, 0.0]);
        assert_eq!(p.get().to_f64_vec(), vec![1.0, 1.0]);
        assert_eq!(
            (&*p.name(), p.dtype(), p.shape()),
            ("w", DType::F32, &[2usize][..])
        );
        // A new name, the same Parameter.
        let alias = p.clone();
        p.set_name("fc.w");
        assert_eq!(&*alias.name(), "fc.w");
        assert_eq!(alias.key(), p.key());
    }
}
