//! The public methods of [`Tensor`], one module per group of operations. Each checks what
//! belongs to the API (half-precision operands computed in float32, views read in place) and
//! hands the work to the kernel modules.

mod array;
mod construct;
mod convert;
mod elementwise;
mod layout;
mod linalg;
mod nn;
pub(crate) mod quant;
mod scatter;
