//! Functions copied for the constant functions and objects they are called with.
//!
//! A function differentiated with a Cell or a `def` passed as an argument (`grad(loss,
//! ...)(self.net, x)`) only sees a value there: its calls are of a function known at run time
//! and its attribute reads (`net.body`, `net.energy`) are of an object used as a value, which
//! differentiated code cannot do for methods and sub-objects (E0502). Where every call passes
//! the same constant, a copy of the function with the constant in place of the parameter turns
//! those calls into calls of known functions and those reads into constants (`GetAttr` of a
//! known object folds to the attribute's constant, so chains `net.body.fc` fold too), which
//! lifting and J handle like any other code: the Parameters they reach are found as weights.
//! The functions the copy, or any graph the differentiated function reaches, calls with
//! constant objects are copied the same way (`helper(self.net, x)` in a Cell's `construct`).
//!
//! Only bodies that create no functions are copied (a nested function would read the
//! original's nodes); the caller falls back to passing the constants (`expand::with_arguments`).

use std::collections::HashMap;

use anfora_ir::analysis::{reachable, referenced};
use anfora_ir::{Const, GraphId, Module, NodeId, Prim};

use crate::Namer;

/// How deep copies may call copies: a bound for functions that pass new constants on and on.
const MAX_DEPTH: usize = 8;

/// Copies of functions for constant arguments, each made once.
pub(crate) struct Specializer<'a> {
    m: &'a mut Module,
    names: &'a mut Namer,
    made: Vec<(GraphId, Vec<Option<Const>>, GraphId)>,
}

impl<'a> Specializer<'a> {
    pub(crate) fn new(m: &'a mut Module, names: &'a mut Namer) -> Self {
        Specializer {
            m,
            names,
            made: Vec::new(),
        }
    }

    /// A copy of `g`, with `g`'s signature, in which each parameter with a `known` constant
    /// reads that constant; None where `g` creates functions (or copies nest too deep).
    pub(crate) fn specialize(&mut self, g: GraphId, known: &[Option<Const>]) -> Option<GraphId> {
        self.copy(g, known, 0)
    }

    /// In the graphs `root` references, each call passing constants that hold objects calls a
    /// copy made for them (the same function, so primal uses of these graphs are unchanged).
    pub(crate) fn calls_in(&mut self, root: GraphId) {
        for (g, _) in referenced(self.m, &[root]) {
            self.calls(g, 0);
        }
    }

    fn copy(&mut self, g: GraphId, known: &[Option<Const>], depth: usize) -> Option<GraphId> {
        if let Some(&(_, _, done)) = self.made.iter().find(|(h, k, _)| *h == g && same(k, known)) {
            return Some(done);
        }
        if depth > MAX_DEPTH || !copyable(self.m, g) {
            return None;
        }
        let src = self.m.graph(g).clone();
        let copy = self.m.add_graph(
            self.names.fresh(&src.name),
            src.function.clone(),
            src.kind,
            src.span,
        );
        self.m.graphs[copy].signature = src.signature.clone();
        self.made.push((g, known.to_vec(), copy));
        let mut map: HashMap<NodeId, NodeId> = HashMap::new();
        for (i, &p) in src.params.iter().enumerate() {
            let node = self.m.node(p).clone();
            let name = node.name.as_deref().unwrap_or("x");
            let param = self.m.add_param(copy, name, node.span);
            let value = match known.get(i).cloned().flatten() {
                Some(c) => self.m.value_at(c, node.span),
                None => param,
            };
            map.insert(p, value);
        }
        for n in self.m.graph_nodes(g) {
            let node = self.m.node(n).clone();
            let inputs = (self.m.inputs(n).iter())
                .map(|x| *map.get(x).unwrap_or(x))
                .collect();
            let c = self.m.apply_unordered(copy, inputs, node.span);
            self.m.nodes[c].name = node.name.clone();
            self.m.nodes[c].inlined = node.inlined.clone();
            map.insert(n, c);
        }
        self.m.graphs[copy].order = src.order.iter().map(|n| map[n]).collect();
        let output = src.output.map(|o| *map.get(&o).unwrap_or(&o));
        if let Some(o) = output {
            self.m.set_output(copy, o);
        }
        self.fold(copy, depth);
        Some(copy)
    }

    /// In copy `g` (whose values no other graph reads): reads of constants fold
    /// ([`fold_reads`]), then calls passing objects are specialized ([`Self::calls`]).
    fn fold(&mut self, g: GraphId, depth: usize) {
        fold_reads(self.m, &[g]);
        self.calls(g, depth);
    }

    /// In `g`, each call passing constants that hold objects calls a copy made for them.
    fn calls(&mut self, g: GraphId, depth: usize) {
        for n in self.m.graph_nodes(g) {
            let inputs = self.m.inputs(n).to_vec();
            let Some(&Const::Graph(callee)) = inputs.first().and_then(|&f| self.m.constant(f))
            else {
                continue;
            };
            // Objects only: a function passed as a constant is already called in its J form
            // (and the grad stage's own continuations must stay as they are).
            let known: Vec<Option<Const>> = inputs[1..]
                .iter()
                .map(|&a| {
                    self.m
                        .constant(a)
                        .filter(|c| holds_objects(self.m, c))
                        .cloned()
                })
                .collect();
            if known.iter().all(Option::is_none) || known.len() != self.m.graph(callee).params.len()
            {
                continue;
            }
            if let Some(c) = self.copy(callee, &known, depth + 1) {
                let span = self.m.node(inputs[0]).span;
                let f = self.m.value_at(Const::Graph(c), span);
                self.m.inputs_mut(n).expect("a call")[0] = f;
            }
        }
    }
}

/// In the graphs `root` references, each value read from an enclosing function that is a
/// tuple of constants holding functions or objects (`pick = (self.b, self.c)` read by a
/// differentiated lambda) is read as that constant instead: J(f) then calls the J forms of
/// its items, where the value itself would be the caller's primal tuple.
pub(crate) fn constant_free_values(m: &mut Module, root: GraphId) {
    for (g, nodes) in referenced(m, &[root]) {
        for n in nodes {
            for j in 0..m.inputs(n).len() {
                let x = m.inputs(n)[j];
                let free = m.node(x).owner.is_some_and(|o| o != g);
                if !free || m.constant(x).is_some() {
                    continue;
                }
                if let Some(c) = constant_tuple(m, x).filter(Const::holds_graph) {
                    let v = m.value_at(c, m.node(x).span);
                    m.inputs_mut(n).expect("a call")[j] = v;
                }
            }
        }
    }
}

/// In the graphs `root` references, reads of constants that hold objects or functions fold
/// to what they read: `GetAttr` of a known object to the attribute's constant, an item of a
/// constant tuple to the item (`pick[1].energy` with `pick` a tuple of Cells). The reads
/// then call known functions, which J transforms, where a read through a value would be
/// refused for methods and sub-objects.
pub(crate) fn fold_constant_reads(m: &mut Module, root: GraphId) {
    let graphs: Vec<GraphId> = referenced(m, &[root]).into_iter().map(|(g, _)| g).collect();
    fold_reads(m, &graphs);
}

/// Folds the reads of constants in `graphs`, which must hold every graph that reads their
/// values, until none is left (a chain `net.body.fc` folds one link per round).
fn fold_reads(m: &mut Module, graphs: &[GraphId]) {
    loop {
        let mut changed = false;
        for &g in graphs {
            for n in m.graph_nodes(g) {
                let Some(k) = attribute(m, n).or_else(|| constant_item(m, n)) else {
                    continue;
                };
                let v = m.value_at(k, m.node(n).span);
                m.replace_uses(graphs, n, v);
                m.graphs[g].order.retain(|&x| x != n);
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

/// The item `t[i]` (`GetItem` or `TupleGetItem`) reads, where `t` is a constant tuple
/// holding functions and `i` a constant int.
fn constant_item(m: &Module, n: NodeId) -> Option<Const> {
    if !matches!(m.callee_prim(n), Some(Prim::GetItem | Prim::TupleGetItem)) {
        return None;
    }
    let inputs = m.inputs(n);
    let t = m.constant(*inputs.get(1)?).filter(|c| c.holds_graph())?;
    let Const::Tuple(items) = t else {
        return None;
    };
    let Some(Const::Int(i)) = m.constant(*inputs.get(2)?) else {
        return None;
    };
    let at = if *i < 0 { items.len() as i64 + i } else { *i };
    items.get(usize::try_from(at).ok()?).cloned()
}

/// The constant node `x` is: a constant, or a tuple of constants.
fn constant_tuple(m: &Module, x: NodeId) -> Option<Const> {
    if let Some(c) = m.constant(x) {
        return Some(c.clone());
    }
    if m.callee_prim(x) != Some(Prim::MakeTuple) {
        return None;
    }
    let items = m.inputs(x)[1..].iter().map(|&i| constant_tuple(m, i));
    Some(Const::tuple(items.collect::<Option<Vec<_>>>()?))
}

/// The constant of attribute `GetAttr(obj, name)` that node `n` reads, where `obj` is a known
/// object that has it.
fn attribute(m: &Module, n: NodeId) -> Option<Const> {
    if m.callee_prim(n) != Some(Prim::GetAttr) {
        return None;
    }
    let inputs = m.inputs(n);
    let Some(Const::Graph(object)) = m.constant(*inputs.get(1)?) else {
        return None;
    };
    let Some(Const::Str(name)) = m.constant(*inputs.get(2)?) else {
        return None;
    };
    m.objects
        .get(object)?
        .attrs
        .get(name)?
        .as_ref()
        .ok()
        .cloned()
}

/// Whether constant `c` holds an object used as a value (a Cell, an object with methods).
fn holds_objects(m: &Module, c: &Const) -> bool {
    let mut holds = false;
    c.for_each_graph(&mut |g| holds |= m.objects.contains_key(&g));
    holds
}

/// Whether `g` can be copied node for node: it reads only its own values and constants (it
/// is no closure), and no other graph reads its values (it creates no closures).
fn copyable(m: &Module, g: GraphId) -> bool {
    let owned = |x: &NodeId| m.node(*x).owner == Some(g);
    let closed = (m.graph_nodes(g).iter()).all(|&n| {
        m.inputs(n)
            .iter()
            .all(|x| owned(x) || m.constant(*x).is_some())
    });
    closed
        && reachable(m, &[g])
            .iter()
            .all(|(h, nodes)| *h == g || nodes.iter().all(|&n| !m.inputs(n).iter().any(owned)))
}

fn same(a: &[Option<Const>], b: &[Option<Const>]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (Some(x), Some(y)) => x.same_as(y),
            (None, None) => true,
            _ => false,
        })
}
