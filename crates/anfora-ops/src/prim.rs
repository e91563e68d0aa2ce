//! The primitive handle a CNode calls, and the attributes every stage asks of a primitive
//! without knowing which one it is (effects, Parameter arguments).
//!
//! A [`Prim`] names one member of a family of built-in primitives (`family/*.rs`, where each
//! is declared with everything about it) or a custom primitive registered at run time. What a
//! primitive is and does is reached through [`Prim::def`] (`registry.rs`); each family also
//! adds its members as associated constants (`Prim::Add`, `Prim::Conv2D`), which `match`
//! accepts as patterns.

use crate::Monad;

/// A primitive: its family in the high 16 bits, its index in the family in the low 16.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Prim(u32);

/// The family index of custom primitives: their index is the registration order.
pub(crate) const CUSTOM_FAMILY: u16 = u16::MAX;

/// Index of a registered custom primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CustomId(pub u32);

impl Prim {
    /// Member `index` of family `family` (the declaration macro makes these).
    pub(crate) const fn member(family: u16, index: u16) -> Prim {
        Prim(((family as u32) << 16) | index as u32)
    }

    pub(crate) const fn family_index(self) -> u16 {
        (self.0 >> 16) as u16
    }

    pub(crate) const fn index(self) -> usize {
        (self.0 & 0xffff) as usize
    }

    /// The custom primitive registered as `id`.
    pub fn custom(id: CustomId) -> Prim {
        Prim::member(CUSTOM_FAMILY, id.0 as u16)
    }

    /// Which custom primitive this is, if it is one.
    pub fn custom_id(self) -> Option<CustomId> {
        (self.family_index() == CUSTOM_FAMILY).then_some(CustomId(self.index() as u32))
    }
}

/// Side-effect attributes of a primitive (MindSpore's `side_effect_*` prim attrs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// Writes memory (Parameters).
    pub mem: bool,
    /// Performs input/output (print, assert).
    pub io: bool,
    /// Communicates with the other processes (the collectives): every process must issue
    /// them in the same order.
    pub comm: bool,
    /// Has hidden state (random generators): never merged or fused.
    pub hidden: bool,
    /// Passes the effects of the function it holds through (Partial, Depend).
    pub propagate: bool,
}

impl Effects {
    /// No effect: a function of its arguments.
    pub const PURE: Effects = Effects {
        mem: false,
        io: false,
        comm: false,
        hidden: false,
        propagate: false,
    };
    pub const IO: Effects = Effects {
        io: true,
        ..Effects::PURE
    };
    pub const MEM: Effects = Effects {
        mem: true,
        ..Effects::PURE
    };
    pub const COMM: Effects = Effects {
        comm: true,
        ..Effects::PURE
    };
    pub const HIDDEN: Effects = Effects {
        hidden: true,
        ..Effects::PURE
    };
    pub const PROPAGATE: Effects = Effects {
        propagate: true,
        ..Effects::PURE
    };

    /// The state chain a call is ordered on, if any (memory before IO before communication).
    pub fn chain(self) -> Option<Monad> {
        if self.mem {
            Some(Monad::U)
        } else if self.io {
            Some(Monad::IO)
        } else if self.comm {
            Some(Monad::Comm)
        } else {
            None
        }
    }

    /// Whether a call may never be dropped, merged, reordered or fused: it is on a state
    /// chain or draws from a hidden state.
    pub fn ordered(self) -> bool {
        self.chain().is_some() || self.hidden
    }
}

/// Which arguments a primitive takes as Parameters (by reference). Everywhere else a Parameter
/// argument is read (`Load`) at that point of the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refs {
    /// None: every Parameter argument is read.
    Read,
    /// Every argument passes through as it is (tuples, Partial, identity tests, state plumbing).
    All,
    /// Every argument but the first (`Switch`'s branches).
    AllButFirst,
    /// The first, looked at but not written (`GetAttr`, `Load`).
    First,
    /// The first `n`, written in place.
    Writes(usize),
}

impl Refs {
    pub const fn takes(self, i: usize) -> bool {
        match self {
            Refs::Read => false,
            Refs::All => true,
            Refs::AllButFirst => i > 0,
            Refs::First => i == 0,
            Refs::Writes(n) => i < n,
        }
    }

    pub const fn written(self) -> usize {
        match self {
            Refs::Writes(n) => n,
            _ => 0,
        }
    }
}
