//! anfora's static analysis (MindSpore's "static analysis" stage): abstract interpretation of
//! the IR that infers the type, shape and, where possible, the value of every node, and then
//! specializes each graph for each distinct signature it is used with.
//!
//! * [`interpreter`]: the abstract interpreter (contexts, polyvariance, broadening, fixpoint);
//! * [`specialize`]: the specialized graphs.

mod bind_calls;
pub mod interpreter;
pub mod specialize;

use anfora_ir::diag::Diagnostic;
use anfora_ir::{GraphId, Module};
use anfora_ops::Abs;

pub use specialize::Specialized;

/// Infers `entry` for arguments with abstracts `args` and adds its specialized graphs to
/// `module`. Tensor shape and dtype errors are diagnostics; Python-level errors stay in the
/// program and happen at run time.
pub fn infer(
    module: &mut Module,
    entry: GraphId,
    args: Vec<Abs>,
) -> Result<Specialized, Vec<Diagnostic>> {
    let roots: Vec<GraphId> = module.graphs.keys().collect();
    let analysis = anfora_ir::analysis::analyze(module, &roots);
    let (solved, root) = {
        let mut interpreter = interpreter::Interpreter::new(module, analysis);
        let root = interpreter.run(entry, args);
        if !interpreter.errors.is_empty() {
            return Err(std::mem::take(&mut interpreter.errors));
        }
        (interpreter.solved(), root)
    };
    Ok(specialize::specialize(&solved, root, module))
}
