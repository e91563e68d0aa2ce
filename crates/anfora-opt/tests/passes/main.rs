//! The optimizer's passes on real programs: the IR after each pass (structure) and the value
//! of the program (the compiled engine, the reference VM and the value Python gives, written
//! out in each test).

mod common;

mod cells;
mod cse;
mod dce;
mod edge_cases;
mod effects;
mod fuse;
mod inline;
mod simplify;
mod static_control;
