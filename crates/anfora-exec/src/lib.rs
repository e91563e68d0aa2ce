//! anfora's compiled execution: the lower stage turns optimized, specialized graphs into a
//! [`Program`] of linear register code, and the executor runs it.
//!
//! The reference VM (`anfora-vm`) interprets graphs node by node and stays the oracle; this
//! crate is what `anfora run` uses. See [`lower`] for how graphs map to units and labels.

mod cfg;
mod liveness;
mod lower;
mod peephole;
pub mod program;
mod run;

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;

use anfora_ir::{GraphId, SourceMap};
use anfora_ir::{Options, RuntimeError};
use anfora_ops::Value;

pub use lower::{LowerError, lower};
pub use program::{FusedProgram, Instr, Opnd, Unit};
use run::Machine;

/// An executable program: unit 0 is the entry.
pub struct Program {
    pub units: Vec<Unit>,
    pub consts: Vec<Value>,
    pub kernels: Vec<FusedProgram>,
    unit_of_graph: HashMap<GraphId, u32>,
    /// The device the program was compiled for (its kernels are that device's).
    pub device: anfora_tensor::Device,
    /// Register storage reused by the next call.
    machine: RefCell<Machine>,
}

impl Program {
    fn new(
        units: Vec<Unit>,
        consts: Vec<Value>,
        kernels: Vec<FusedProgram>,
        unit_of_graph: HashMap<GraphId, u32>,
        device: anfora_tensor::Device,
    ) -> Program {
        Program {
            units,
            consts,
            kernels,
            unit_of_graph,
            device,
            machine: RefCell::new(Machine::default()),
        }
    }

    /// Calls the entry with `args`; `print` writes to `out`.
    pub fn call(
        &self,
        args: Vec<Value>,
        out: &mut dyn Write,
        options: &Options,
    ) -> Result<Value, RuntimeError> {
        if self.device != anfora_tensor::Device::CPU {
            self.place_parameters();
        }
        // A re-entrant call (not possible today) gets a fresh machine.
        let mut fresh = Machine::default();
        let mut guard = self.machine.try_borrow_mut();
        let m = match &mut guard {
            Ok(m) => &mut **m,
            Err(_) => &mut fresh,
        };
        self.execute(m, args, out, options.max_depth)
    }

    /// Moves the Parameters the program reads onto its device (once: they stay there, and
    /// their updates are computed there), as MindSpore places a network's Parameters on the
    /// device of its context. A Parameter that cannot move stays where it is; the kernels
    /// then copy its value on each read.
    fn place_parameters(&self) {
        fn visit(v: &Value, device: anfora_tensor::Device) {
            match v {
                Value::Ref(p) => {
                    let value = p.get();
                    if value.device() != device
                        && let Ok(moved) = value.to_device(device)
                    {
                        p.set(moved);
                    }
                }
                Value::Tuple(items) | Value::List(items) => {
                    items.iter().for_each(|i| visit(i, device));
                }
                _ => {}
            }
        }
        self.consts.iter().for_each(|c| visit(c, self.device));
    }

    /// Number of instructions over all units.
    pub fn len(&self) -> usize {
        self.units.iter().map(|u| u.code.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The program as text: each unit with its labels, instructions and source locations.
    pub fn dump(&self, sources: &SourceMap) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# program: {} units, {} instructions, {} fused kernels",
            self.units.len(),
            self.len(),
            self.kernels.len()
        );
        for (k, kernel) in self.kernels.iter().enumerate() {
            let how = match (&kernel.kernel, &kernel.device_kernel) {
                (_, Some((dtypes, _))) => {
                    let d: Vec<&str> = dtypes.iter().map(|d| d.name()).collect();
                    format!("one {} kernel over {}", kernel.device, d.join(", "))
                }
                (Some((dtypes, _)), None) => {
                    let d: Vec<&str> = dtypes.iter().map(|d| d.name()).collect();
                    format!("one pass over {}", d.join(", "))
                }
                (None, None) => "step by step".to_string(),
            };
            let _ = writeln!(
                out,
                "\nkernel {k} {} ({} inputs, {how}):",
                kernel.name, kernel.n_inputs
            );
            for (i, step) in kernel.steps.iter().enumerate() {
                let args: Vec<String> = step
                    .args
                    .iter()
                    .map(|a| match a {
                        program::FusedArg::Value(v) => format!("v{v}"),
                        program::FusedArg::Last(v) => format!("v{v}!"),
                        program::FusedArg::Const(c) => anfora_ops::value::repr(c),
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "  v{} = {}{}({})",
                    kernel.n_inputs as usize + i,
                    step.prim.name(),
                    program::kernel_tag(step.kernel.as_ref()),
                    args.join(", ")
                );
            }
            let _ = writeln!(out, "  -> v{}", kernel.output);
        }
        for (u, unit) in self.units.iter().enumerate() {
            let _ = writeln!(
                out,
                "\nunit {u} @{} ({} params, {} captures, {} registers):",
                unit.name, unit.n_params, unit.n_captures, unit.n_regs
            );
            for (pc, instr) in unit.code.iter().enumerate() {
                for (_, label) in unit.labels.iter().filter(|(l, _)| *l as usize == pc) {
                    let _ = writeln!(out, "  @{label}:");
                }
                let text = program::instr_text(instr, &self.consts, &self.units, &self.kernels);
                let loc = site_of(instr)
                    .and_then(|at| unit.sites.get(at as usize))
                    .and_then(|s| sources.location(s.span))
                    .map(|(file, loc)| format!("  # {}:{}:{}", file.name, loc.line, loc.col))
                    .unwrap_or_default();
                let _ = writeln!(out, "  {pc:4}  {text}{loc}");
            }
        }
        out
    }

    /// The control-flow graph of each unit in Graphviz format.
    pub fn dot(&self) -> String {
        let mut out = String::from("digraph program {\n  node [shape=box, fontname=monospace];\n");
        for (u, unit) in self.units.iter().enumerate() {
            let _ = writeln!(
                out,
                "  subgraph cluster_{u} {{\n    label=\"@{}\";",
                escape(&unit.name)
            );
            let starts = block_starts(unit);
            for (b, &start) in starts.iter().enumerate() {
                let end = starts.get(b + 1).copied().unwrap_or(unit.code.len());
                let mut text = String::new();
                for pc in start..end {
                    let t = program::instr_text(
                        &unit.code[pc],
                        &self.consts,
                        &self.units,
                        &self.kernels,
                    );
                    let _ = write!(text, "{pc}: {}\\l", escape(&t));
                }
                let _ = writeln!(out, "    u{u}_{start} [label=\"{text}\"];");
                let last = end - 1;
                unit.code[last].successors(last as u32, |s| {
                    if (s as usize) < unit.code.len() {
                        let _ = writeln!(out, "    u{u}_{start} -> u{u}_{s};");
                    }
                });
            }
            out.push_str("  }\n");
        }
        out.push_str("}\n");
        out
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// First instruction of each basic block.
fn block_starts(unit: &Unit) -> Vec<usize> {
    let n = unit.code.len();
    let mut starts = vec![false; n.max(1)];
    starts[0] = true;
    for (pc, i) in unit.code.iter().enumerate() {
        let ends = matches!(
            i,
            Instr::Jump { .. }
                | Instr::Branch(_)
                | Instr::Return { .. }
                | Instr::TailCall { .. }
                | Instr::TailCallValue { .. }
        );
        if ends && pc + 1 < n {
            starts[pc + 1] = true;
        }
        i.targets(|t| {
            if (t as usize) < n {
                starts[t as usize] = true;
            }
        });
    }
    (0..n).filter(|&i| starts[i]).collect()
}

fn site_of(i: &Instr) -> Option<u32> {
    match i {
        Instr::Bin { at, .. }
        | Instr::Prim { at, .. }
        | Instr::Fused { at, .. }
        | Instr::Call { at, .. }
        | Instr::CallValue { at, .. }
        | Instr::Branch(program::Branch { at, .. })
        | Instr::TailCall { at, .. }
        | Instr::TailCallValue { at, .. } => Some(*at),
        _ => None,
    }
}
