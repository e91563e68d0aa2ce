//! Graphs built from function bodies by SSA construction (Braun et al., "Simple and
//! Efficient Construction of Static Single Assignment Form"), the algorithm MindSpore's parser
//! uses.
//!
//! * Each basic block is a graph; reading a variable defined in a dominating block is an edge to
//!   a node of that block's graph (a free variable), so blocks nest like closures.
//! * Where paths join, the variable becomes a parameter of the join block (a phi) and every jump
//!   into the block passes the value as an argument. A jump is a tail call.
//! * `if c:` becomes `Switch(Truth(c), @✓, @✗)` and a call of its result. Branch blocks have a
//!   single predecessor and take no arguments.
//! * A loop is a header graph (`↵`) that tests the condition and switches to the body (`↻`),
//!   which jumps back to the header, or to the exit (`↓`).
//! * Expressions with control flow (`and`, `or`, `a if c else b`, comparison chains) use the
//!   same machinery with hidden variables whose names start with `.`.
//!
//! After a whole function (with its nested functions) is built, trivial phis are removed, and
//! `CheckBound` nodes survive only where a variable can really be unassigned.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use anfora_ir::diag::Diagnostic;
use anfora_ir::{ArgSource, Const, GraphId, GraphKind, NodeId, Prim, Signature, Span};

use crate::ast::*;
use crate::scope::ScopeInfo;
use crate::{Frontend, Resolved, Resolver, ScopeId, codes};

type BlockId = usize;

struct Block {
    graph: GraphId,
    /// Predecessors and the jump node each uses to enter (None for a Switch branch).
    preds: Vec<(BlockId, Option<NodeId>)>,
    sealed: bool,
    defs: HashMap<Name, NodeId>,
    incomplete: Vec<(Name, NodeId)>,
    phis: Vec<NodeId>,
}

struct LoopCtx {
    header: BlockId,
    break_target: Option<BlockId>,
    /// Name of the block the loop statement started in (for naming its blocks).
    base: String,
}

struct FnState {
    def: Rc<FunctionDef>,
    info: ScopeInfo,
    qualname: Arc<str>,
    current: Option<BlockId>,
    loops: Vec<LoopCtx>,
    /// Graphs of the nested `def`s, created up front so that siblings can refer to each other.
    nested: HashMap<*const FunctionDef, GraphId>,
}

/// What an expression evaluates to at compile time.
enum Val {
    Node(NodeId),
    /// The builtin `enumerate` or `zip` (only usable in a for header or tuple()/list()).
    Iter(IterKind),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum IterKind {
    Enumerate,
    Zip,
}

struct Lowerer<'a> {
    fe: &'a mut Frontend,
    resolver: &'a mut dyn Resolver,
    scope: ScopeId,
    blocks: Vec<Block>,
    fns: Vec<FnState>,
    /// Every graph made in this session, nested functions included.
    graphs: Vec<GraphId>,
    phi_block: HashMap<NodeId, BlockId>,
    checks: Vec<NodeId>,
    hidden: u32,
}

pub(crate) fn build_function(
    fe: &mut Frontend,
    resolver: &mut dyn Resolver,
    def: Rc<FunctionDef>,
    scope: ScopeId,
    graph: GraphId,
    qualname: Arc<str>,
    bound_self: Option<Const>,
) {
    let mut l = Lowerer {
        fe,
        resolver,
        scope,
        blocks: Vec::new(),
        fns: Vec::new(),
        graphs: Vec::new(),
        phi_block: HashMap::new(),
        checks: Vec::new(),
        hidden: 0,
    };
    l.function(def, graph, qualname, bound_self);
    l.finish();
}

/// Evaluates a literal constant expression (default values): literals, signed numbers and
/// tuples of them.
pub fn const_eval(e: &Expr) -> Option<Const> {
    anfora_ir::deep(|| const_eval_inner(e))
}

fn const_eval_inner(e: &Expr) -> Option<Const> {
    match &e.kind {
        ExprKind::Literal(l) => Some(literal(l)),
        ExprKind::UnaryOp {
            op: UnaryOp::Neg,
            operand,
        } => match const_eval(operand)? {
            Const::Int(i) => i.checked_neg().map(Const::Int),
            Const::Float(f) => Some(Const::Float(-f)),
            _ => None,
        },
        ExprKind::UnaryOp {
            op: UnaryOp::Pos,
            operand,
        } => match const_eval(operand)? {
            c @ (Const::Int(_) | Const::Float(_)) => Some(c),
            _ => None,
        },
        ExprKind::Tuple(items) => Some(Const::tuple(
            items.iter().map(const_eval).collect::<Option<Vec<_>>>()?,
        )),
        _ => None,
    }
}

fn literal(l: &Literal) -> Const {
    match l {
        Literal::None => Const::None,
        Literal::Bool(b) => Const::Bool(*b),
        Literal::Int(i) => Const::Int(*i),
        Literal::Float(f) => Const::Float(*f),
        Literal::Str(s) => Const::Str(s.clone()),
        Literal::Ellipsis => Const::Ellipsis,
    }
}

fn bin_prim(op: BinOp) -> Prim {
    match op {
        BinOp::Add => Prim::Add,
        BinOp::Sub => Prim::Sub,
        BinOp::Mul => Prim::Mul,
        BinOp::MatMul => Prim::MatMul,
        BinOp::Div => Prim::Div,
        BinOp::FloorDiv => Prim::FloorDiv,
        BinOp::Mod => Prim::Mod,
        BinOp::Pow => Prim::Pow,
        BinOp::LShift => Prim::LShift,
        BinOp::RShift => Prim::RShift,
        BinOp::BitAnd => Prim::BitAnd,
        BinOp::BitOr => Prim::BitOr,
        BinOp::BitXor => Prim::BitXor,
    }
}

fn cmp_prim(op: CmpOp) -> Prim {
    match op {
        CmpOp::Eq => Prim::Eq,
        CmpOp::NotEq => Prim::Ne,
        CmpOp::Lt => Prim::Lt,
        CmpOp::LtE => Prim::Le,
        CmpOp::Gt => Prim::Gt,
        CmpOp::GtE => Prim::Ge,
        CmpOp::Is => Prim::Is,
        CmpOp::IsNot => Prim::IsNot,
        CmpOp::In => Prim::In,
        CmpOp::NotIn => Prim::NotIn,
    }
}

fn resolve(repl: &HashMap<NodeId, NodeId>, mut n: NodeId) -> NodeId {
    while let Some(&m) = repl.get(&n) {
        n = m;
    }
    n
}

impl Lowerer<'_> {
    // ---- small helpers ------------------------------------------------------------------

    fn fun(&self) -> &FnState {
        self.fns.last().expect("inside a function")
    }

    fn fun_mut(&mut self) -> &mut FnState {
        self.fns.last_mut().expect("inside a function")
    }

    fn cur(&self) -> Option<BlockId> {
        self.fun().current
    }

    fn set_cur(&mut self, b: Option<BlockId>) {
        self.fun_mut().current = b;
    }

    fn cur_block(&self) -> BlockId {
        self.cur().expect("lowering happens in a live block")
    }

    fn cur_graph(&self) -> GraphId {
        self.blocks[self.cur_block()].graph
    }

    fn cur_name(&self) -> String {
        self.fe.module.graph(self.cur_graph()).name.clone()
    }

    fn konst(&mut self, c: Const) -> NodeId {
        self.fe.module.value(c)
    }

    fn konst_at(&mut self, c: Const, span: Span) -> NodeId {
        self.fe.module.value_at(c, span)
    }

    fn none(&mut self) -> NodeId {
        self.konst(Const::None)
    }

    fn prim(&mut self, p: Prim, args: &[NodeId], span: Span) -> NodeId {
        let g = self.cur_graph();
        self.fe.module.apply_prim(g, p, args, span)
    }

    fn apply(&mut self, inputs: Vec<NodeId>, span: Span) -> NodeId {
        let g = self.cur_graph();
        self.fe.module.apply(g, inputs, span)
    }

    fn error(&mut self, d: Diagnostic) {
        self.fe.diags.push(d);
    }

    fn hidden_name(&mut self, what: &str) -> Name {
        self.hidden += 1;
        Arc::from(format!(".{what}{}", self.hidden).as_str())
    }

    // ---- blocks and SSA -----------------------------------------------------------------

    fn new_block(&mut self, graph: GraphId, sealed: bool) -> BlockId {
        self.blocks.push(Block {
            graph,
            preds: Vec::new(),
            sealed,
            defs: HashMap::new(),
            incomplete: Vec::new(),
            phis: Vec::new(),
        });
        self.blocks.len() - 1
    }

    fn new_named_block(
        &mut self,
        kind: GraphKind,
        base: &str,
        sealed: bool,
        span: Span,
    ) -> BlockId {
        let name = self.fe.unique_name(&format!("{}{base}", kind.marker()));
        let function = self.fun().def.name.clone();
        let g = self.fe.module.add_graph(name, function, kind, span);
        self.graphs.push(g);
        self.new_block(g, sealed)
    }

    /// Ends block `from` with a tail call of block `to`; phi arguments are appended later.
    fn jump(&mut self, from: BlockId, to: BlockId, span: Span) {
        debug_assert!(!self.blocks[to].sealed, "jumps only enter unsealed blocks");
        let target = self.konst(Const::Graph(self.blocks[to].graph));
        let from_graph = self.blocks[from].graph;
        let node = self
            .fe
            .module
            .apply_unordered(from_graph, vec![target], span);
        self.fe.module.set_output(from_graph, node);
        self.blocks[to].preds.push((from, Some(node)));
    }

    /// Ends the current block with `Switch(cond, @✓, @✗)()`; returns the two branch blocks.
    fn branch(&mut self, cond: NodeId, span: Span) -> (BlockId, BlockId) {
        let cur = self.cur_block();
        let base = self.cur_name();
        let t = self.new_named_block(GraphKind::TrueBranch, &base, true, span);
        let f = self.new_named_block(GraphKind::FalseBranch, &base, true, span);
        self.branch_to(cond, t, f, span);
        self.blocks[t].preds.push((cur, None));
        self.blocks[f].preds.push((cur, None));
        (t, f)
    }

    fn branch_to(&mut self, cond: NodeId, t: BlockId, f: BlockId, span: Span) {
        let tv = self.konst(Const::Graph(self.blocks[t].graph));
        let fv = self.konst(Const::Graph(self.blocks[f].graph));
        let sw = self.prim(Prim::Switch, &[cond, tv, fv], span);
        let g = self.cur_graph();
        let call = self.fe.module.apply_unordered(g, vec![sw], span);
        self.fe.module.set_output(g, call);
    }

    /// Joins the live ends of several paths: none means the code after is unreachable, one
    /// continues in that block, several meet in a new join block.
    fn join(&mut self, ends: Vec<BlockId>, base: &str, span: Span) -> Option<BlockId> {
        match ends.len() {
            0 => None,
            1 => Some(ends[0]),
            _ => {
                let j = self.new_named_block(GraphKind::Join, base, false, span);
                for e in ends {
                    self.jump(e, j, span);
                }
                self.seal(j);
                Some(j)
            }
        }
    }

    fn write(&mut self, b: BlockId, name: &Name, v: NodeId) {
        self.blocks[b].defs.insert(name.clone(), v);
    }

    fn read(&mut self, b: BlockId, name: &Name) -> NodeId {
        if let Some(&n) = self.blocks[b].defs.get(name) {
            return n;
        }
        anfora_ir::deep(|| self.read_recursive(b, name))
    }

    fn read_recursive(&mut self, b: BlockId, name: &Name) -> NodeId {
        let v = if !self.blocks[b].sealed {
            let phi = self.new_phi(b, name);
            self.blocks[b].incomplete.push((name.clone(), phi));
            phi
        } else if self.blocks[b].preds.is_empty() {
            self.konst(Const::Unbound)
        } else if self.blocks[b].preds.len() == 1 {
            let p = self.blocks[b].preds[0].0;
            self.read(p, name)
        } else {
            let phi = self.new_phi(b, name);
            self.write(b, name, phi);
            self.add_phi_operands(b, name);
            phi
        };
        self.write(b, name, v);
        v
    }

    fn new_phi(&mut self, b: BlockId, name: &Name) -> NodeId {
        let g = self.blocks[b].graph;
        let phi = self.fe.module.add_param(g, &format!("ф{name}"), Span::NONE);
        self.blocks[b].phis.push(phi);
        self.phi_block.insert(phi, b);
        phi
    }

    fn add_phi_operands(&mut self, b: BlockId, name: &Name) {
        let preds = self.blocks[b].preds.clone();
        for (p, jump) in preds {
            let v = self.read(p, name);
            let jump = jump.expect("blocks with phis are entered by jumps");
            self.fe
                .module
                .inputs_mut(jump)
                .expect("jumps are Apply nodes")
                .push(v);
        }
    }

    fn seal(&mut self, b: BlockId) {
        let incomplete = std::mem::take(&mut self.blocks[b].incomplete);
        for (name, _) in incomplete {
            self.add_phi_operands(b, &name);
        }
        self.blocks[b].sealed = true;
    }

    /// Removes trivial phis, keeps `CheckBound` only where a variable may really be unbound,
    /// and rewrites every graph of the session accordingly.
    fn finish(&mut self) {
        let module = &mut self.fe.module;
        let param_index = |module: &anfora_ir::Module, b: &Block, phi: NodeId| {
            module.graph(b.graph).params.iter().position(|&p| p == phi)
        };
        let operands = |module: &anfora_ir::Module, b: &Block, k: usize| -> Vec<NodeId> {
            b.preds
                .iter()
                .filter_map(|(_, j)| j.map(|j| module.inputs(j)[1 + k]))
                .collect()
        };
        let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
        let mut unbound: Option<NodeId> = None;
        loop {
            let mut changed = false;
            for b in &self.blocks {
                for &phi in &b.phis {
                    if repl.contains_key(&phi) {
                        continue;
                    }
                    let Some(k) = param_index(module, b, phi) else {
                        continue;
                    };
                    let mut unique = None;
                    let mut trivial = true;
                    for op in operands(module, b, k) {
                        let op = resolve(&repl, op);
                        if op == phi || Some(op) == unique {
                            continue;
                        }
                        if unique.is_some() {
                            trivial = false;
                            break;
                        }
                        unique = Some(op);
                    }
                    if trivial {
                        let target = match unique {
                            Some(u) => u,
                            None => *unbound.get_or_insert_with(|| module.value(Const::Unbound)),
                        };
                        repl.insert(phi, target);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }

        // Phis that may carry the Unbound marker.
        let is_unbound = |module: &anfora_ir::Module, n: NodeId| {
            matches!(module.constant(n), Some(Const::Unbound))
        };
        let mut may_unbound: HashSet<NodeId> = HashSet::new();
        loop {
            let mut changed = false;
            for b in &self.blocks {
                for &phi in &b.phis {
                    if repl.contains_key(&phi) || may_unbound.contains(&phi) {
                        continue;
                    }
                    let Some(k) = param_index(module, b, phi) else {
                        continue;
                    };
                    if operands(module, b, k).into_iter().any(|op| {
                        let op = resolve(&repl, op);
                        is_unbound(module, op) || may_unbound.contains(&op)
                    }) {
                        may_unbound.insert(phi);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for &c in &self.checks {
            let op = resolve(&repl, module.inputs(c)[1]);
            if !is_unbound(module, op) && !may_unbound.contains(&op) {
                repl.insert(c, op);
            }
        }
        if repl.is_empty() {
            return;
        }

        for &g in &self.graphs {
            for n in module.graph_nodes(g) {
                if let Some(inputs) = module.inputs_mut(n) {
                    for i in inputs.iter_mut() {
                        *i = resolve(&repl, *i);
                    }
                }
            }
            let graph = &mut module.graphs[g];
            if let Some(o) = graph.output {
                graph.output = Some(resolve(&repl, o));
            }
            graph.order.retain(|n| !repl.contains_key(n));
        }
        for b in &self.blocks {
            let params = module.graph(b.graph).params.clone();
            let keep: Vec<bool> = params.iter().map(|p| !repl.contains_key(p)).collect();
            if keep.iter().all(|k| *k) {
                continue;
            }
            module.graphs[b.graph].params = params
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(p, _)| *p)
                .collect();
            for (_, jump) in &b.preds {
                let Some(j) = jump else { continue };
                let inputs = module.inputs_mut(*j).expect("jumps are Apply nodes");
                let mut k = 0;
                inputs.retain(|_| {
                    let keep_it = k == 0 || keep[k - 1];
                    k += 1;
                    keep_it
                });
            }
        }
    }

    // ---- functions ----------------------------------------------------------------------

    /// Lowers `def` into `graph`; with `bound_self`, the first parameter is that constant.
    fn function(
        &mut self,
        def: Rc<FunctionDef>,
        graph: GraphId,
        qualname: Arc<str>,
        mut bound_self: Option<Const>,
    ) {
        self.graphs.push(graph);
        let info = ScopeInfo::of(&def);
        let entry = self.new_block(graph, true);
        let mut nested = HashMap::new();
        for nd in &info.nested_defs {
            let q: Arc<str> = Arc::from(format!("{qualname}.<locals>.{}", nd.name).as_str());
            let g = self.fe.new_function_graph(nd, &q, GraphKind::Function);
            nested.insert(Rc::as_ptr(nd), g);
        }
        self.fns.push(FnState {
            def: def.clone(),
            info,
            qualname,
            current: Some(entry),
            loops: Vec::new(),
            nested,
        });
        for p in &def.params {
            let n = match bound_self.take() {
                Some(c) => self.konst_at(c, p.span),
                None => self.fe.module.add_param(graph, &p.name, p.span),
            };
            self.write(entry, &p.name, n);
        }
        self.stmts(&def.body);
        if self.cur().is_some() {
            let none = self.none();
            let g = self.cur_graph();
            self.fe.module.set_output(g, none);
        }
        self.fns.pop();
    }

    fn lambda(&mut self, def: &Rc<FunctionDef>) -> NodeId {
        let q: Arc<str> = Arc::from(format!("{}.<locals>.<lambda>", self.fun().qualname).as_str());
        let g = self.fe.new_function_graph(def, &q, GraphKind::Lambda);
        self.function(def.clone(), g, q, None);
        self.konst(Const::Graph(g))
    }

    // ---- statements ---------------------------------------------------------------------

    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            if self.cur().is_none() {
                break; // unreachable code after return/break/continue
            }
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        anfora_ir::deep(|| self.stmt_inner(s))
    }

    fn stmt_inner(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::FunctionDef(def) => {
                let g = self.fun().nested[&Rc::as_ptr(def)];
                let q: Arc<str> =
                    Arc::from(format!("{}.<locals>.{}", self.fun().qualname, def.name).as_str());
                self.function(def.clone(), g, q, None);
                let v = self.konst_at(Const::Graph(g), def.head_span);
                let b = self.cur_block();
                self.write(b, &def.name, v);
            }
            StmtKind::Return(value) => {
                let v = match value {
                    Some(e) => self.value(e),
                    None => self.none(),
                };
                // Calls of user functions stay ordinary calls, even in tail position, so that
                // tracebacks and the recursion limit match Python; only jumps between the
                // blocks of one function are tail calls.
                let g = self.cur_graph();
                self.fe.module.set_output(g, v);
                self.set_cur(None);
            }
            StmtKind::Assign { targets, value } => {
                let v = self.value(value);
                for t in targets {
                    self.assign(t, v);
                }
            }
            StmtKind::AugAssign {
                target,
                target_span,
                op,
                value,
            } => {
                let cur = self.load(target, *target_span);
                let v = self.value(value);
                let prim = match op {
                    BinOp::Add => Prim::InplaceAdd,
                    BinOp::Mul => Prim::InplaceMul,
                    other => bin_prim(*other),
                };
                let r = self.prim(prim, &[cur, v], s.span);
                self.assign(&Target::Name(target.clone(), *target_span), r);
            }
            StmtKind::AttrAssign {
                object,
                attr,
                target_span,
                op,
                value,
            } => self.attr_assign(object, attr, *target_span, *op, value, s.span),
            StmtKind::Declare(_) | StmtKind::Pass | StmtKind::Import(_) | StmtKind::MainGuard => {}
            StmtKind::For { target, iter, body } => self.for_stmt(target, iter, body, s.span),
            StmtKind::While { test, body } => self.while_stmt(test, body, s.span),
            StmtKind::If { test, body, orelse } => {
                let c = self.value(test);
                let t = self.prim(Prim::Truth, &[c], test.span);
                let base = self.cur_name();
                let (tb, fb) = self.branch(t, s.span);
                self.set_cur(Some(tb));
                self.stmts(body);
                let end_t = self.cur();
                self.set_cur(Some(fb));
                self.stmts(orelse);
                let end_f = self.cur();
                let ends = [end_t, end_f].into_iter().flatten().collect();
                let j = self.join(ends, &base, s.span);
                self.set_cur(j);
            }
            StmtKind::Assert { test, msg } => self.assert(test, msg.as_ref(), s.span),
            StmtKind::Expr(e) => {
                let _ = self.expr(e);
            }
            StmtKind::Break => {
                let cur = self.cur_block();
                let target = match self.fun().loops.last().and_then(|l| l.break_target) {
                    Some(t) => t,
                    None => {
                        let base = self
                            .fun()
                            .loops
                            .last()
                            .expect("break inside a loop")
                            .base
                            .clone();
                        let t = self.new_named_block(
                            GraphKind::Join,
                            &format!("↓{base}"),
                            false,
                            s.span,
                        );
                        self.fun_mut().loops.last_mut().unwrap().break_target = Some(t);
                        t
                    }
                };
                self.jump(cur, target, s.span);
                self.set_cur(None);
            }
            StmtKind::Continue => {
                let cur = self.cur_block();
                let header = self
                    .fun()
                    .loops
                    .last()
                    .expect("continue inside a loop")
                    .header;
                self.jump(cur, header, s.span);
                self.set_cur(None);
            }
            StmtKind::Invalid => {}
        }
    }

    fn assign(&mut self, t: &Target, v: NodeId) {
        match t {
            Target::Name(n, _) => {
                let g = self.cur_graph();
                let node = self.fe.module.node(v);
                if node.owner == Some(g) && node.name.is_none() && self.fe.module.is_apply(v) {
                    self.fe.module.set_name(v, n);
                }
                let b = self.cur_block();
                self.write(b, n, v);
            }
            Target::Tuple(items, span) => {
                let n = self.konst(Const::Int(items.len() as i64));
                let unpacked = self.prim(Prim::Unpack, &[v, n], *span);
                for (i, item) in items.iter().enumerate() {
                    let idx = self.konst(Const::Int(i as i64));
                    let x = self.prim(Prim::TupleGetItem, &[unpacked, idx], item.span());
                    self.assign(item, x);
                }
            }
            Target::Invalid(_) => {}
        }
    }

    fn assert(&mut self, test: &Expr, msg: Option<&Expr>, span: Span) {
        let c = self.value(test);
        match msg.map(|m| (m, const_eval(m))) {
            None => {
                let none = self.none();
                self.prim(Prim::Assert, &[c, none], span);
            }
            Some((_, Some(k))) => {
                let m = self.konst(k);
                self.prim(Prim::Assert, &[c, m], span);
            }
            Some((m, None)) => {
                // The message is evaluated only when the assertion fails, as in Python.
                let t = self.prim(Prim::Truth, &[c], test.span);
                let (ok, fail) = self.branch(t, span);
                self.set_cur(Some(fail));
                let text = self.value(m);
                let kind = self.konst(Const::str("AssertionError"));
                let raise = self.prim(Prim::Raise, &[kind, text], span);
                let g = self.cur_graph();
                self.fe.module.set_output(g, raise);
                self.set_cur(Some(ok));
            }
        }
    }

    fn while_stmt(&mut self, test: &Expr, body: &[Stmt], span: Span) {
        let base = self.cur_name();
        let cur = self.cur_block();
        let header = self.new_named_block(GraphKind::LoopHeader, &base, false, span);
        self.jump(cur, header, span);
        self.set_cur(Some(header));
        let c = self.value(test);
        let t = self.prim(Prim::Truth, &[c], test.span);
        self.loop_rest(t, header, &base, span, |l| l.stmts(body));
    }

    /// Builds body and exit after the header's condition `cond` (computed in the current
    /// block), runs `body`, closes the loop and continues after it.
    fn loop_rest(
        &mut self,
        cond: NodeId,
        header: BlockId,
        base: &str,
        span: Span,
        body: impl FnOnce(&mut Self),
    ) {
        let test_block = self.cur_block();
        let body_block = self.new_named_block(GraphKind::LoopBody, base, true, span);
        let exit = self.new_named_block(GraphKind::Join, base, true, span);
        self.blocks[body_block].preds.push((test_block, None));
        self.blocks[exit].preds.push((test_block, None));
        self.branch_to(cond, body_block, exit, span);
        self.fun_mut().loops.push(LoopCtx {
            header,
            break_target: None,
            base: base.to_string(),
        });
        self.set_cur(Some(body_block));
        body(self);
        if let Some(end) = self.cur() {
            self.jump(end, header, span);
        }
        let ctx = self.fun_mut().loops.pop().expect("loop context");
        self.seal(header);
        match ctx.break_target {
            Some(bt) => {
                self.jump(exit, bt, span);
                self.seal(bt);
                self.set_cur(Some(bt));
            }
            None => self.set_cur(Some(exit)),
        }
    }

    fn for_stmt(&mut self, target: &Target, iter: &Expr, body: &[Stmt], span: Span) {
        // The sequence and its length are computed once; the loop walks an index.
        let (kind, seqs) = match self.iterator_call(iter) {
            Some((kind, args)) => (Some(kind), args),
            None => (None, vec![self.value(iter)]),
        };
        let len = match kind {
            Some(IterKind::Enumerate) | None => self.prim(Prim::IterLen, &[seqs[0]], iter.span),
            Some(IterKind::Zip) => {
                let lens: Vec<NodeId> = seqs
                    .iter()
                    .map(|&s| self.prim(Prim::IterLen, &[s], iter.span))
                    .collect();
                if lens.len() == 1 {
                    lens[0]
                } else {
                    self.prim(Prim::Min, &lens, iter.span)
                }
            }
        };
        let index = self.hidden_name("i");
        let zero = self.konst(Const::Int(0));
        let cur = self.cur_block();
        self.write(cur, &index, zero);
        let base = self.cur_name();
        let header = self.new_named_block(GraphKind::LoopHeader, &base, false, span);
        let header_graph = self.blocks[header].graph;
        self.fe.module.graphs[header_graph].iterates = seqs.clone();
        self.jump(cur, header, span);
        self.set_cur(Some(header));
        let i = self.read(header, &index);
        let cond = self.prim(Prim::Lt, &[i, len], iter.span);
        self.loop_rest(cond, header, &base, span, |l| {
            let b = l.cur_block();
            let i = l.read(b, &index);
            let item = match kind {
                None => l.prim(Prim::GetItem, &[seqs[0], i], iter.span),
                Some(IterKind::Enumerate) => {
                    let n = l.prim(Prim::Add, &[seqs[1], i], iter.span);
                    let x = l.prim(Prim::GetItem, &[seqs[0], i], iter.span);
                    l.prim(Prim::MakeTuple, &[n, x], iter.span)
                }
                Some(IterKind::Zip) => {
                    let items: Vec<NodeId> = seqs
                        .iter()
                        .map(|&s| l.prim(Prim::GetItem, &[s, i], iter.span))
                        .collect();
                    l.prim(Prim::MakeTuple, &items, iter.span)
                }
            };
            let one = l.konst(Const::Int(1));
            let next = l.prim(Prim::Add, &[i, one], iter.span);
            l.write(b, &index, next);
            l.assign(target, item);
            l.stmts(body);
        });
    }

    // ---- names --------------------------------------------------------------------------

    /// The value of a name, as a node (diagnosing namespaces and iterators used as values).
    fn load(&mut self, name: &Name, span: Span) -> NodeId {
        match self.load_name(name, span) {
            Val::Node(n) => n,
            other => self.require_node(other, span),
        }
    }

    fn load_name(&mut self, name: &Name, span: Span) -> Val {
        let depth = self.fns.len() - 1;
        if self.fns[depth].info.locals.contains(name) {
            let b = self.cur_block();
            let v = self.read(b, name);
            return Val::Node(self.check_bound(v, name, false, span));
        }
        for e in (0..depth).rev() {
            if !self.fns[e].info.locals.contains(name) {
                continue;
            }
            let child = Rc::as_ptr(&self.fns[e + 1].def);
            let child_start = self.fns[e + 1].def.span.start;
            let info = &self.fns[e].info;
            // A name bound only by a `def`: the function itself (recursion) or a sibling
            // defined right after (mutual recursion) is the graph, whatever runs when.
            if let Some(d) = info.sole_def(name)
                && (d == child || info.adjacent_defs(child, d))
            {
                let g = self.fns[e].nested[&d];
                return Val::Node(self.konst_at(Const::Graph(g), span));
            }
            if info.capture_is_exact(name, child_start) {
                let b = self.fns[e]
                    .current
                    .expect("enclosing function paused in a block");
                let v = self.read(b, name);
                return Val::Node(self.check_bound(v, name, true, span));
            }
            let child_def = self.fns[e + 1].def.clone();
            let what = if child_def.is_lambda {
                "a lambda".to_string()
            } else {
                format!("function '{}'", child_def.name)
            };
            self.error(
                Diagnostic::error(
                    codes::LATE_BINDING,
                    format!(
                        "{what} reads '{name}', which its enclosing function assigns after {} is created",
                        if child_def.is_lambda { "the lambda" } else { "it" }
                    ),
                    span,
                )
                .with_label("captured here")
                .with_related(child_def.head_span, "defined here")
                .with_hint(format!(
                    "Python reads '{name}' when the inner function runs, anfora when it is created; pass '{name}' as an argument (or assign it only before the definition)"
                )),
            );
            return Val::Node(self.none());
        }
        self.load_global(name, span)
    }

    /// The value of a variable read at `span` (its own or a captured one): `v`, checked for
    /// being unassigned where it may be.
    fn check_bound(&mut self, v: NodeId, name: &Name, free: bool, span: Span) -> NodeId {
        // A bound `self` gets a node per use, so that errors point at the use.
        if let Some(c @ Const::HostObject(_)) = self.fe.module.constant(v) {
            let c = c.clone();
            return self.konst_at(c, span);
        }
        let maybe = self.phi_block.contains_key(&v)
            || matches!(self.fe.module.constant(v), Some(Const::Unbound));
        if !maybe || name.starts_with('.') {
            return v;
        }
        let n = self.konst(Const::Str(name.clone()));
        let f = self.konst(Const::Bool(free));
        let c = self.prim(Prim::CheckBound, &[v, n, f], span);
        self.checks.push(c);
        c
    }

    fn is_local_anywhere(&self, name: &Name) -> bool {
        self.fns.iter().any(|f| f.info.locals.contains(name))
    }

    /// A global name: a `Symbol` the resolve stage replaces, or one of the iterator builtins.
    fn load_global(&mut self, name: &Name, span: Span) -> Val {
        match &**name {
            "enumerate" if self.is_builtin(name) => Val::Iter(IterKind::Enumerate),
            "zip" if self.is_builtin(name) => Val::Iter(IterKind::Zip),
            _ => Val::Node(self.konst_at(
                Const::Symbol {
                    scope: self.scope.0,
                    name: name.clone(),
                },
                span,
            )),
        }
    }

    /// Whether `name` here means the Python builtin (no local or global shadows it). Only the
    /// builtins that change how code is lowered ask this.
    fn is_builtin(&mut self, name: &Name) -> bool {
        !self.is_local_anywhere(name)
            && matches!(
                self.resolver.resolve_global(self.scope, name),
                Resolved::Unknown
            )
    }

    fn require_node(&mut self, v: Val, span: Span) -> NodeId {
        match v {
            Val::Node(n) => n,
            Val::Iter(kind) => {
                self.iterator_misuse(kind, span);
                self.none()
            }
        }
    }

    fn iterator_misuse(&mut self, kind: IterKind, span: Span) {
        let name = match kind {
            IterKind::Enumerate => "enumerate",
            IterKind::Zip => "zip",
        };
        self.error(
            Diagnostic::error(
                codes::ITERATOR,
                format!(
                    "`{name}` is only supported in a `for` loop header or inside tuple()/list()"
                ),
                span,
            )
            .with_label("iterator used here")
            .with_hint(format!(
                "write `for ... in {name}(...)`, or `tuple({name}(...))` to get the items"
            )),
        );
    }

    // ---- expressions --------------------------------------------------------------------

    fn value(&mut self, e: &Expr) -> NodeId {
        let v = self.expr(e);
        self.require_node(v, e.span)
    }

    fn expr(&mut self, e: &Expr) -> Val {
        anfora_ir::deep(|| self.expr_inner(e))
    }

    fn expr_inner(&mut self, e: &Expr) -> Val {
        let span = e.span;
        let node = match &e.kind {
            ExprKind::Name(n) => return self.load_name(n, span),
            ExprKind::Literal(l) => self.konst_at(literal(l), span),
            ExprKind::Tuple(items) => {
                let nodes: Vec<NodeId> = items.iter().map(|i| self.value(i)).collect();
                let consts: Option<Vec<Const>> = nodes
                    .iter()
                    .map(|&n| match self.fe.module.constant(n) {
                        Some(
                            c @ (Const::None
                            | Const::Bool(_)
                            | Const::Int(_)
                            | Const::Float(_)
                            | Const::Str(_)
                            | Const::Tuple(_)),
                        ) => Some(c.clone()),
                        _ => None,
                    })
                    .collect();
                match consts {
                    Some(cs) => self.konst_at(Const::tuple(cs), span),
                    None => self.prim(Prim::MakeTuple, &nodes, span),
                }
            }
            ExprKind::List(items) => {
                let nodes: Vec<NodeId> = items.iter().map(|i| self.value(i)).collect();
                self.prim(Prim::MakeList, &nodes, span)
            }
            ExprKind::BinOp { op, left, right } => {
                let l = self.value(left);
                let r = self.value(right);
                self.prim(bin_prim(*op), &[l, r], span)
            }
            ExprKind::UnaryOp { op, operand } => {
                if let Some(c) = const_eval(e)
                    && matches!(c, Const::Int(_) | Const::Float(_))
                {
                    return Val::Node(self.konst_at(c, span));
                }
                let x = self.value(operand);
                let p = match op {
                    UnaryOp::Neg => Prim::Neg,
                    UnaryOp::Pos => Prim::Pos,
                    UnaryOp::Invert => Prim::Invert,
                    UnaryOp::Not => Prim::Not,
                };
                self.prim(p, &[x], span)
            }
            ExprKind::BoolOp { op, values } => self.bool_op(*op, values, span),
            ExprKind::Compare {
                left,
                ops,
                comparators,
            } => self.compare(left, ops, comparators, span),
            ExprKind::IfExp { test, body, orelse } => {
                let c = self.value(test);
                let t = self.prim(Prim::Truth, &[c], test.span);
                self.select(t, span, |l| l.value(body), |l| l.value(orelse))
            }
            ExprKind::Call {
                func,
                args,
                keywords,
            } => return self.call(func, args, keywords, span),
            ExprKind::Attribute { value, attr } => return self.attribute(value, attr, span),
            ExprKind::Subscript { value, index } => {
                let obj = self.value(value);
                let idx = self.index(index);
                self.prim(Prim::GetItem, &[obj, idx], span)
            }
            ExprKind::Slice { .. } => self.index(e),
            ExprKind::Lambda(def) => self.lambda(def),
            ExprKind::Invalid => self.none(),
        };
        Val::Node(node)
    }

    /// `then` or `else_` depending on the bool `cond`, as a value (through a join phi).
    fn select(
        &mut self,
        cond: NodeId,
        span: Span,
        then: impl FnOnce(&mut Self) -> NodeId,
        else_: impl FnOnce(&mut Self) -> NodeId,
    ) -> NodeId {
        let var = self.hidden_name("v");
        let base = self.cur_name();
        let (tb, fb) = self.branch(cond, span);
        self.set_cur(Some(tb));
        let a = then(self);
        let end_t = self.cur_block();
        self.write(end_t, &var, a);
        self.set_cur(Some(fb));
        let b = else_(self);
        let end_f = self.cur_block();
        self.write(end_f, &var, b);
        let j = self
            .join(vec![end_t, end_f], &base, span)
            .expect("two live ends");
        self.set_cur(Some(j));
        self.read(j, &var)
    }

    fn bool_op(&mut self, op: BoolOp, values: &[Expr], span: Span) -> NodeId {
        let mut acc = self.value(&values[0]);
        for v in &values[1..] {
            let t = self.prim(Prim::Truth, &[acc], span);
            let keep = acc;
            acc = match op {
                BoolOp::And => self.select(t, span, |l| l.value(v), |_| keep),
                BoolOp::Or => self.select(t, span, |_| keep, |l| l.value(v)),
            };
        }
        acc
    }

    fn compare(&mut self, left: &Expr, ops: &[CmpOp], comparators: &[Expr], span: Span) -> NodeId {
        let l = self.value(left);
        self.compare_chain(l, ops, comparators, span)
    }

    /// `l op0 c0 op1 c1 ...` = `(l op0 c0) and (c0 op1 c1) and ...`, each operand evaluated once.
    fn compare_chain(
        &mut self,
        l: NodeId,
        ops: &[CmpOp],
        comparators: &[Expr],
        span: Span,
    ) -> NodeId {
        let r = self.value(&comparators[0]);
        let c = self.prim(cmp_prim(ops[0]), &[l, r], span);
        if ops.len() == 1 {
            return c;
        }
        let t = self.prim(Prim::Truth, &[c], span);
        self.select(
            t,
            span,
            |lw| lw.compare_chain(r, &ops[1..], &comparators[1..], span),
            |_| c,
        )
    }

    fn index(&mut self, e: &Expr) -> NodeId {
        match &e.kind {
            ExprKind::Slice { lower, upper, step } => {
                let part = |l: &mut Self, x: &Option<Box<Expr>>| match x {
                    Some(x) => l.value(x),
                    None => l.none(),
                };
                let a = part(self, lower);
                let b = part(self, upper);
                let c = part(self, step);
                self.prim(Prim::MakeSlice, &[a, b, c], e.span)
            }
            ExprKind::Tuple(items)
                if items
                    .iter()
                    .any(|i| matches!(i.kind, ExprKind::Slice { .. })) =>
            {
                let nodes: Vec<NodeId> = items.iter().map(|i| self.index(i)).collect();
                self.prim(Prim::MakeTuple, &nodes, e.span)
            }
            _ => self.value(e),
        }
    }

    /// `obj.attr = value` writes the Parameter the attribute holds (`Assign`); `+=` and `-=`
    /// are `AssignAdd`/`AssignSub`, other operators read, compute and `Assign`. Python's order:
    /// the value first for `=`, the object and its attribute first for `op=`. Whether the
    /// attribute is a Parameter is checked by inference (the write's rule).
    fn attr_assign(
        &mut self,
        object: &Expr,
        attr: &Name,
        target_span: Span,
        op: Option<BinOp>,
        value: &Expr,
        span: Span,
    ) {
        let target = |l: &mut Self| {
            let n = l.value(object);
            let s = l.konst(Const::Str(attr.clone()));
            l.prim(Prim::GetAttr, &[n, s], target_span)
        };
        match op {
            None => {
                let v = self.value(value);
                let t = target(self);
                self.prim(Prim::Assign, &[t, v], span);
            }
            Some(op @ (BinOp::Add | BinOp::Sub)) => {
                let t = target(self);
                let v = self.value(value);
                let prim = match op {
                    BinOp::Add => Prim::AssignAdd,
                    _ => Prim::AssignSub,
                };
                self.prim(prim, &[t, v], span);
            }
            Some(other) => {
                let t = target(self);
                let v = self.value(value);
                let r = self.prim(bin_prim(other), &[t, v], span);
                self.prim(Prim::Assign, &[t, r], span);
            }
        }
    }

    fn attribute(&mut self, obj: &Expr, attr: &Name, span: Span) -> Val {
        // `ops.add` is folded by the resolve stage once `ops` is known to be a namespace.
        let n = self.value(obj);
        let s = self.konst(Const::Str(attr.clone()));
        Val::Node(self.prim(Prim::GetAttr, &[n, s], span))
    }

    /// `enumerate(...)`/`zip(...)` where the builtin is meant: returns the kind and its
    /// arguments (`[seq, start]` or the sequences).
    fn iterator_call(&mut self, e: &Expr) -> Option<(IterKind, Vec<NodeId>)> {
        let ExprKind::Call {
            func,
            args,
            keywords,
        } = &e.kind
        else {
            return None;
        };
        let ExprKind::Name(name) = &func.kind else {
            return None;
        };
        let kind = match &**name {
            "enumerate" => IterKind::Enumerate,
            "zip" => IterKind::Zip,
            _ => return None,
        };
        if !self.is_builtin(name) {
            return None;
        }
        let prim = match kind {
            IterKind::Enumerate => Prim::Enumerate,
            IterKind::Zip => Prim::Zip,
        };
        let nodes = self.bound_args(prim.signature(), args, keywords, e.span)?;
        Some((kind, nodes))
    }

    /// Evaluates the arguments and binds them to `sig`; `None` after a diagnosed mismatch.
    fn bound_args(
        &mut self,
        sig: &Signature,
        args: &[Expr],
        keywords: &[Keyword],
        span: Span,
    ) -> Option<Vec<NodeId>> {
        let positional: Vec<NodeId> = args.iter().map(|a| self.value(a)).collect();
        let kw: Vec<NodeId> = keywords.iter().map(|k| self.value(&k.value)).collect();
        let names: Vec<&str> = keywords.iter().map(|k| &*k.name).collect();
        match sig.bind(positional.len(), &names) {
            Ok(sources) => {
                let nodes = sources
                    .into_iter()
                    .map(|s| match s {
                        ArgSource::Positional(i) => positional[i],
                        ArgSource::Keyword(j) => kw[j],
                        ArgSource::Default(c) => self.konst(c),
                    })
                    .collect();
                Some(nodes)
            }
            Err(err) => {
                self.error(
                    Diagnostic::error(codes::BAD_CALL, err.message(&sig.name), span)
                        .with_label("in this call")
                        .with_hint("this fails in Python too: fix the arguments"),
                );
                None
            }
        }
    }

    /// A call: the callee and the arguments in order. Keyword arguments make a `CallKw`. The
    /// resolve stage binds arguments to the signature of callees known at compile time.
    fn call(&mut self, func: &Expr, args: &[Expr], keywords: &[Keyword], span: Span) -> Val {
        // tuple(enumerate(x)) and list(zip(a, b)) materialize the iterator's items.
        if let ExprKind::Name(f) = &func.kind
            && matches!(&**f, "tuple" | "list")
            && args.len() == 1
            && keywords.is_empty()
            && self.is_builtin(f)
            && let Some((kind, it_args)) = self.iterator_call(&args[0])
        {
            let prim = match kind {
                IterKind::Enumerate => Prim::Enumerate,
                IterKind::Zip => Prim::Zip,
            };
            let callee = self.konst_at(
                Const::Prim(if &**f == "tuple" {
                    Prim::TupleType
                } else {
                    Prim::ListType
                }),
                func.span,
            );
            let items = self.prim(prim, &it_args, args[0].span);
            return Val::Node(self.apply(vec![callee, items], span));
        }
        let callee = match self.expr(func) {
            Val::Node(n) => n,
            other => {
                let n = self.require_node(other, func.span);
                // Still lower the arguments so that their own problems are reported.
                for a in args {
                    let _ = self.expr(a);
                }
                return Val::Node(n);
            }
        };
        let mut inputs = vec![callee];
        inputs.extend(args.iter().map(|a| self.value(a)));
        if keywords.is_empty() {
            return Val::Node(self.apply(inputs, span));
        }
        let names = Const::tuple(
            keywords
                .iter()
                .map(|k| Const::Str(k.name.clone()))
                .collect(),
        );
        let names = self.konst(names);
        inputs.insert(1, names);
        for k in keywords {
            let v = self.value(&k.value);
            inputs.push(v);
        }
        let call_kw = self.konst(Const::Prim(Prim::CallKw));
        inputs.insert(0, call_kw);
        Val::Node(self.apply(inputs, span))
    }
}
