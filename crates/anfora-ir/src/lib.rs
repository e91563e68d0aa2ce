pub mod span;
