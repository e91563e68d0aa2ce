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
//!
//! This module holds the blocks and the SSA construction; `stmt` lowers statements, `expr`
//! expressions and `names` the reads of variables and globals.

mod cells;
mod closures;
mod expr;
mod names;
mod stmt;
mod update;
mod write_back;

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, GraphId, GraphKind, NodeId, Prim, Span, replaced};

use crate::ast::*;
use crate::scope::ScopeInfo;
use crate::{Frontend, Resolver, ScopeId};

type BlockId = usize;

/// The longest base (in bytes) a block's name is built on; see `new_named_block`.
const MAX_BLOCK_NAME: usize = 64;

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
    /// For each in-place update statement (by span start), the names of the object it updates
    /// where the variable owns it (`ownership`).
    owned: HashMap<u32, Option<Vec<Name>>>,
    /// The parameter bound to a method's `self`, and that object's host id.
    self_name: Option<Name>,
    self_object: Option<u64>,
    /// The nested functions called with their variables passed (`closures`).
    convs: HashMap<*const FunctionDef, Rc<closures::Conversion>>,
    /// This function's own conversion, if it is one of those.
    conv: Option<Rc<closures::Conversion>>,
    /// The parameters whose objects it writes back to its caller (`write_back`).
    write_back: Rc<[Name]>,
    /// The variables that live in cells, and their `MakeCell` nodes (`cells`).
    cells: HashMap<Name, NodeId>,
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

impl IterKind {
    /// The builtin's name.
    fn name(self) -> &'static str {
        match self {
            IterKind::Enumerate => "enumerate",
            IterKind::Zip => "zip",
        }
    }

    /// The primitive that materializes the iterator's items.
    fn prim(self) -> Prim {
        match self {
            IterKind::Enumerate => Prim::Enumerate,
            IterKind::Zip => Prim::Zip,
        }
    }
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
    /// Values that may be unassigned although they are not phis: a variable a converted
    /// closure receives or writes back (`closures`).
    maybe_unbound: HashSet<NodeId>,
    /// The parameters the outermost function writes back to its caller (`write_back`),
    /// taken by it when it starts.
    fns_write_back: Rc<[Name]>,
}

/// A function to lower into its graph.
pub(crate) struct Lowered {
    pub graph: GraphId,
    pub qualname: Arc<str>,
    /// A bound method's `self`: the first parameter is this constant.
    pub bound_self: Option<Const>,
    /// The parameters whose objects it writes back to its caller (`write_back`).
    pub write_back: Rc<[Name]>,
}

pub(crate) fn build_function(
    fe: &mut Frontend,
    resolver: &mut dyn Resolver,
    def: Rc<FunctionDef>,
    scope: ScopeId,
    lowered: Lowered,
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
        maybe_unbound: HashSet::new(),
        fns_write_back: Rc::from([]),
    };
    let Lowered {
        graph,
        qualname,
        bound_self,
        write_back,
    } = lowered;
    l.fns_write_back = write_back;
    l.function(def, graph, qualname, bound_self, None);
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
        let function = self.fun().def.name.clone();
        // A block is named after the block it starts from, one marker per level, which
        // reads well in dumps but would make the names of a flat chain of n branches
        // (an `elif` chain, `a < b < ...`) quadratic in total length: past a few dozen
        // markers the name restarts from the function's, numbered by `unique_name`.
        let base = if base.len() > MAX_BLOCK_NAME {
            &*function
        } else {
            base
        };
        let name = self.fe.unique_name(&format!("{}{base}", kind.marker()));
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
        let mut repl = trivial_phis(&self.blocks, module);
        let may_unbound = phis_maybe_unbound(&self.blocks, module, &repl, &self.maybe_unbound);
        for &c in &self.checks {
            let op = replaced(&repl, module.inputs(c)[1]);
            if !is_unbound(module, op) && !may_unbound.contains(&op) {
                repl.insert(c, op);
            }
        }
        if repl.is_empty() {
            return;
        }
        module.apply_replacements(&self.graphs, &repl);
        for b in &self.blocks {
            drop_replaced_phis(b, module, &repl);
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
        conv: Option<Rc<closures::Conversion>>,
    ) {
        self.graphs.push(graph);
        let def = conv.as_ref().map_or(def, |c| c.def.clone());
        let info = ScopeInfo::of(&def);
        let entry = self.new_block(graph, true);
        let self_name = bound_self
            .as_ref()
            .and_then(|_| def.params.first())
            .map(|p| p.name.clone());
        self.fns.push(FnState {
            def: def.clone(),
            info,
            qualname: qualname.clone(),
            current: Some(entry),
            loops: Vec::new(),
            nested: HashMap::new(),
            owned: HashMap::new(),
            self_name,
            self_object: match &bound_self {
                Some(Const::HostObject(id)) => Some(*id),
                _ => None,
            },
            convs: HashMap::new(),
            conv: conv.clone(),
            write_back: std::mem::replace(&mut self.fns_write_back, Rc::from([])),
            cells: HashMap::new(),
        });
        let cells = self.plan_cells();
        let convs = self.plan_conversions(&cells);
        let mut nested = HashMap::new();
        for nd in &self.fun().info.nested_defs.clone() {
            let q: Arc<str> = Arc::from(format!("{qualname}.<locals>.{}", nd.name).as_str());
            let lowered = convs.get(&Rc::as_ptr(nd)).map_or(nd, |c| &c.def);
            let g = self.fe.new_function_graph(lowered, &q, GraphKind::Function);
            nested.insert(Rc::as_ptr(nd), g);
        }
        self.fun_mut().nested = nested;
        self.fun_mut().convs = convs;
        let write_back = self.fun().write_back.clone();
        let owned = crate::ownership::analyze(&def, &mut |f| self.call_kind(f), &write_back);
        self.fun_mut().owned = owned;
        for p in &def.params {
            let n = match bound_self.take() {
                Some(c) => self.konst_at(c, p.span),
                None => self.fe.module.add_param(graph, &p.name, p.span),
            };
            if conv.as_ref().is_some_and(|c| c.hidden.contains(&p.name)) {
                self.maybe_unbound.insert(n);
            }
            self.write(entry, &p.name, n);
            if write_back.contains(&p.name) {
                self.write(entry, &crate::ownership::caller_object(&p.name), n);
            }
        }
        self.make_cells(entry, cells);
        self.stmts(&def.body);
        if self.cur().is_some() {
            let none = self.none();
            let out = self.with_outs(none, def.span);
            let g = self.cur_graph();
            self.fe.module.set_output(g, out);
        }
        self.fns.pop();
    }

    fn lambda(&mut self, def: &Rc<FunctionDef>) -> NodeId {
        let q: Arc<str> = Arc::from(format!("{}.<locals>.<lambda>", self.fun().qualname).as_str());
        let conv = self.fun().convs.get(&Rc::as_ptr(def)).cloned();
        let lowered = conv.as_ref().map_or(def, |c| &c.def);
        let g = self.fe.new_function_graph(lowered, &q, GraphKind::Lambda);
        self.function(def.clone(), g, q, None, conv);
        self.konst(Const::Graph(g))
    }
}

/// The phis that are trivial (every jump passes the phi itself or one other value) and what
/// replaces each: that value, or `Unbound` where there is none.
fn trivial_phis(blocks: &[Block], module: &mut anfora_ir::Module) -> HashMap<NodeId, NodeId> {
    let mut repl: HashMap<NodeId, NodeId> = HashMap::new();
    let mut unbound: Option<NodeId> = None;
    loop {
        let mut changed = false;
        for b in blocks {
            for &phi in &b.phis {
                if repl.contains_key(&phi) {
                    continue;
                }
                let Some(operands) = phi_operands(module, b, phi) else {
                    continue;
                };
                let mut unique = None;
                let mut trivial = true;
                for op in operands {
                    let op = replaced(&repl, op);
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
            return repl;
        }
    }
}

/// The phis that remain after `repl` and may carry the `Unbound` marker.
fn phis_maybe_unbound(
    blocks: &[Block],
    module: &anfora_ir::Module,
    repl: &HashMap<NodeId, NodeId>,
    seed: &HashSet<NodeId>,
) -> HashSet<NodeId> {
    let mut may_unbound: HashSet<NodeId> = seed.clone();
    loop {
        let mut changed = false;
        for b in blocks {
            for &phi in &b.phis {
                if repl.contains_key(&phi) || may_unbound.contains(&phi) {
                    continue;
                }
                let Some(operands) = phi_operands(module, b, phi) else {
                    continue;
                };
                if operands.into_iter().any(|op| {
                    let op = replaced(repl, op);
                    is_unbound(module, op) || may_unbound.contains(&op)
                }) {
                    may_unbound.insert(phi);
                    changed = true;
                }
            }
        }
        if !changed {
            return may_unbound;
        }
    }
}

/// The values the jumps into block `b` pass for its phi `phi`; `None` when `phi` is no longer
/// a parameter of the block.
fn phi_operands(module: &anfora_ir::Module, b: &Block, phi: NodeId) -> Option<Vec<NodeId>> {
    let k = module
        .graph(b.graph)
        .params
        .iter()
        .position(|&p| p == phi)?;
    let operands = b
        .preds
        .iter()
        .filter_map(|(_, j)| j.map(|j| module.inputs(j)[1 + k]));
    Some(operands.collect())
}

fn is_unbound(module: &anfora_ir::Module, n: NodeId) -> bool {
    matches!(module.constant(n), Some(Const::Unbound))
}

/// Removes the phis of block `b` that `repl` replaced, and their arguments from the jumps into
/// `b`.
fn drop_replaced_phis(b: &Block, module: &mut anfora_ir::Module, repl: &HashMap<NodeId, NodeId>) {
    let params = module.graph(b.graph).params.clone();
    let keep: Vec<bool> = params.iter().map(|p| !repl.contains_key(p)).collect();
    if keep.iter().all(|k| *k) {
        return;
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
