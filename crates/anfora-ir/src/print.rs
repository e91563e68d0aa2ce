//! The `.ir` text dump, in MindSpore's format:
//!
//! ```text
//! # IR entry: @main
//! # Total subgraphs: 2
//!
//! subgraph @main(%para1_x) {
//!   %0(a) = Sub(%para1_x, I64(1))
//!       # prog.py:3:9: a = x - 1
//!   %1 = call @f(%0)
//!   Return(%1)
//! }
//! ```
//!
//! Nodes are numbered per graph in evaluation order, parameters across the whole dump, and a
//! free variable prints as `$(@owner:%k)`. Everything is derived from the module's content, so
//! the same program always prints the same text.

use std::collections::HashMap;
use std::fmt::Write;

use crate::analysis::{Analysis, analyze};
use crate::{Const, GraphId, GraphKind, Module, Monad, NodeId, NodeKind, Prim};

/// Options of the printer.
pub struct PrintOptions<'a> {
    /// Adds `# file:line:col: source` after each node.
    pub source_comments: bool,
    /// Abstract value of a node, printed on the line after it (once inference exists).
    pub abstract_of: Option<&'a dyn Fn(NodeId) -> Option<String>>,
}

impl Default for PrintOptions<'_> {
    fn default() -> Self {
        PrintOptions {
            source_comments: true,
            abstract_of: None,
        }
    }
}

/// Prints `entry` and every graph it reaches.
pub fn print_module(module: &Module, entry: GraphId) -> String {
    print_with(module, entry, &PrintOptions::default())
}

pub fn print_with(module: &Module, entry: GraphId, opts: &PrintOptions) -> String {
    let a = analyze(module, &[entry]);
    let names = Names::new(module, &a);
    let mut out = String::new();
    let _ = writeln!(out, "# IR entry: @{}", module.graph(entry).name);
    let _ = writeln!(out, "# Total subgraphs: {}", a.graphs.len());
    for &g in &a.graphs {
        out.push('\n');
        print_graph(module, &a, &names, g, opts, &mut out);
    }
    out
}

/// Local names of every node in the dump.
struct Names {
    local: HashMap<NodeId, String>,
}

impl Names {
    fn new(module: &Module, a: &Analysis) -> Names {
        let mut local = HashMap::new();
        let mut para = 0;
        for &g in &a.graphs {
            for &p in &module.graph(g).params {
                para += 1;
                let name = module.node(p).name.as_deref().unwrap_or("");
                local.insert(p, format!("para{para}_{name}"));
            }
            for (i, &n) in a.nodes[g].iter().enumerate() {
                local.insert(n, i.to_string());
            }
        }
        Names { local }
    }

    /// How node `n` is referred to from graph `from`.
    fn operand(&self, module: &Module, from: GraphId, n: NodeId) -> String {
        let node = module.node(n);
        match (&node.kind, node.owner) {
            (NodeKind::Value(c), _) => constant(module, c),
            (_, Some(owner)) => {
                let local = self
                    .local
                    .get(&n)
                    .cloned()
                    .unwrap_or_else(|| format!("?{n}"));
                if owner == from {
                    format!("%{local}")
                } else if module.is_param(n) {
                    format!("$(@{}:{local})", module.graph(owner).name)
                } else {
                    format!("$(@{}:%{local})", module.graph(owner).name)
                }
            }
            (_, None) => format!("?{n}"),
        }
    }
}

/// A constant as the dump shows it; graphs by name.
pub fn constant(module: &Module, c: &Const) -> String {
    crate::deep(|| constant_inner(module, c))
}

fn constant_inner(module: &Module, c: &Const) -> String {
    match c {
        Const::Graph(g) => format!("@{}", module.graph(*g).name),
        Const::Tuple(items) => {
            let parts: Vec<String> = items.iter().map(|c| constant(module, c)).collect();
            if parts.len() == 1 {
                format!("({},)", parts[0])
            } else {
                format!("({})", parts.join(", "))
            }
        }
        Const::List(items) => {
            let parts: Vec<String> = items.iter().map(|c| constant(module, c)).collect();
            format!("[{}]", parts.join(", "))
        }
        other => other.to_string(),
    }
}

fn kind_attr(kind: GraphKind) -> Option<&'static str> {
    Some(match kind {
        GraphKind::Function => return None,
        GraphKind::Lambda => "lambda",
        GraphKind::ModuleInit => "module_init",
        GraphKind::TrueBranch => "true_branch",
        GraphKind::FalseBranch => "false_branch",
        GraphKind::Join => "join",
        GraphKind::LoopHeader => "loop_header",
        GraphKind::LoopBody => "loop_body",
        GraphKind::Fused => "fused",
    })
}

/// Which chain state `n` is: a monad constant, an `UpdateState` of one, or a
/// parameter whose abstract is a monad.
fn monad_of(module: &Module, n: NodeId, opts: &PrintOptions) -> Option<Monad> {
    let mut n = n;
    loop {
        match module.constant(n) {
            Some(Const::Monad(m)) => return Some(*m),
            Some(_) => return None,
            None => {}
        }
        if module.callee_prim(n) == Some(Prim::UpdateState) {
            n = module.inputs(n)[1];
            continue;
        }
        if module.is_param(n) {
            let name = opts.abstract_of.and_then(|f| f(n));
            return Monad::ALL
                .into_iter()
                .find(|m| name.as_deref() == Some(m.abstract_name()));
        }
        return None;
    }
}

/// MindSpore's `# SideEffect: { memory io load }` line: what a graph does to Parameters
/// (writes, or calls that get the memory state), whether it prints (or passes the IO state
/// on), whether it communicates (the collectives' chain) and whether it reads Parameters.
fn side_effect_line(module: &Module, nodes: &[NodeId], opts: &PrintOptions) -> Option<String> {
    let mut uses = [false; Monad::ALL.len()];
    let mut load = false;
    for &n in nodes {
        match module.callee_prim(n) {
            Some(Prim::Load) => load = true,
            Some(Prim::UpdateState | Prim::Depend) => {}
            Some(p) => {
                // Only once the auto-monad stage has given the primitive its state.
                if let Some(m) = p.effects().chain()
                    && module.inputs(n)[1..]
                        .iter()
                        .any(|&x| monad_of(module, x, opts) == Some(m))
                {
                    uses[m.index()] = true;
                }
            }
            None => {
                for &x in &module.inputs(n)[1..] {
                    if let Some(m) = monad_of(module, x, opts) {
                        uses[m.index()] = true;
                    }
                }
            }
        }
    }
    let mut parts: Vec<&str> = Monad::ALL
        .into_iter()
        .filter(|m| uses[m.index()])
        .map(Monad::effect_word)
        .collect();
    if load {
        parts.push("load");
    }
    (!parts.is_empty()).then(|| format!("# SideEffect: {{ {} }}", parts.join(" ")))
}

fn print_graph(
    module: &Module,
    a: &Analysis,
    names: &Names,
    g: GraphId,
    opts: &PrintOptions,
    out: &mut String,
) {
    let graph = module.graph(g);
    let mut attrs = Vec::new();
    if let Some(k) = kind_attr(graph.kind) {
        attrs.push(format!("block: {k}"));
    }
    if a.recursive[g] {
        attrs.push("recursive: 1".to_string());
    }
    if !attrs.is_empty() {
        out.push_str("subgraph attr:\n");
        for attr in attrs {
            let _ = writeln!(out, "{attr}");
        }
    }
    if opts.source_comments && !graph.span.is_none() {
        let _ = writeln!(
            out,
            "# In function {} at {}",
            graph.function,
            module.sources.describe(graph.span)
        );
    }
    if let Some(line) = side_effect_line(module, &a.nodes[g], opts) {
        let _ = writeln!(out, "{line}");
    }
    let params: Vec<String> = graph
        .params
        .iter()
        .map(|&p| names.operand(module, g, p))
        .collect();
    let parent = match a.parent[g] {
        Some(p) => format!(" parent: [subgraph @{}]", module.graph(p).name),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "subgraph @{}{}({}) {{",
        graph.name,
        parent,
        params.join(", ")
    );
    for &n in &a.nodes[g] {
        let node = module.node(n);
        let inputs = module.inputs(n);
        let args: Vec<String> = inputs[1..]
            .iter()
            .map(|&i| names.operand(module, g, i))
            .collect();
        let callee = match module.constant(inputs[0]) {
            Some(Const::Prim(p)) => p.name().to_string(),
            Some(Const::Graph(h)) => format!("call @{}", module.graph(*h).name),
            _ => names.operand(module, g, inputs[0]),
        };
        let label = match &node.name {
            Some(name) => format!("%{}({})", names.local[&n], name),
            None => format!("%{}", names.local[&n]),
        };
        // A node in a `with placement(...)` block shows its device.
        let device = match module.device_of(n) {
            Some(d) => format!(" @{d}"),
            None => String::new(),
        };
        let _ = writeln!(out, "  {label} = {callee}({}){device}", args.join(", "));
        if let Some(f) = opts.abstract_of
            && let Some(abs) = f(n)
        {
            let _ = writeln!(out, "      : {abs}");
        }
        if opts.source_comments && !node.span.is_none() {
            let _ = writeln!(out, "      # {}", source_comment(module, node.span));
        }
    }
    match graph.output {
        Some(o) => {
            let _ = writeln!(out, "  Return({})", names.operand(module, g, o));
        }
        None => out.push_str("  Return(<missing>)\n"),
    }
    out.push_str("}\n");
}

fn source_comment(module: &Module, span: crate::Span) -> String {
    match module.sources.location(span) {
        Some((file, loc)) => format!(
            "{}:{}:{}: {}",
            file.name,
            loc.line,
            loc.col,
            file.line_text(span.start).trim()
        ),
        None => "<unknown>".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Prim, SourceFile, Span};
    use std::sync::Arc;

    #[test]
    fn prints_closures_with_free_variables() {
        let mut m = Module::new();
        let src = "def f(x):\n    def g():\n        return x + 1\n    return g\n";
        let at = src.find("x + 1").unwrap() as u32;
        let file = m.sources.add(SourceFile::new("t.py", src, 0));
        let f = m.add_graph(
            "f",
            Arc::from("f"),
            GraphKind::Function,
            Span::new(file, 0, 3),
        );
        let x = m.add_param(f, "x", Span::NONE);
        let g = m.add_graph("g", Arc::from("g"), GraphKind::Function, Span::NONE);
        let one = m.value(Const::Int(1));
        let add = m.apply_prim(g, Prim::Add, &[x, one], Span::new(file, at, at + 5));
        m.set_name(add, "y");
        m.set_output(g, add);
        let gv = m.value(Const::Graph(g));
        m.set_output(f, gv);
        let text = print_module(&m, f);
        let expected = "\
# IR entry: @f
# Total subgraphs: 2

# In function f at t.py:1:1
subgraph @f(%para1_x) {
  Return(@g)
}

subgraph @g parent: [subgraph @f]() {
  %0(y) = Add($(@f:para1_x), I64(1))
      # t.py:3:16: return x + 1
  Return(%0)
}
";
        assert_eq!(text, expected);
        // Deterministic.
        assert_eq!(text, print_module(&m, f));
    }

    #[test]
    fn prints_calls_of_graphs_and_computed_functions() {
        let mut m = Module::new();
        let f = m.add_graph("f", Arc::from("f"), GraphKind::Function, Span::NONE);
        let c = m.add_param(f, "c", Span::NONE);
        let t = m.add_graph("✓f", Arc::from("f"), GraphKind::TrueBranch, Span::NONE);
        let e = m.add_graph("✗f", Arc::from("f"), GraphKind::FalseBranch, Span::NONE);
        let one = m.value(Const::Int(1));
        m.set_output(t, one);
        let two = m.value(Const::tuple(vec![Const::Int(2), Const::str("a\"b")]));
        m.set_output(e, two);
        let tv = m.value(Const::Graph(t));
        let ev = m.value(Const::Graph(e));
        let sw = m.apply_prim(f, Prim::Switch, &[c, tv, ev], Span::NONE);
        let call = m.apply_unordered(f, vec![sw], Span::NONE);
        m.set_output(f, call);
        let text = print_with(
            &m,
            f,
            &PrintOptions {
                source_comments: false,
                abstract_of: None,
            },
        );
        assert!(text.contains("  %0 = Switch(%para1_c, @✓f, @✗f)\n  %1 = %0()\n  Return(%1)"));
        assert!(text.contains(
            "subgraph attr:\nblock: false_branch\nsubgraph @✗f() {\n  Return((I64(2), \"a\\\"b\"))"
        ));
    }
}
