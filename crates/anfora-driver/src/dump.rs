//! Dumps: the program after a stage (or optimizer pass) as `.ir` or `.dot` text, and the one
//! writer that `anfora dump`, `--stage` and `set_context(save_graphs=…)` share.

use std::collections::HashMap;
use std::path::Path;

use anfora_ir::{GraphId, Module, NodeId};
use anfora_ops::Abs;

/// The program after one stage (or optimizer pass) of the pipeline.
pub struct StageView<'a> {
    pub stage: &'a str,
    pub module: &'a Module,
    pub entry: GraphId,
    pub abstracts: Option<&'a HashMap<NodeId, Abs>>,
    /// The linear program, after the lower stage.
    pub program: Option<&'a anfora_exec::Program>,
}

impl StageView<'_> {
    /// The `.ir` text, with the abstract of each node once inference has run.
    pub fn ir(&self) -> String {
        if let Some(p) = self.program {
            return p.dump(&self.module.sources);
        }
        let abs = |n: NodeId| {
            self.abstracts
                .and_then(|a| a.get(&n))
                .map(|a| a.to_string())
        };
        let opts = anfora_ir::print::PrintOptions {
            source_comments: true,
            abstract_of: self
                .abstracts
                .map(|_| &abs as &dyn Fn(NodeId) -> Option<String>),
        };
        anfora_ir::print::print_with(self.module, self.entry, &opts)
    }

    pub fn dot(&self) -> String {
        if let Some(p) = self.program {
            return p.dot();
        }
        anfora_ir::dot::to_dot(self.module, self.entry)
    }
}

/// What to keep of a compilation: which stages, in which formats.
#[derive(Clone, Debug)]
pub struct DumpSpec {
    /// One stage or optimizer pass by name, or every one (`None`).
    pub stage: Option<String>,
    pub ir: bool,
    pub dot: bool,
}

/// One stage's text in each format asked for.
#[derive(Clone, Debug)]
pub struct Dump {
    pub stage: String,
    pub ir: Option<String>,
    pub dot: Option<String>,
}

/// The dumps of one compilation, in stage order.
#[derive(Debug, Default)]
pub struct Dumps {
    pub spec: Option<DumpSpec>,
    pub dumps: Vec<Dump>,
}

impl Dumps {
    pub fn new(spec: DumpSpec) -> Dumps {
        Dumps {
            spec: Some(spec),
            dumps: Vec::new(),
        }
    }

    /// Keeps the program of `view` if the spec asks for its stage.
    pub fn observe(&mut self, view: &StageView) {
        let Some(spec) = &self.spec else { return };
        if spec.stage.as_deref().is_some_and(|s| s != view.stage) {
            return;
        }
        self.dumps.push(Dump {
            stage: view.stage.to_string(),
            ir: spec.ir.then(|| view.ir()),
            dot: spec.dot.then(|| view.dot()),
        });
    }

    /// Writes one numbered file per stage and format into `dir`:
    /// `{prefix}{k:02}_{stage}.ir` (and `.dot`).
    pub fn write(&self, dir: &Path, prefix: &str) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for (k, d) in self.dumps.iter().enumerate() {
            let stem = format!("{prefix}{k:02}_{}", d.stage);
            for (text, ext) in [(&d.ir, "ir"), (&d.dot, "dot")] {
                if let Some(text) = text {
                    std::fs::write(dir.join(format!("{stem}.{ext}")), text)?;
                }
            }
        }
        Ok(())
    }
}
