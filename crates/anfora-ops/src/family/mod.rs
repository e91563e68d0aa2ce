//! The families of built-in primitives, one module each. A family declares its members with
//! `primitives!` (see `def.rs`); families never import each other: what one needs of another
//! primitive it asks through `Prim` (`Prim::Add.eval(...)`, `Prim::ReduceSum.infer(...)`).

pub mod array;
pub mod builtins;
pub mod collective;
pub mod creation;
pub mod dict;
pub mod effect;
pub mod grad;
pub mod linalg;
pub mod math;
pub mod nn;
pub mod operators;
pub mod optim;
pub mod pad;
pub mod quant;
pub mod random;
pub mod reduce;
pub mod shape;
pub mod structure;
