//! Hand-built IR for the unit tests: graphs, nodes and their abstracts, a run on the reference
//! VM, and what a graph calls.

use std::collections::HashMap;
use std::sync::Arc;

use anfora_ir::Options;
use anfora_ir::{Const, Effects, GraphId, GraphKind, Module, NodeId, Prim, Span};
use anfora_ops::Value;
use anfora_ops::{Abs, TensorAbs};
use anfora_tensor::DType;
use anfora_vm::Vm;

use crate::Graphs;

#[derive(Default)]
pub struct Builder {
    pub module: Module,
    pub abstracts: HashMap<NodeId, Abs>,
}

pub fn int() -> Abs {
    Abs::Int(None)
}

pub fn float() -> Abs {
    Abs::Float(None)
}

/// A float32 tensor of shape (n,).
pub fn tensor(n: usize) -> Abs {
    tensor_of(&[n])
}

/// Effect attributes with `hidden` set for `prims` (as a random generator's would be).
pub fn hiding(prims: &'static [Prim]) -> impl Fn(Prim) -> Effects {
    move |p| {
        let mut e = p.effects();
        if prims.contains(&p) {
            e.hidden = true;
        }
        e
    }
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }

    pub fn graph(&mut self, name: &str, kind: GraphKind) -> GraphId {
        self.module
            .add_graph(name, Arc::from(name), kind, Span::NONE)
    }

    pub fn function(&mut self, name: &str) -> GraphId {
        self.graph(name, GraphKind::Function)
    }

    pub fn param(&mut self, g: GraphId, name: &str, abs: Abs) -> NodeId {
        let p = self.module.add_param(g, name, Span::NONE);
        self.abstracts.insert(p, abs);
        p
    }

    pub fn konst(&mut self, c: Const) -> NodeId {
        self.module.value(c)
    }

    pub fn graph_value(&mut self, g: GraphId) -> NodeId {
        self.module.value(Const::Graph(g))
    }

    /// `prim(args...)` in `g`'s evaluation order.
    pub fn prim(&mut self, g: GraphId, prim: Prim, args: &[NodeId], abs: Abs) -> NodeId {
        let n = self.module.apply_prim(g, prim, args, Span::NONE);
        self.abstracts.insert(n, abs);
        n
    }

    /// `print(args...)` in `g`'s evaluation order (with the default `sep` and `end`).
    pub fn print(&mut self, g: GraphId, args: &[NodeId]) -> NodeId {
        let mut all = args.to_vec();
        all.push(self.konst(Const::str(" ")));
        all.push(self.konst(Const::str("\n")));
        self.prim(g, Prim::Print, &all, Abs::None)
    }

    /// `callee(args...)` in `g`'s evaluation order.
    pub fn call(&mut self, g: GraphId, callee: NodeId, args: &[NodeId], abs: Abs) -> NodeId {
        let mut inputs = vec![callee];
        inputs.extend_from_slice(args);
        let n = self.module.apply(g, inputs, Span::NONE);
        self.abstracts.insert(n, abs);
        n
    }

    /// `callee(args...)` outside `g`'s evaluation order (a tail call when it is the output).
    pub fn unordered(&mut self, g: GraphId, callee: NodeId, args: &[NodeId], abs: Abs) -> NodeId {
        let mut inputs = vec![callee];
        inputs.extend_from_slice(args);
        let n = self.module.apply_unordered(g, inputs, Span::NONE);
        self.abstracts.insert(n, abs);
        n
    }

    pub fn unordered_prim(&mut self, g: GraphId, prim: Prim, args: &[NodeId], abs: Abs) -> NodeId {
        let callee = self.konst(Const::Prim(prim));
        self.unordered(g, callee, args, abs)
    }

    pub fn output(&mut self, g: GraphId, n: NodeId) {
        self.module.set_output(g, n);
    }

    pub fn program(&mut self, entry: GraphId) -> Graphs<'_> {
        Graphs {
            module: &mut self.module,
            entry,
            abstracts: &mut self.abstracts,
        }
    }

    /// Runs `pass` on the program rooted at `entry` and verifies the IR.
    pub fn apply(&mut self, entry: GraphId, pass: impl FnOnce(&mut Graphs) -> bool) -> bool {
        let mut p = self.program(entry);
        let changed = pass(&mut p);
        self.verify(entry);
        changed
    }

    pub fn verify(&self, entry: GraphId) {
        anfora_ir::verify::assert_valid(&self.module, &[entry], "the pass under test");
    }

    /// Calls `entry` on the reference VM: the `repr` of the result or the exception's
    /// headline, and what it printed.
    pub fn run(&self, entry: GraphId, args: Vec<Value>) -> (Result<String, String>, String) {
        let mut vm = Vm::new(&self.module, Options::default());
        let f = vm.function(entry).expect("a graph without free variables");
        let mut out = Vec::new();
        let r = vm
            .call(&f, args, &mut out)
            .map(|v| anfora_ops::value::repr(&v))
            .map_err(|e| e.headline());
        (r, String::from_utf8(out).unwrap())
    }

    /// The primitives `g` calls, in the order the graph computes them.
    pub fn prims(&self, g: GraphId) -> Vec<Prim> {
        self.module
            .graph_nodes(g)
            .into_iter()
            .filter_map(|n| self.module.callee_prim(n))
            .collect()
    }

    /// The graphs reachable from `entry`.
    pub fn reachable(&self, entry: GraphId) -> Vec<GraphId> {
        anfora_ir::analysis::analyze(&self.module, &[entry]).graphs
    }
}

/// A float32 tensor abstract of `shape`.
pub fn tensor_of(shape: &[usize]) -> Abs {
    Abs::tensor(TensorAbs::new(
        DType::F32,
        shape.iter().map(|&d| Some(d)).collect(),
    ))
}

/// A float32 tensor value of `shape` holding 0.5, 1.5, 2.5, ...
pub fn tensor_value(shape: &[usize]) -> Value {
    let n: usize = shape.iter().product();
    let data = (0..n).map(|i| i as f32 + 0.5).collect();
    Value::Tensor(anfora_tensor::Tensor::from_f32(data, shape).unwrap())
}
