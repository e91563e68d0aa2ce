//! The reference VM: runs IR graphs directly, in each graph's evaluation order, so effects and
//! errors happen where Python would have them. It is the oracle that compiled execution is
//! checked against, so it favours obviously-correct over fast.
//!
//! * Calls run on an explicit stack of activations, never on the Rust stack. A graph's output
//!   call is a tail call that replaces the activation, so loops (tail-recursive graphs) run in
//!   constant space; non-tail calls deeper than [`Options::max_depth`] raise RecursionError.
//! * Closures are flat: a closure holds the values of every free variable of its graph and of
//!   the graphs it creates ("free variables total"), copied when it is created.

use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::rc::Rc;

use anfora_ir::analysis::analyze;
use anfora_ir::runtime::recursion_error;
use anfora_ir::{Const, GraphId, GraphKind, Module, NodeId, NodeKind, Prim, Span};
use anfora_ops::pynum::tensor_err;
use anfora_tensor::memory::Poll;

use anfora_ir::{Options, RuntimeError, TraceEntry};
use anfora_ops::call::Called;
use anfora_ops::pynum::PyErr;
use anfora_ops::value::{Closure, Value, from_const};
use anfora_ops::{call, python};

/// Where a closure's captured value comes from in the creating activation.
#[derive(Clone, Copy, Debug)]
enum Src {
    Slot(u32),
    Capture(u32),
}

#[derive(Clone, Debug)]
enum Operand {
    Slot(u32),
    Capture(u32),
    Value(Value),
    Closure {
        graph: GraphId,
        plan: Rc<[Src]>,
    },
    /// A constant holding graphs inside tuples, converted when used.
    Deferred(Const),
}

#[derive(Debug)]
struct Step {
    slot: u32,
    callee: Operand,
    args: Box<[Operand]>,
    node: NodeId,
    /// The frontend bound the arguments of this primitive call already.
    prebound: bool,
    /// The callee is a graph named in the program, whose arguments the frontend bound
    /// (`*args` packed); a call through a value is bound when it runs.
    resolved: bool,
    /// `Switch(cond, a, b)`: evaluated lazily.
    is_switch: bool,
}

#[derive(Debug)]
struct Prepared {
    graph: GraphId,
    n_slots: usize,
    n_params: usize,
    steps: Vec<Step>,
    /// The output, when it is a call: run as a tail call.
    tail: Option<Step>,
    output: Operand,
    /// Position of each captured node, to build closures of nested graphs at run time.
    captures: Rc<HashMap<NodeId, u32>>,
    slots: Rc<HashMap<NodeId, u32>>,
}

struct Activation {
    prep: Rc<Prepared>,
    slots: Vec<Value>,
    captures: Rc<[Value]>,
    pc: usize,
    ret_slot: u32,
    current: Option<NodeId>,
    /// Tail calls of `def`s that replaced this activation: each counts a level of recursion
    /// until it returns, as the frame CPython would have pushed for it.
    tail: usize,
    /// Where the first and the last of them were made: a traceback shows the first, then the
    /// last for the others (exact for a function's recursion on itself).
    tail_sites: Option<Box<[TraceEntry; 2]>>,
}

enum Flow {
    Value(Value),
    Enter(Activation),
}

/// The reference virtual machine over one module.
pub struct Vm<'m> {
    pub(crate) module: &'m Module,
    opts: Options,
    /// Free variables total of each graph, in a fixed order.
    fvt: HashMap<GraphId, Rc<[NodeId]>>,
    /// Prepared graphs, indexed by graph.
    prepared: Vec<Option<Rc<Prepared>>>,
    /// Argument buffer for primitive calls, reused across steps.
    scratch: Vec<Value>,
}

pub(crate) fn internal(msg: impl Into<String>) -> PyErr {
    (
        "SystemError",
        format!("internal error in the reference VM: {}", msg.into()),
    )
}

impl<'m> Vm<'m> {
    pub fn new(module: &'m Module, opts: Options) -> Vm<'m> {
        let roots: Vec<GraphId> = module.graphs.keys().collect();
        let a = analyze(module, &roots);
        let owner = |n: NodeId| module.node(n).owner;
        let mut sets: HashMap<GraphId, BTreeSet<NodeId>> = a
            .graphs
            .iter()
            .map(|&g| (g, a.free_vars[g].iter().copied().collect()))
            .collect();
        loop {
            let mut changed = false;
            for &g in &a.graphs {
                let mut add = Vec::new();
                for &h in &a.used[g] {
                    for &n in &sets[&h] {
                        if owner(n) != Some(g) && !sets[&g].contains(&n) {
                            add.push(n);
                        }
                    }
                }
                if !add.is_empty() {
                    sets.get_mut(&g).unwrap().extend(add);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let fvt = sets
            .into_iter()
            .map(|(g, s)| (g, Rc::from(s.into_iter().collect::<Vec<_>>())))
            .collect();
        Vm {
            module,
            opts,
            fvt,
            prepared: vec![None; module.graphs.len()],
            scratch: Vec::new(),
        }
    }

    /// The function value of a graph that needs no environment (a module-level function).
    pub fn function(&self, graph: GraphId) -> Option<Value> {
        let empty = self.fvt.get(&graph).is_none_or(|f| f.is_empty());
        empty.then(|| {
            Value::Closure(Rc::new(Closure {
                graph,
                captures: Rc::from(Vec::new()),
            }))
        })
    }

    /// Converts a constant (graphs must need no environment).
    pub fn constant(&self, c: &Const) -> Value {
        from_const(c, &mut |g| self.function(g).unwrap_or(Value::None))
    }

    /// Calls `f` with `args`; `print` writes to `out`.
    pub fn call(
        &mut self,
        f: &Value,
        args: Vec<Value>,
        out: &mut dyn Write,
    ) -> Result<Value, RuntimeError> {
        let mut stack: Vec<Activation> = Vec::new();
        // The sum of the activations' `tail`: with the stack, the depth `max_depth` bounds.
        let mut tail_levels = 0;
        // Values grown in small steps (calls and loop iterations) are a MemoryError while
        // there is room to unwind.
        let mut poll = Poll::default();
        match self.apply(f.clone(), args, out, false) {
            Ok(Flow::Value(v)) => return Ok(v),
            Ok(Flow::Enter(act)) => stack.push(act),
            Err(e) => return Err(self.error(e, None, &mut stack)),
        }
        loop {
            let depth = stack.len() + tail_levels;
            let top = stack
                .last_mut()
                .expect("the stack is not empty while running");
            let prep = top.prep.clone();
            if top.pc < prep.steps.len() {
                let step = &prep.steps[top.pc];
                top.pc += 1;
                top.current = Some(step.node);
                if step.is_switch {
                    // Build only the closure of the branch taken.
                    let cond = self.load(top, &step.args[0]);
                    match python::truth(&cond) {
                        Ok(c) => {
                            let chosen = &step.args[if c { 1 } else { 2 }];
                            top.slots[step.slot as usize] = self.load(top, chosen);
                        }
                        Err(e) => return Err(self.error(e, Some(step.node), &mut stack)),
                    }
                    continue;
                }
                let callee = self.load(top, &step.callee);
                let flow = match (&callee, step.prebound) {
                    (Value::Prim(p), _) if call::binds_arguments(*p) => {
                        let args = step.args.iter().map(|a| self.load(top, a)).collect();
                        self.run_binding(*p, args, out).map(Flow::Value)
                    }
                    (Value::Prim(p), true)
                        if !matches!(*p, Prim::CallKw | Prim::CallStar | Prim::CallDict) =>
                    {
                        let mut args = std::mem::take(&mut self.scratch);
                        args.extend(step.args.iter().map(|a| self.load(top, a)));
                        let r = call::call_prim(*p, &args, out).map(Flow::Value);
                        args.clear();
                        self.scratch = args;
                        r
                    }
                    _ => {
                        let args = step.args.iter().map(|a| self.load(top, a)).collect();
                        self.apply(callee, args, out, step.resolved)
                    }
                };
                match flow {
                    Ok(Flow::Value(v)) => top.slots[step.slot as usize] = v,
                    Ok(Flow::Enter(mut act)) => {
                        if stack.len() + tail_levels >= self.opts.max_depth {
                            let e = recursion_error(self.opts.max_depth);
                            return Err(self.error(e, Some(step.node), &mut stack));
                        }
                        act.ret_slot = step.slot;
                        if let Err(e) = poll.tick() {
                            return Err(self.error(tensor_err(e), Some(step.node), &mut stack));
                        }
                        if anfora_tensor::memory::fallibly(|| stack.try_reserve(1)).is_err() {
                            let e = ("MemoryError", "cannot grow the call stack".to_string());
                            return Err(self.error(e, Some(step.node), &mut stack));
                        }
                        stack.push(act);
                    }
                    Err(e) => return Err(self.error(e, Some(step.node), &mut stack)),
                }
                continue;
            }
            let result = match &prep.tail {
                Some(tail) => {
                    top.current = Some(tail.node);
                    let callee = self.load(top, &tail.callee);
                    let args: Vec<Value> = tail.args.iter().map(|a| self.load(top, a)).collect();
                    let flow = match (&callee, tail.prebound) {
                        (Value::Prim(p), _) if call::binds_arguments(*p) => {
                            self.run_binding(*p, args, out).map(Flow::Value)
                        }
                        (Value::Prim(p), true)
                            if !matches!(*p, Prim::CallKw | Prim::CallStar | Prim::CallDict) =>
                        {
                            call::call_prim(*p, &args, out).map(Flow::Value)
                        }
                        _ => self.apply(callee, args, out, tail.resolved),
                    };
                    match flow {
                        Ok(Flow::Value(v)) => v,
                        Ok(Flow::Enter(mut act)) => {
                            let deepens =
                                self.module.graph(act.prep.graph).kind == GraphKind::Function;
                            if deepens && depth >= self.opts.max_depth {
                                let e = recursion_error(self.opts.max_depth);
                                return Err(self.error(e, Some(tail.node), &mut stack));
                            }
                            if let Err(e) = poll.tick() {
                                return Err(self.error(tensor_err(e), Some(tail.node), &mut stack));
                            }
                            act.ret_slot = top.ret_slot;
                            (act.tail, act.tail_sites) = (top.tail, top.tail_sites.take());
                            if deepens {
                                self.deepen(top, &mut act, tail.node);
                                tail_levels += 1;
                            }
                            *top = act;
                            continue;
                        }
                        Err(e) => return Err(self.error(e, Some(tail.node), &mut stack)),
                    }
                }
                None => self.load(top, &prep.output),
            };
            let done = stack.pop().expect("an activation to return from");
            tail_levels -= done.tail;
            match stack.last_mut() {
                None => return Ok(result),
                Some(caller) => caller.slots[done.ret_slot as usize] = result,
            }
        }
    }

    /// Counts the tail call `node` of `top`, which `act` replaces, as the level of recursion
    /// CPython's frame for it would be, so that tail recursion stops where CPython's does.
    fn deepen(&self, top: &Activation, act: &mut Activation, node: NodeId) {
        let site = TraceEntry {
            function: self.module.graph(top.prep.graph).function.clone(),
            span: self.module.node(node).span,
        };
        match &mut act.tail_sites {
            Some(sites) => sites[1] = site,
            None => act.tail_sites = Some(Box::new([site.clone(), site])),
        }
        act.tail += 1;
    }

    fn error(
        &self,
        (kind, message): PyErr,
        node: Option<NodeId>,
        stack: &mut [Activation],
    ) -> RuntimeError {
        if kind == "MemoryError" {
            // Free the frames' values first: the traceback needs memory too.
            for a in stack.iter_mut() {
                a.slots = Vec::new();
            }
        }
        let span = node.map(|n| self.module.node(n).span).unwrap_or(Span::NONE);
        let mut trace = Vec::with_capacity(stack.len());
        for a in stack.iter() {
            // The frames CPython would have for the tail calls this activation replaced.
            if let Some([first, last]) = a.tail_sites.as_deref() {
                trace.push(first.clone());
                trace.extend(std::iter::repeat_n(last, a.tail - 1).cloned());
            }
            trace.push(TraceEntry {
                function: self.module.graph(a.prep.graph).function.clone(),
                span: a
                    .current
                    .map(|n| self.module.node(n).span)
                    .unwrap_or(Span::NONE),
            });
        }
        RuntimeError {
            kind: kind.to_string(),
            message,
            span,
            trace,
        }
    }

    fn load(&self, act: &Activation, op: &Operand) -> Value {
        match op {
            Operand::Slot(s) => act.slots[*s as usize].clone(),
            Operand::Capture(i) => act.captures[*i as usize].clone(),
            Operand::Value(v) => v.clone(),
            Operand::Closure { graph, plan } => {
                let captures: Vec<Value> = plan
                    .iter()
                    .map(|s| match s {
                        Src::Slot(k) => act.slots[*k as usize].clone(),
                        Src::Capture(k) => act.captures[*k as usize].clone(),
                    })
                    .collect();
                Value::Closure(Rc::new(Closure {
                    graph: *graph,
                    captures: Rc::from(captures),
                }))
            }
            Operand::Deferred(c) => from_const(c, &mut |g| {
                let captures: Vec<Value> = self.fvt[&g]
                    .iter()
                    .map(|n| match act.prep.slots.get(n) {
                        Some(&k) => act.slots[k as usize].clone(),
                        None => act
                            .prep
                            .captures
                            .get(n)
                            .map(|&k| act.captures[k as usize].clone())
                            .unwrap_or(Value::None),
                    })
                    .collect();
                Value::Closure(Rc::new(Closure {
                    graph: g,
                    captures: Rc::from(captures),
                }))
            }),
        }
    }

    fn prepare(&mut self, g: GraphId) -> Result<Rc<Prepared>, PyErr> {
        if let Some(Some(p)) = self.prepared.get(g.as_u32() as usize) {
            return Ok(p.clone());
        }
        let m = self.module;
        let graph = m.graph(g);
        let nodes = m.graph_nodes(g);
        let mut slots: HashMap<NodeId, u32> = HashMap::new();
        for (i, &p) in graph.params.iter().enumerate() {
            slots.insert(p, i as u32);
        }
        for &n in &nodes {
            let k = slots.len() as u32;
            slots.entry(n).or_insert(k);
        }
        let fvt = self
            .fvt
            .get(&g)
            .cloned()
            .unwrap_or_else(|| Rc::from(Vec::new()));
        let captures: HashMap<NodeId, u32> = fvt
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, i as u32))
            .collect();
        let operand = |n: NodeId| -> Result<Operand, PyErr> {
            let node = m.node(n);
            if let NodeKind::Value(c) = &node.kind {
                return Ok(match c {
                    Const::Graph(h) => {
                        let needs = self
                            .fvt
                            .get(h)
                            .cloned()
                            .unwrap_or_else(|| Rc::from(Vec::new()));
                        if needs.is_empty() {
                            Operand::Value(Value::Closure(Rc::new(Closure {
                                graph: *h,
                                captures: Rc::from(Vec::new()),
                            })))
                        } else {
                            let plan = needs
                                .iter()
                                .map(|fv| match (slots.get(fv), captures.get(fv)) {
                                    (Some(&k), _) => Ok(Src::Slot(k)),
                                    (None, Some(&k)) => Ok(Src::Capture(k)),
                                    _ => Err(internal(format!(
                                        "{fv} is not visible in @{}",
                                        graph.name
                                    ))),
                                })
                                .collect::<Result<Vec<_>, _>>()?;
                            Operand::Closure {
                                graph: *h,
                                plan: Rc::from(plan),
                            }
                        }
                    }
                    c => {
                        if c.holds_graph() {
                            Operand::Deferred(c.clone())
                        } else {
                            Operand::Value(from_const(c, &mut |_| Value::None))
                        }
                    }
                });
            }
            if node.owner == Some(g) {
                return slots
                    .get(&n)
                    .map(|&s| Operand::Slot(s))
                    .ok_or_else(|| internal(format!("{n} of @{} has no slot", graph.name)));
            }
            captures
                .get(&n)
                .map(|&k| Operand::Capture(k))
                .ok_or_else(|| {
                    internal(format!(
                        "free variable {n} of @{} is not captured",
                        graph.name
                    ))
                })
        };
        let step = |n: NodeId| -> Result<Step, PyErr> {
            let inputs = m.inputs(n);
            Ok(Step {
                slot: slots[&n],
                callee: operand(inputs[0])?,
                args: inputs[1..]
                    .iter()
                    .map(|&i| operand(i))
                    .collect::<Result<_, _>>()?,
                node: n,
                prebound: m.callee_prim(n).is_some(),
                resolved: m.callee_graph(n).is_some(),
                is_switch: m.callee_prim(n) == Some(Prim::Switch) && inputs.len() == 4,
            })
        };
        let output = graph
            .output
            .ok_or_else(|| internal(format!("@{} has no output", graph.name)))?;
        // The output call is a tail call when nothing is evaluated after it.
        let tail_node = m.tail_call(g);
        // Evaluation order first, then anything else the output needs, then the tail call.
        let mut steps: Vec<Step> = graph
            .order
            .iter()
            .filter(|&&n| Some(n) != tail_node)
            .map(|&n| step(n))
            .collect::<Result<_, _>>()?;
        for &n in &nodes {
            if Some(n) != tail_node && !graph.order.contains(&n) {
                steps.push(step(n)?);
            }
        }
        let tail = tail_node.map(step).transpose()?;
        let prep = Rc::new(Prepared {
            graph: g,
            n_slots: slots.len(),
            n_params: graph.params.len(),
            steps,
            tail,
            output: operand(output)?,
            captures: Rc::new(captures.clone()),
            slots: Rc::new(slots.clone()),
        });
        if self.prepared.len() <= g.as_u32() as usize {
            self.prepared.resize(g.as_u32() as usize + 1, None);
        }
        self.prepared[g.as_u32() as usize] = Some(prep.clone());
        Ok(prep)
    }

    /// Calls any callable value; `kw` holds keyword names and values.
    fn apply(
        &mut self,
        callee: Value,
        args: Vec<Value>,
        out: &mut dyn Write,
        resolved: bool,
    ) -> Result<Flow, PyErr> {
        let (c, args, kw) = match call::call_value(&callee, args, None, out)? {
            Called::Done(v) => return Ok(Flow::Value(v)),
            Called::Enter(c, args, kw) => (c, args, kw),
        };
        let prep = self.prepare(c.graph)?;
        let slots = self.bind_closure(&prep, args, kw, resolved)?;
        Ok(Flow::Enter(Activation {
            prep,
            slots,
            captures: c.captures.clone(),
            pc: 0,
            ret_slot: 0,
            current: None,
            tail: 0,
            tail_sites: None,
        }))
    }

    fn bind_closure(
        &self,
        prep: &Prepared,
        args: Vec<Value>,
        kw: Option<(Vec<String>, Vec<Value>)>,
        resolved: bool,
    ) -> Result<Vec<Value>, PyErr> {
        let graph = self.module.graph(prep.graph);
        let packs = graph.signature.as_ref().is_some_and(|s| s.packs);
        let mut full = match (&graph.signature, kw) {
            (_, None) if args.len() == prep.n_params && (resolved || !packs) => args,
            (None, _) => {
                return Err(internal(format!(
                    "@{} takes {} arguments, got {}",
                    graph.name,
                    prep.n_params,
                    args.len()
                )));
            }
            (Some(sig), kw) => call::bind_call(sig, &args, kw, |c| self.constant(c))?,
        };
        // Fallible: deep recursion of a large function is a MemoryError, never an abort.
        let more = prep.n_slots.saturating_sub(full.len());
        anfora_tensor::memory::fallibly(|| full.try_reserve(more)).map_err(|_| {
            (
                "MemoryError",
                "cannot allocate the frame of a call".to_string(),
            )
        })?;
        full.resize(prep.n_slots, Value::None);
        Ok(full)
    }
}
