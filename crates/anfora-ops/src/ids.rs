//! Typed arena indices.

use cranelift_entity::entity_impl;

/// A node (Parameter, Value or Apply) in a [`crate::Module`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(u32);
entity_impl!(NodeId, "n");

/// A graph (FuncGraph) in a [`crate::Module`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GraphId(u32);
entity_impl!(GraphId, "g");
