//! Lambda lifting: copies of the graphs a function reaches in which no graph has free
//! variables, so that the J transform only sees closed graphs.
//!
//! Every graph gets a leading parameter for each value it used from an enclosing graph
//! (directly or through the graphs it calls), found by a fixpoint over the call graph. Calls of
//! a graph constant pass those values; the two branches of a `Switch` whose result is only
//! called take the union of their free variables, and the calls of the Switch pass them; a
//! graph used as a value any other way becomes `Partial(graph, free values...)`. Parameters
//! listed as `weights` are treated as free variables of the whole program, so their gradients
//! come out as gradients of parameters.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use anfora_ir::analysis::{Analysis, analyze};
use anfora_ir::{Const, GraphId, Module, NodeId, ParamRef, Prim};

use crate::Namer;

/// A lifted free variable: a node of an enclosing graph, or a weight Parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FvKey {
    Weight(u32),
    Node(NodeId),
}

/// The lifted copy of a function and the values its callers must pass first.
pub struct Lifted {
    pub graph: GraphId,
    pub fvs: Vec<FvKey>,
}

fn weight_of(m: &Module, n: NodeId, weights: &[ParamRef]) -> Option<u32> {
    match m.constant(n) {
        Some(Const::Ref(p)) => weights.iter().position(|w| w == p).map(|i| i as u32),
        _ => None,
    }
}

fn find(parent: &mut HashMap<GraphId, GraphId>, g: GraphId) -> GraphId {
    let mut r = g;
    while let Some(&p) = parent.get(&r) {
        if p == r {
            break;
        }
        r = p;
    }
    r
}

/// Lifts the graphs `root` reaches: see the module's documentation.
pub fn lift(m: &mut Module, root: GraphId, weights: &[ParamRef], names: &mut Namer) -> Lifted {
    let a = analyze(m, &[root]);
    let graphs: HashSet<GraphId> = a.graphs.iter().copied().collect();
    let (call_only, mut class) = switch_classes(m, &a, &graphs);
    let fv = free_variables(m, &a, weights, &mut class);
    let plan = Plan {
        a,
        graphs,
        call_only,
        fv,
        weights,
    };
    let copies = create_graphs(m, &plan, names);
    for &g in &plan.a.graphs {
        let mut rewrite = GraphRewrite {
            plan: &plan,
            copies: &copies,
            g,
            lg: copies.lifted[&g],
            before: BTreeMap::new(),
            trailing: Vec::new(),
        };
        for &n in &plan.a.nodes[g] {
            rewrite.node(m, n);
        }
        rewrite.finish(m);
    }
    Lifted {
        graph: copies.lifted[&root],
        fvs: plan.fv[&root].iter().copied().collect(),
    }
}

/// What the analysis of the program found: its graphs, the Switches whose result is only
/// called, and each graph's free variables.
struct Plan<'w> {
    a: Analysis,
    graphs: HashSet<GraphId>,
    call_only: HashSet<NodeId>,
    fv: HashMap<GraphId, BTreeSet<FvKey>>,
    weights: &'w [ParamRef],
}

/// The lifted graphs, the parameters they take their free variables by, and the copy of each
/// node.
struct Copies {
    lifted: HashMap<GraphId, GraphId>,
    fv_param: HashMap<(GraphId, FvKey), NodeId>,
    copy: HashMap<NodeId, NodeId>,
}

fn owner(m: &Module, n: NodeId) -> Option<GraphId> {
    m.node(n).owner
}

/// Switches whose branches are graphs of the program and whose result is only called, and the
/// classes of branches (union-find) that must take the same free values.
fn switch_classes(
    m: &Module,
    a: &Analysis,
    graphs: &HashSet<GraphId>,
) -> (HashSet<NodeId>, HashMap<GraphId, GraphId>) {
    let mut call_only: HashSet<NodeId> = HashSet::new();
    let mut class: HashMap<GraphId, GraphId> = HashMap::new();
    for &g in &a.graphs {
        for &n in &a.nodes[g] {
            if m.callee_prim(n) != Some(Prim::Switch) {
                continue;
            }
            let ins = m.inputs(n);
            let branches: Vec<GraphId> = ins[2..]
                .iter()
                .filter_map(|&b| m.constant(b).and_then(Const::as_graph))
                .filter(|b| graphs.contains(b))
                .collect();
            let only_called = a
                .users
                .get(&n)
                .is_some_and(|us| us.iter().all(|&(_, i)| i == 0));
            if branches.len() == 2 && only_called {
                call_only.insert(n);
                let (r0, r1) = (find(&mut class, branches[0]), find(&mut class, branches[1]));
                if r0 != r1 {
                    class.insert(r1, r0);
                }
            }
        }
    }
    (call_only, class)
}

/// Free variables: direct ones (and the weights read), then a fixpoint over the graphs each
/// graph uses, the branches of one Switch taking the union of theirs.
fn free_variables(
    m: &Module,
    a: &Analysis,
    weights: &[ParamRef],
    class: &mut HashMap<GraphId, GraphId>,
) -> HashMap<GraphId, BTreeSet<FvKey>> {
    let mut fv: HashMap<GraphId, BTreeSet<FvKey>> = HashMap::new();
    for &g in &a.graphs {
        let mut set: BTreeSet<FvKey> = a.free_vars[g].iter().map(|&n| FvKey::Node(n)).collect();
        let uses = a.nodes[g]
            .iter()
            .flat_map(|&n| m.inputs(n).iter().copied())
            .chain(m.graph(g).output);
        for i in uses {
            if let Some(w) = weight_of(m, i, weights) {
                set.insert(FvKey::Weight(w));
            }
        }
        fv.insert(g, set);
    }
    // Switch branches and the representative of their class (fixed from here on).
    let branches: Vec<GraphId> = a
        .graphs
        .iter()
        .copied()
        .filter(|g| class.contains_key(g) || class.values().any(|r| r == g))
        .collect();
    let root_of: HashMap<GraphId, GraphId> =
        branches.iter().map(|&g| (g, find(class, g))).collect();
    while propagate(m, a, &mut fv) | unite(&mut fv, &branches, &root_of) {}
    fv
}

/// Adds to each graph the free variables of the graphs it uses that it does not own; whether
/// any was new.
fn propagate(m: &Module, a: &Analysis, fv: &mut HashMap<GraphId, BTreeSet<FvKey>>) -> bool {
    let mut changed = false;
    for &g in &a.graphs {
        let mut add: Vec<FvKey> = Vec::new();
        for &k in &a.used[g] {
            if let Some(s) = fv.get(&k) {
                add.extend(s.iter().copied().filter(|key| match key {
                    FvKey::Node(n) => owner(m, *n) != Some(g),
                    FvKey::Weight(_) => true,
                }));
            }
        }
        let set = fv.entry(g).or_default();
        for key in add {
            changed |= set.insert(key);
        }
    }
    changed
}

/// Gives the branches of one Switch the same values; whether any was new.
fn unite(
    fv: &mut HashMap<GraphId, BTreeSet<FvKey>>,
    branches: &[GraphId],
    root_of: &HashMap<GraphId, GraphId>,
) -> bool {
    let mut unions: HashMap<GraphId, BTreeSet<FvKey>> = HashMap::new();
    for &g in branches {
        unions
            .entry(root_of[&g])
            .or_default()
            .extend(fv[&g].iter().copied());
    }
    let mut changed = false;
    for &g in branches {
        let set = fv.entry(g).or_default();
        for &key in &unions[&root_of[&g]] {
            changed |= set.insert(key);
        }
    }
    changed
}

/// Creates the lifted graphs with their parameters (free values first), and a placeholder
/// copy of every Apply node, so that inputs can refer to nodes created later.
fn create_graphs(m: &mut Module, plan: &Plan, names: &mut Namer) -> Copies {
    let mut lifted: HashMap<GraphId, GraphId> = HashMap::new();
    let mut fv_param: HashMap<(GraphId, FvKey), NodeId> = HashMap::new();
    let mut copy: HashMap<NodeId, NodeId> = HashMap::new();
    for &g in &plan.a.graphs {
        let src = m.graph(g).clone();
        let lg = m.add_graph(
            names.fresh(&src.name),
            src.function.clone(),
            src.kind,
            src.span,
        );
        for &key in &plan.fv[&g] {
            let (name, span) = match key {
                FvKey::Node(n) => (
                    m.node(n).name.as_deref().unwrap_or("fv").to_string(),
                    m.node(n).span,
                ),
                FvKey::Weight(w) => (plan.weights[w as usize].name().to_string(), src.span),
            };
            let p = m.add_param(lg, &name, span);
            fv_param.insert((g, key), p);
        }
        for &p in &src.params {
            let node = m.node(p).clone();
            let np = m.add_param(lg, node.name.as_deref().unwrap_or("x"), node.span);
            copy.insert(p, np);
        }
        // A loop header's sequences are nodes of the enclosing graph: the lifted header
        // takes them as parameters (constants stay).
        m.graphs[lg].iterates = (src.iterates.iter())
            .filter_map(|&s| match m.constant(s) {
                Some(_) => Some(s),
                None => fv_param.get(&(g, FvKey::Node(s))).copied(),
            })
            .collect();
        if m.objects.contains_key(&g) {
            m.differentiated_objects.insert(lg, g);
        }
        lifted.insert(g, lg);
    }
    for &g in &plan.a.graphs {
        let lg = lifted[&g];
        for &n in &plan.a.nodes[g] {
            let node = m.node(n).clone();
            let placeholder = m.value(Const::None);
            let c = m.apply_unordered(lg, vec![placeholder], node.span);
            m.nodes[c].name = node.name.clone();
            m.nodes[c].inlined = node.inlined.clone();
            copy.insert(n, c);
        }
    }
    Copies {
        lifted,
        fv_param,
        copy,
    }
}

/// The rewriting of graph `g` into its lifted copy `lg`.
struct GraphRewrite<'p> {
    plan: &'p Plan<'p>,
    copies: &'p Copies,
    g: GraphId,
    lg: GraphId,
    /// Closures made for an input of a node, to be evaluated before it.
    before: BTreeMap<NodeId, Vec<NodeId>>,
    /// Closures made for the output.
    trailing: Vec<NodeId>,
}

impl GraphRewrite<'_> {
    /// The values graph `g` passes to graph `k` for its free variables.
    fn fv_args(&self, m: &Module, k: GraphId) -> Vec<NodeId> {
        self.plan.fv[&k]
            .iter()
            .map(|&key| match key {
                FvKey::Node(v) if owner(m, v) == Some(self.g) => self.copies.copy[&v],
                key => self.copies.fv_param[&(self.g, key)],
            })
            .collect()
    }

    /// Maps argument `x` of node `user` (None: the output).
    fn map_in(&mut self, m: &mut Module, x: NodeId, user: Option<NodeId>) -> NodeId {
        let g = self.g;
        if owner(m, x) == Some(g) {
            return self.copies.copy[&x];
        }
        if owner(m, x).is_some() {
            return self.copies.fv_param[&(g, FvKey::Node(x))];
        }
        if let Some(w) = weight_of(m, x, self.plan.weights) {
            return self.copies.fv_param[&(g, FvKey::Weight(w))];
        }
        let c = match m.constant(x) {
            Some(c @ (Const::Graph(_) | Const::Tuple(_) | Const::List(_))) => c.clone(),
            _ => return x,
        };
        let mut made = Vec::new();
        let y = anfora_ops::deep(|| self.lifted_const(m, &c, x, &mut made));
        match user {
            Some(u) => self.before.entry(u).or_default().extend(made),
            None => self.trailing.extend(made),
        }
        y
    }

    /// Constant `c` (node `x`) with the program's graphs in it replaced by their lifted copies:
    /// a constant while they are closed; otherwise nodes (`Partial` for a graph with free
    /// values, `MakeTuple`/`MakeList` around it), appended to `made` in evaluation order.
    fn lifted_const(&self, m: &mut Module, c: &Const, x: NodeId, made: &mut Vec<NodeId>) -> NodeId {
        let mut open = false;
        c.for_each_graph(&mut |k| open |= self.plan.fv.get(&k).is_some_and(|s| !s.is_empty()));
        if !open {
            return match self.relabeled(c) {
                Some(c) => m.value(c),
                None => x,
            };
        }
        let span = m.node(x).span;
        let mut ins = Vec::new();
        match c {
            Const::Graph(k) => {
                ins.push(m.value(Const::Prim(Prim::Partial)));
                ins.push(m.value(Const::Graph(self.copies.lifted[k])));
                ins.extend(self.fv_args(m, *k));
            }
            Const::Tuple(items) | Const::List(items) => {
                let make = match c {
                    Const::Tuple(_) => Prim::MakeTuple,
                    _ => Prim::MakeList,
                };
                ins.push(m.value(Const::Prim(make)));
                for item in items.iter() {
                    let v = m.value(item.clone());
                    ins.push(anfora_ops::deep(|| self.lifted_const(m, item, v, made)));
                }
            }
            _ => unreachable!("only graphs and sequences hold graphs"),
        }
        let node = m.apply_unordered(self.lg, ins, span);
        made.push(node);
        node
    }

    /// `c` with every program graph in it replaced by its lifted copy; None when it holds none.
    fn relabeled(&self, c: &Const) -> Option<Const> {
        let items = match c {
            Const::Graph(k) => return self.copies.lifted.get(k).map(|&l| Const::Graph(l)),
            Const::Tuple(items) | Const::List(items) => items,
            _ => return None,
        };
        let new: Vec<Option<Const>> = items
            .iter()
            .map(|i| anfora_ops::deep(|| self.relabeled(i)))
            .collect();
        if new.iter().all(Option::is_none) {
            return None;
        }
        let items = new
            .into_iter()
            .zip(items.iter())
            .map(|(n, i)| n.unwrap_or_else(|| i.clone()));
        Some(match c {
            Const::Tuple(_) => Const::tuple(items.collect()),
            _ => Const::List(items.collect()),
        })
    }

    /// Fills in the copy of node `n`: calls of program graphs pass their free values first.
    fn node(&mut self, m: &mut Module, n: NodeId) {
        let ins = m.inputs(n).to_vec();
        let callee = ins[0];
        let mut new_ins = Vec::with_capacity(ins.len());
        let mut extra: Vec<NodeId> = Vec::new();
        match m.constant(callee).and_then(Const::as_graph) {
            Some(k) if self.plan.graphs.contains(&k) => {
                new_ins.push(m.value(Const::Graph(self.copies.lifted[&k])));
                extra = self.fv_args(m, k);
            }
            _ if self.plan.call_only.contains(&callee) => {
                new_ins.push(self.map_in(m, callee, Some(n)));
                let k = m.inputs(callee)[2];
                let k = m.constant(k).and_then(Const::as_graph).expect("a branch");
                extra = self.fv_args(m, k);
            }
            _ => new_ins.push(self.map_in(m, callee, Some(n))),
        }
        new_ins.extend(extra);
        let is_switch = self.plan.call_only.contains(&n);
        let binding = crate::stars::binds_callee(m, n);
        for (i, &x) in ins.iter().enumerate().skip(1) {
            let branch = is_switch && i >= 2;
            let y = match m.constant(x).and_then(Const::as_graph) {
                Some(k) if branch => m.value(Const::Graph(self.copies.lifted[&k])),
                Some(_) if binding && i == 1 => x,
                _ => self.map_in(m, x, Some(n)),
            };
            new_ins.push(y);
        }
        let c = self.copies.copy[&n];
        *m.inputs_mut(c).expect("an Apply") = new_ins;
    }

    /// The output and the evaluation order, with the closures made before their users.
    fn finish(mut self, m: &mut Module) {
        let out = m.graph(self.g).output.map(|o| self.map_in(m, o, None));
        let order: Vec<NodeId> = m.graph(self.g).order.clone();
        let mut new_order = Vec::with_capacity(order.len());
        for n in order {
            if let Some(ps) = self.before.remove(&n) {
                new_order.extend(ps);
            }
            new_order.push(self.copies.copy[&n]);
        }
        // Closures made for unordered nodes (the output tail call) and for the output.
        for ps in self.before.into_values() {
            new_order.extend(ps);
        }
        new_order.extend(self.trailing);
        m.graphs[self.lg].order = new_order;
        if let Some(o) = out {
            m.set_output(self.lg, o);
        }
    }
}
