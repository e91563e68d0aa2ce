//! The lower stage: optimized graphs become a [`Program`] of units with linear code.
//!
//! 1. Every use of a graph constant is classified: a tail call (the graph's output calls it),
//!    a branch of a `Switch` whose result is immediately tail-called, a non-tail call, or a
//!    use as a value (a closure).
//! 2. Graphs only ever tail-called or branched to become labels of the units that reach them
//!    (a block shared by two specializations is emitted in both); the entry and every other
//!    graph become units of their own (call frames).
//! 3. Each unit captures the free variables of its graphs and of the closures it creates that
//!    it does not own (a fixpoint, as closures nest).
//! 4. Code is emitted graph by graph; tail calls to labels are jumps with parallel moves into
//!    the label's parameters, `Switch` + tail call is a conditional branch.
//! 5. Liveness marks last reads as moves and clears registers whose values die.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::rc::Rc;

use anfora_ir::analysis::{Analysis, analyze};
use anfora_ir::{Const, GraphId, GraphKind, Module, NodeId, NodeKind, Prim};
use anfora_ops::Abs;
use anfora_ops::Value;
use anfora_ops::kernels::{self, FusedOperand, Kernel, KernelKey};
use anfora_ops::value::{Closure, from_const};
use anfora_tensor::fused::{FusedKernel, FusedOp};
use anfora_tensor::{DType, Device};

use crate::program::{
    BinOp, Branch, FusedArg, FusedProgram, FusedStep, Instr, Opnd, Reg, Site, Unit, WithNext,
};
use crate::{Program, cfg, liveness, peephole};

/// A program the lower stage could not translate: always an anfora bug.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerError(pub String);

impl std::fmt::Display for LowerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "internal error in the lower stage: {}", self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, LowerError> {
    Err(LowerError(msg.into()))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Use {
    /// The output of graph `from` calls it.
    Tail(GraphId),
    /// A branch of a Switch that the output of `from` calls.
    Branch(GraphId),
    /// Called directly, not in tail position.
    Call,
    /// Used as a value.
    Value,
}

/// Lowers `entry` and every graph it reaches, for `device`; `abstracts` are the node abstracts
/// from inference (fused kernels are built for the tensor dtypes they give, and each primitive
/// call on tensors finds its kernel in the registry by the dtype they give).
pub fn lower(
    module: &Module,
    entry: GraphId,
    abstracts: &HashMap<NodeId, Abs>,
    device: Device,
) -> Result<Program, LowerError> {
    let a = analyze(module, &[entry]);
    let mut cx = Lowering {
        m: module,
        a: &a,
        abstracts,
        device,
        uses: HashMap::new(),
        switches: HashSet::new(),
        kernels: HashMap::new(),
        root_of: HashMap::new(),
        roots: Vec::new(),
        members: Vec::new(),
        member_sets: Vec::new(),
        captures: Vec::new(),
        consts: Vec::new(),
        kernel_list: Vec::new(),
    };
    cx.classify();
    cx.fuse_kernels();
    cx.assign_units(entry);
    cx.compute_captures();
    if !cx.captures[0].is_empty() {
        return err(format!(
            "entry @{} has free variables",
            module.graph(entry).name
        ));
    }
    let mut units = Vec::with_capacity(cx.roots.len());
    for u in 0..cx.roots.len() {
        let mut unit = cx.emit_unit(u as u32)?;
        cfg::simplify(&mut unit);
        liveness::optimize(&mut unit);
        peephole::run(&mut unit);
        units.push(unit);
    }
    let unit_of_graph = cx
        .roots
        .iter()
        .enumerate()
        .map(|(i, &g)| (g, i as u32))
        .collect();
    Ok(Program::new(
        units,
        cx.consts,
        cx.kernel_list,
        unit_of_graph,
        device,
    ))
}

struct Lowering<'a> {
    m: &'a Module,
    a: &'a Analysis,
    abstracts: &'a HashMap<NodeId, Abs>,
    device: Device,
    uses: HashMap<GraphId, Vec<Use>>,
    /// Switch nodes lowered as conditional branches.
    switches: HashSet<NodeId>,
    /// Fused graphs with a kernel.
    kernels: HashMap<GraphId, u32>,
    /// The unit each root graph heads.
    root_of: HashMap<GraphId, u32>,
    roots: Vec<GraphId>,
    members: Vec<Vec<GraphId>>,
    member_sets: Vec<HashSet<GraphId>>,
    /// Captured free variables of each unit, in register order.
    captures: Vec<Vec<NodeId>>,
    consts: Vec<Value>,
    kernel_list: Vec<FusedProgram>,
}

impl Lowering<'_> {
    fn is_tail(&self, g: GraphId, n: NodeId) -> bool {
        self.m.tail_call(g) == Some(n)
    }

    fn graph_const(&self, n: NodeId) -> Option<GraphId> {
        self.m.constant(n).and_then(Const::as_graph)
    }

    /// `s = Switch(c, @a, @b)` whose only use is the tail call `s(...)` of its graph, with
    /// nothing evaluated between them.
    fn is_branch_switch(&self, g: GraphId, s: NodeId) -> bool {
        let inputs = self.m.inputs(s);
        if self.m.callee_prim(s) != Some(Prim::Switch)
            || inputs.len() != 4
            || self.graph_const(inputs[2]).is_none()
            || self.graph_const(inputs[3]).is_none()
        {
            return false;
        }
        let Some(t) = self.m.graph(g).output else {
            return false;
        };
        let users = self.a.users.get(&s).map(Vec::as_slice).unwrap_or(&[]);
        if users != [(t, 0)] || !self.is_tail(g, t) || self.m.inputs(t)[1..].contains(&s) {
            return false;
        }
        let order = &self.m.graph(g).order;
        let rest: Vec<NodeId> = order.iter().copied().filter(|&n| n != t).collect();
        rest.last() == Some(&s)
    }

    fn classify(&mut self) {
        let mut uses: HashMap<GraphId, Vec<Use>> = HashMap::new();
        for &g in &self.a.graphs {
            for &n in &self.a.nodes[g] {
                let inputs = self.m.inputs(n);
                let switch = self.is_branch_switch(g, n);
                if switch {
                    self.switches.insert(n);
                }
                for (i, &input) in inputs.iter().enumerate() {
                    let Some(c) = self.m.constant(input) else {
                        continue;
                    };
                    // A call with the wrong number of arguments goes through a closure,
                    // which raises Python's TypeError when it binds them.
                    let fits = |h: GraphId, call: NodeId| {
                        self.m.graph(h).params.len() + 1 == self.m.inputs(call).len()
                    };
                    let kind = match c {
                        Const::Graph(h) if i == 0 && fits(*h, n) && self.is_tail(g, n) => {
                            Use::Tail(g)
                        }
                        Const::Graph(h) if i == 0 && fits(*h, n) => Use::Call,
                        Const::Graph(h)
                            if switch
                                && i >= 2
                                && self.m.graph(g).output.is_some_and(|t| fits(*h, t)) =>
                        {
                            Use::Branch(g)
                        }
                        _ => Use::Value,
                    };
                    c.for_each_graph(&mut |h| uses.entry(h).or_default().push(kind));
                }
            }
            if let Some(out) = self.m.graph(g).output
                && let Some(c) = self.m.constant(out)
            {
                c.for_each_graph(&mut |h| uses.entry(h).or_default().push(Use::Value));
            }
        }
        self.uses = uses;
    }

    /// Builds a kernel for every fused graph whose operations are all elementwise primitives
    /// over its parameters and constants.
    fn fuse_kernels(&mut self) {
        for &g in &self.a.graphs {
            let graph = self.m.graph(g);
            if graph.kind != GraphKind::Fused || !self.a.free_vars[g].is_empty() {
                continue;
            }
            if let Some(k) = self.kernel(g) {
                self.kernels.insert(g, self.kernel_list.len() as u32);
                self.kernel_list.push(k);
            }
        }
    }

    fn kernel(&self, g: GraphId) -> Option<FusedProgram> {
        let graph = self.m.graph(g);
        let n_inputs = graph.params.len() as u32;
        let mut index: HashMap<NodeId, u32> = graph
            .params
            .iter()
            .enumerate()
            .map(|(i, &p)| (p, i as u32))
            .collect();
        // The chain runs on one device in one pass: that of its operations when they agree.
        let mut devices = self.a.nodes[g].iter().map(|&n| self.device_of(n));
        let device = devices.next().unwrap_or(self.device);
        if devices.any(|d| d != device) {
            return None;
        }
        let mut steps = Vec::new();
        for &n in &self.a.nodes[g] {
            let prim = self.m.callee_prim(n)?;
            let mut args = Vec::new();
            for &i in &self.m.inputs(n)[1..] {
                args.push(match &self.m.node(i).kind {
                    NodeKind::Value(c) if !c.holds_graph() => {
                        FusedArg::Const(from_const(c, &mut |_| Value::None))
                    }
                    _ => FusedArg::Value(*index.get(&i)?),
                });
            }
            index.insert(n, n_inputs + steps.len() as u32);
            let kernel = self.resolve(device, prim, &self.m.inputs(n)[1..]).ok()?;
            steps.push(FusedStep { prim, args, kernel });
        }
        let output = *index.get(&graph.output?)?;
        mark_last_reads(&mut steps);
        let dtypes: Option<Vec<DType>> = graph
            .params
            .iter()
            .map(|p| match self.abstracts.get(p) {
                Some(Abs::Tensor(t)) => Some(t.dtype),
                _ => None,
            })
            .collect();
        // One pass over memory: the CPU's own kernel when every step would run the CPU
        // backend's kernel, another device's from its fuser when every step has a kernel there.
        let on_cpu = device == Device::CPU && steps.iter().all(|s| s.kernel.is_none());
        let on_device = device != Device::CPU && steps.iter().all(|s| s.kernel.is_some());
        // The program's result is its last step's.
        let ends_at_output = output + 1 == n_inputs + steps.len() as u32;
        let program = dtypes
            .filter(|_| (on_cpu || on_device) && ends_at_output)
            .and_then(|d| Some((FusedKernel::new(&d, kernel_ops(n_inputs, &steps)?).ok()?, d)));
        let (kernel, device_kernel) = match program {
            Some((k, d)) if on_cpu => (Some((d, k)), None),
            Some((k, d)) => (
                None,
                kernels::fused_kernel(device, &k).map(|kernel| (d, kernel)),
            ),
            None => (None, None),
        };
        Some(FusedProgram {
            name: graph.name.clone(),
            n_inputs,
            steps,
            output,
            kernel,
            device_kernel,
            device,
        })
    }

    /// Partitions graphs into units. The entry and every graph called in non-tail position or
    /// used as a value are unit roots; every other graph is a label of each unit whose code
    /// tail-calls or branches to it (a label reached from two units is emitted in both).
    fn assign_units(&mut self, entry: GraphId) {
        let mut roots = vec![entry];
        for &g in &self.a.graphs {
            let uses = self.uses.get(&g).map(Vec::as_slice).unwrap_or(&[]);
            let label_only = !uses.is_empty()
                && uses
                    .iter()
                    .all(|u| matches!(u, Use::Tail(_) | Use::Branch(_)));
            let kernel_only = self.kernels.contains_key(&g)
                && uses.iter().all(|u| matches!(u, Use::Tail(_) | Use::Call));
            if g != entry && !kernel_only && !label_only {
                roots.push(g);
            }
        }
        let root_of: HashMap<GraphId, u32> = roots
            .iter()
            .enumerate()
            .map(|(u, &g)| (g, u as u32))
            .collect();
        // Tail-call edges between graphs: from -> to.
        let mut edges: HashMap<GraphId, Vec<GraphId>> = HashMap::new();
        for (&to, uses) in &self.uses {
            if self.kernels.contains_key(&to) {
                continue;
            }
            for u in uses {
                if let Use::Tail(from) | Use::Branch(from) = u {
                    edges.entry(*from).or_default().push(to);
                }
            }
        }
        for v in edges.values_mut() {
            v.sort();
            v.dedup();
        }
        let mut members = Vec::with_capacity(roots.len());
        for &root in &roots {
            let mut list = vec![root];
            let mut seen: HashSet<GraphId> = HashSet::from([root]);
            let mut queue = VecDeque::from([root]);
            while let Some(g) = queue.pop_front() {
                for &h in edges.get(&g).map(Vec::as_slice).unwrap_or(&[]) {
                    if !root_of.contains_key(&h) && seen.insert(h) {
                        list.push(h);
                        queue.push_back(h);
                    }
                }
            }
            members.push(list);
        }
        self.member_sets = members
            .iter()
            .map(|m| m.iter().copied().collect())
            .collect();
        self.roots = roots;
        self.root_of = root_of;
        self.members = members;
    }

    /// Units a unit calls or creates closures of (their captures must be visible in it).
    fn referenced_units(&self, u: usize) -> BTreeSet<u32> {
        let mut out = BTreeSet::new();
        for &g in &self.members[u] {
            for &n in &self.a.nodes[g] {
                for &i in self.m.inputs(n) {
                    if let Some(c) = self.m.constant(i) {
                        c.for_each_graph(&mut |h| {
                            if let Some(&v) = self.root_of.get(&h) {
                                out.insert(v);
                            }
                        });
                    }
                }
            }
            if let Some(c) = self.m.graph(g).output.and_then(|o| self.m.constant(o)) {
                c.for_each_graph(&mut |h| {
                    if let Some(&v) = self.root_of.get(&h) {
                        out.insert(v);
                    }
                });
            }
        }
        out
    }

    fn compute_captures(&mut self) {
        let n = self.roots.len();
        let owned: Vec<HashSet<GraphId>> = self
            .members
            .iter()
            .map(|ms| ms.iter().copied().collect())
            .collect();
        let refs: Vec<BTreeSet<u32>> = (0..n).map(|u| self.referenced_units(u)).collect();
        let mut caps: Vec<BTreeSet<NodeId>> = (0..n)
            .map(|u| {
                self.members[u]
                    .iter()
                    .flat_map(|&g| self.a.free_vars[g].iter().copied())
                    .filter(|&fv| !self.m.node(fv).owner.is_some_and(|o| owned[u].contains(&o)))
                    .collect()
            })
            .collect();
        loop {
            let mut changed = false;
            for u in 0..n {
                let mut add = Vec::new();
                for &v in &refs[u] {
                    for &fv in &caps[v as usize] {
                        let mine = self.m.node(fv).owner.is_some_and(|o| owned[u].contains(&o));
                        if !mine && !caps[u].contains(&fv) {
                            add.push(fv);
                        }
                    }
                }
                if !add.is_empty() {
                    caps[u].extend(add);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        self.captures = caps.into_iter().map(|s| s.into_iter().collect()).collect();
    }

    fn constant(&mut self, v: Value) -> Opnd {
        self.consts.push(v);
        Opnd::Const(self.consts.len() as u32 - 1)
    }

    fn emit_unit(&mut self, u: u32) -> Result<Unit, LowerError> {
        let root = self.roots[u as usize];
        let members = self.members[u as usize].clone();
        let graph = self.m.graph(root);
        let mut e = Emitter {
            unit: u,
            regs: HashMap::new(),
            n_regs: 0,
            code: Vec::new(),
            sites: Vec::new(),
            labels: Vec::new(),
            label_pc: HashMap::new(),
            pending: Vec::new(),
        };
        // Site 0: the function itself (for instructions that cannot fail).
        e.sites.push(Site {
            span: graph.span,
            function: graph.function.clone(),
            calls: anfora_ir::CallChain::default(),
        });
        for &p in &graph.params {
            e.reg(p);
        }
        for &c in &self.captures[u as usize] {
            e.reg(c);
        }
        for &g in &members {
            if g != root {
                for &p in &self.m.graph(g).params {
                    e.reg(p);
                }
            }
            for &n in &self.a.nodes[g] {
                if !self.switches.contains(&n) {
                    e.reg(n);
                }
            }
        }
        for &g in &members {
            self.emit_graph(&mut e, g, root)?;
        }
        for (pc, g) in std::mem::take(&mut e.pending) {
            let Some(&target) = e.label_pc.get(&g) else {
                return err(format!("no label for @{}", self.m.graph(g).name));
            };
            if let Instr::Jump { target: t, .. } = &mut e.code[pc as usize] {
                *t = target;
            }
        }
        Ok(Unit {
            graph: root,
            name: graph.name.clone(),
            function: graph.function.clone(),
            n_params: graph.params.len() as u32,
            n_captures: self.captures[u as usize].len() as u32,
            n_regs: e.n_regs,
            code: e.code,
            sites: e.sites,
            labels: e.labels,
            signature: graph.signature.clone(),
            deepens: graph.kind == GraphKind::Function,
        })
    }

    fn emit_graph(&mut self, e: &mut Emitter, g: GraphId, root: GraphId) -> Result<(), LowerError> {
        let graph = self.m.graph(g);
        e.label_pc.insert(g, e.code.len() as u32);
        e.labels.push((e.code.len() as u32, graph.name.clone()));
        let output = graph
            .output
            .ok_or_else(|| LowerError(format!("@{} has no output", graph.name)))?;
        let tail = self.is_tail(g, output).then_some(output);
        for &n in &self.a.nodes[g] {
            if Some(n) == tail || self.switches.contains(&n) {
                continue;
            }
            self.emit_node(e, n)?;
        }
        let Some(t) = tail else {
            let src = self.operand(e, output)?;
            e.code.push(Instr::Return { src });
            return Ok(());
        };
        let inputs = self.m.inputs(t).to_vec();
        let at = e.site(self.m, t);
        if self.switches.contains(&inputs[0]) {
            let s = self.m.inputs(inputs[0]).to_vec();
            let cond = self.operand(e, s[1])?;
            let mut stubs = Vec::new();
            for &b in &s[2..4] {
                let h = self.graph_const(b).expect("branch switches hold graphs");
                stubs.push(self.transfer(e, h, &inputs[1..], at, root)?);
            }
            let pc = e.code.len() as u32;
            e.code.push(Instr::Branch(Branch {
                cond,
                compare: None,
                then_pc: pc + 1,
                else_pc: pc + 2,
                kill_then: Box::new([]),
                kill_else: Box::new([]),
                at,
            }));
            for (k, stub) in stubs.into_iter().enumerate() {
                if let Instr::Jump { .. } = stub.0 {
                    e.pending.push((pc + 1 + k as u32, stub.1));
                }
                e.code.push(stub.0);
            }
            return Ok(());
        }
        if let Some(h) = self.graph_const(inputs[0])
            && !self.kernels.contains_key(&h)
        {
            let (instr, target) = self.transfer(e, h, &inputs[1..], at, root)?;
            if let Instr::Jump { .. } = instr {
                e.pending.push((e.code.len() as u32, target));
            }
            e.code.push(instr);
            return Ok(());
        }
        if self.m.constant(inputs[0]).is_some() {
            // A primitive or a kernel: compute, then return.
            self.emit_node(e, t)?;
            let r = e.regs[&t];
            e.code.push(Instr::Return { src: Opnd::Reg(r) });
            return Ok(());
        }
        let callee = self.operand(e, inputs[0])?;
        let args = self.operands(e, &inputs[1..])?;
        e.code.push(Instr::TailCallValue { callee, args, at });
        Ok(())
    }

    /// The instruction that tail-calls graph `h` with `args`: a jump to a label of this unit,
    /// a tail call of another unit, or a tail call of a closure value. The second element is
    /// the jump's target graph, patched once every label is placed.
    fn transfer(
        &mut self,
        e: &mut Emitter,
        h: GraphId,
        args: &[NodeId],
        at: u32,
        root: GraphId,
    ) -> Result<(Instr, GraphId), LowerError> {
        let params = &self.m.graph(h).params;
        let exact = params.len() == args.len();
        let local = self.member_sets[e.unit as usize].contains(&h);
        match self.root_of.get(&h) {
            _ if local && exact => {
                let dsts: Vec<Reg> = if h == root {
                    (0..params.len() as u32).collect()
                } else {
                    params.iter().map(|p| e.regs[p]).collect()
                };
                let srcs = self.operands(e, args)?;
                let moves = dsts.into_iter().zip(srcs.iter().copied()).collect();
                let call = (self.m.graph(h).kind == GraphKind::Function).then_some(at);
                Ok((
                    Instr::Jump {
                        target: 0,
                        moves,
                        call,
                    },
                    h,
                ))
            }
            Some(&v) if exact => {
                let mut all = self.operands(e, args)?.into_vec();
                all.extend(self.capture_operands(e, v)?);
                Ok((
                    Instr::TailCall {
                        unit: v,
                        args: all.into(),
                        at,
                    },
                    h,
                ))
            }
            _ => {
                let callee = self.closure(e, h)?;
                let args = self.operands(e, args)?;
                Ok((Instr::TailCallValue { callee, args, at }, h))
            }
        }
    }

    fn emit_node(&mut self, e: &mut Emitter, n: NodeId) -> Result<(), LowerError> {
        let inputs = self.m.inputs(n).to_vec();
        let dst = e.regs[&n];
        let at = e.site(self.m, n);
        if let Some(p) = self.m.callee_prim(n) {
            let device = self.device_of(n);
            let kernel = self.resolve(device, p, &inputs[1..])?;
            let mut args = self.operands(e, &inputs[1..])?;
            self.copy_operands(e, device, &inputs[1..], &mut args);
            let instr = match (BinOp::from_prim(p), p, &*args) {
                (Some(op), _, &[a, b]) if kernel.is_none() => Instr::Bin { dst, op, a, b, at },
                (_, Prim::CallKw | Prim::CallStar | Prim::CallDict, _) => Instr::CallValue {
                    dst,
                    callee: self.constant(Value::Prim(p)),
                    args,
                    at,
                },
                _ => Instr::Prim {
                    dst,
                    prim: p,
                    args,
                    kernel,
                    at,
                    with_next: WithNext::Alone,
                },
            };
            e.code.push(instr);
            return Ok(());
        }
        if let Some(h) = self.graph_const(inputs[0]) {
            if let Some(&k) = self.kernels.get(&h) {
                let args = self.operands(e, &inputs[1..])?;
                e.code.push(Instr::Fused {
                    dst,
                    kernel: k,
                    args,
                    at,
                });
                return Ok(());
            }
            if let Some(&v) = self.root_of.get(&h)
                && self.m.graph(h).params.len() == inputs.len() - 1
            {
                let mut args = self.operands(e, &inputs[1..])?.into_vec();
                args.extend(self.capture_operands(e, v)?);
                e.code.push(Instr::Call {
                    dst,
                    unit: v,
                    args: args.into(),
                    at,
                });
                return Ok(());
            }
        }
        let callee = self.operand(e, inputs[0])?;
        let args = self.operands(e, &inputs[1..])?;
        e.code.push(Instr::CallValue {
            dst,
            callee,
            args,
            at,
        });
        Ok(())
    }

    /// The device node `n` runs on: its placement block's, else the program's.
    fn device_of(&self, n: NodeId) -> Device {
        self.m.device_of(n).unwrap_or(self.device)
    }

    /// Where an operation runs on `device` and an operand is made by an operation on another
    /// device, a `ToDevice` copy of the operand is emitted first and read instead (operands
    /// of unknown device, the function's arguments, are moved by the kernels that read them).
    fn copy_operands(
        &mut self,
        e: &mut Emitter,
        device: Device,
        inputs: &[NodeId],
        args: &mut [Opnd],
    ) {
        if self.m.placements.is_empty() {
            return;
        }
        for (arg, &i) in args.iter_mut().zip(inputs) {
            let made_by_op = matches!(self.m.node(i).kind, NodeKind::Apply(_));
            if !made_by_op || self.device_of(i) == device || self.tensor_dtype(i).is_none() {
                continue;
            }
            let dst = e.temp();
            let name = self.constant(Value::Str(device.to_string().into()));
            e.code.push(Instr::Prim {
                dst,
                prim: Prim::ToDevice,
                args: vec![*arg, name].into(),
                kernel: None,
                at: 0,
                with_next: WithNext::Alone,
            });
            *arg = Opnd::Reg(dst);
        }
    }

    /// The dtype of a node's value when it is a tensor (or a Parameter's tensor).
    fn tensor_dtype(&self, n: NodeId) -> Option<DType> {
        match &self.m.node(n).kind {
            NodeKind::Value(Const::Tensor(t)) => Some(t.dtype()),
            _ => match self.abstracts.get(&n)? {
                Abs::Tensor(t) => Some(t.dtype),
                Abs::Ref(r) => Some(r.dtype),
                _ => None,
            },
        }
    }

    /// The kernel a call of `p` with arguments `args` runs: `None` for the CPU backend's own
    /// (and for calls with no tensor argument), else the one registered for this device and
    /// the call's dispatch dtype; an error when the device has none.
    fn resolve(
        &self,
        device: Device,
        p: Prim,
        args: &[NodeId],
    ) -> Result<Option<Kernel>, LowerError> {
        if !kernels::has_kernels(p) {
            return Ok(None);
        }
        let dtypes: Vec<Option<DType>> = args.iter().map(|&a| self.tensor_dtype(a)).collect();
        let Some(dtype) = kernels::dispatch_dtype(p, &dtypes) else {
            return Ok(None);
        };
        let key = KernelKey {
            prim: p,
            device,
            dtype,
        };
        match kernels::find(key) {
            Some(k) if k.is_builtin() => Ok(None),
            Some(k) => Ok(Some(k)),
            None => err(format!("no kernel is registered for {key}")),
        }
    }

    fn operands(&mut self, e: &mut Emitter, ns: &[NodeId]) -> Result<Box<[Opnd]>, LowerError> {
        ns.iter().map(|&n| self.operand(e, n)).collect()
    }

    fn capture_operands(&mut self, e: &mut Emitter, v: u32) -> Result<Vec<Opnd>, LowerError> {
        let caps = self.captures[v as usize].clone();
        caps.iter().map(|&n| self.operand(e, n)).collect()
    }

    /// The operand for node `n` at this point of the unit's code (closures and constants that
    /// hold graphs are built by instructions emitted now).
    fn operand(&mut self, e: &mut Emitter, n: NodeId) -> Result<Opnd, LowerError> {
        if let NodeKind::Value(c) = &self.m.node(n).kind {
            return self.materialize(e, c);
        }
        match e.regs.get(&n) {
            Some(&r) => Ok(Opnd::Reg(r)),
            None => err(format!(
                "{n} is not visible in unit @{}",
                self.m.graph(self.roots[e.unit as usize]).name
            )),
        }
    }

    fn materialize(&mut self, e: &mut Emitter, c: &Const) -> Result<Opnd, LowerError> {
        match c {
            Const::Graph(h) => self.closure(e, *h),
            Const::Tuple(items) | Const::List(items) if items.iter().any(Const::holds_graph) => {
                let args = items
                    .iter()
                    .map(|i| self.materialize(e, i))
                    .collect::<Result<Box<[Opnd]>, _>>()?;
                let dst = e.temp();
                let prim = if matches!(c, Const::Tuple(_)) {
                    Prim::MakeTuple
                } else {
                    Prim::MakeList
                };
                e.code.push(Instr::Prim {
                    dst,
                    prim,
                    args,
                    kernel: None,
                    at: 0,
                    with_next: WithNext::Alone,
                });
                Ok(Opnd::Reg(dst))
            }
            c => Ok(self.constant(from_const(c, &mut |_| Value::None))),
        }
    }

    /// The closure of graph `h` (a unit root) with its captures from this frame.
    fn closure(&mut self, e: &mut Emitter, h: GraphId) -> Result<Opnd, LowerError> {
        let Some(&v) = self.root_of.get(&h) else {
            return err(format!(
                "@{} is used as a value but heads no unit",
                self.m.graph(h).name
            ));
        };
        if self.captures[v as usize].is_empty() {
            return Ok(self.constant(Value::Closure(Rc::new(Closure {
                graph: h,
                captures: Rc::from(Vec::new()),
            }))));
        }
        let captures = self.capture_operands(e, v)?.into();
        let dst = e.temp();
        e.code.push(Instr::MakeClosure {
            dst,
            unit: v,
            captures,
        });
        Ok(Opnd::Reg(dst))
    }
}

/// Marks the last read of every value (a value may be read twice by one step: `x * x`).
fn mark_last_reads(steps: &mut [FusedStep]) {
    let mut seen = HashSet::new();
    for step in steps.iter_mut().rev() {
        for a in step.args.iter_mut().rev() {
            if let FusedArg::Value(i) = *a
                && seen.insert(i)
            {
                *a = FusedArg::Last(i);
            }
        }
    }
}

/// The kernel ops of fused steps: scalar constants become `Scalar` values placed right before
/// the op that uses them.
fn kernel_ops(n_inputs: u32, steps: &[FusedStep]) -> Option<Vec<FusedOp>> {
    let mut ops = Vec::new();
    // Kernel value of each step's result.
    let mut value_of: Vec<u32> = (0..n_inputs).collect();
    for step in steps {
        let operands = step
            .args
            .iter()
            .map(|a| {
                Some(match a {
                    FusedArg::Value(i) | FusedArg::Last(i) => {
                        FusedOperand::Value(*value_of.get(*i as usize)?)
                    }
                    FusedArg::Const(v) => FusedOperand::Const(v),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        kernels::push_fused_call(step.prim, &operands, n_inputs, &mut ops)?;
        value_of.push(n_inputs + ops.len() as u32 - 1);
    }
    Some(ops)
}

struct Emitter {
    unit: u32,
    regs: HashMap<NodeId, Reg>,
    n_regs: u32,
    code: Vec<Instr>,
    sites: Vec<Site>,
    labels: Vec<(u32, String)>,
    label_pc: HashMap<GraphId, u32>,
    /// Jumps whose target label is not placed yet.
    pending: Vec<(u32, GraphId)>,
}

impl Emitter {
    fn reg(&mut self, n: NodeId) -> Reg {
        if let Some(&r) = self.regs.get(&n) {
            return r;
        }
        let r = self.temp();
        self.regs.insert(n, r);
        r
    }

    fn temp(&mut self) -> Reg {
        self.n_regs += 1;
        self.n_regs - 1
    }

    fn site(&mut self, m: &Module, n: NodeId) -> u32 {
        let (function, calls) = m.origin(n);
        self.sites.push(Site {
            span: m.node(n).span,
            function,
            calls,
        });
        self.sites.len() as u32 - 1
    }
}
