//! Compile-time constants held by Value nodes.

use std::fmt;
use std::sync::Arc;

use anfora_tensor::{DType, Tensor};

use crate::{GraphId, Monad, ParamRef, Prim};

/// A constant value. Functions are values too: a graph or a primitive is a constant.
#[derive(Clone, Debug)]
pub enum Const {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Arc<str>),
    Tuple(Arc<[Const]>),
    /// A list (lists are immutable values in compiled code).
    List(Arc<[Const]>),
    Tensor(Tensor),
    DType(DType),
    Prim(Prim),
    Graph(GraphId),
    /// `...` (numpy indexing).
    Ellipsis,
    /// A Parameter, by reference (its value is read with `Load`).
    Ref(ParamRef),
    /// The initial state of an effect chain (the entry graph's `U` or `IO`).
    Monad(Monad),
    /// A global name not resolved yet: the parse stage emits these and the resolve stage
    /// replaces them. `scope` identifies the namespace (Python module) to look the name up in.
    Symbol {
        scope: u32,
        name: Arc<str>,
    },
    /// A namespace (`anfora`, `anfora.ops`) during resolution; attributes of it are folded.
    Namespace(Arc<str>),
    /// An object of the host language (a method's `self`) during resolution, by the id its
    /// resolver gave it; attributes of it fold to constants. None survives resolution.
    HostObject(u64),
    /// The value of a local variable that has not been assigned on some path. Only `CheckBound`
    /// and phi arguments ever see it.
    Unbound,
}

impl Const {
    pub fn str(s: &str) -> Const {
        Const::Str(Arc::from(s))
    }

    pub fn tuple(items: Vec<Const>) -> Const {
        Const::Tuple(Arc::from(items))
    }

    pub fn as_graph(&self) -> Option<GraphId> {
        match self {
            Const::Graph(g) => Some(*g),
            _ => None,
        }
    }

    pub fn as_prim(&self) -> Option<Prim> {
        match self {
            Const::Prim(p) => Some(*p),
            _ => None,
        }
    }

    /// Whether this constant mentions a graph (a function or an object), tuples included.
    pub fn holds_graph(&self) -> bool {
        let mut holds = false;
        self.for_each_graph(&mut |_| holds = true);
        holds
    }

    /// Calls `f` on every graph mentioned in this constant, tuples included.
    pub fn for_each_graph(&self, f: &mut impl FnMut(GraphId)) {
        crate::deep(|| self.for_each_graph_inner(f))
    }

    fn for_each_graph_inner(&self, f: &mut impl FnMut(GraphId)) {
        match self {
            Const::Graph(g) => f(*g),
            Const::Tuple(items) | Const::List(items) => {
                items.iter().for_each(|c| c.for_each_graph(f))
            }
            _ => {}
        }
    }

    /// Structural equality; floats compare by bits so that constants can be deduplicated.
    pub fn same_as(&self, other: &Const) -> bool {
        crate::deep(|| self.same_as_inner(other))
    }

    fn same_as_inner(&self, other: &Const) -> bool {
        match (self, other) {
            (Const::None, Const::None)
            | (Const::Unbound, Const::Unbound)
            | (Const::Ellipsis, Const::Ellipsis) => true,
            (
                Const::Symbol {
                    scope: s1,
                    name: n1,
                },
                Const::Symbol {
                    scope: s2,
                    name: n2,
                },
            ) => s1 == s2 && n1 == n2,
            (Const::Namespace(a), Const::Namespace(b)) => a == b,
            (Const::HostObject(a), Const::HostObject(b)) => a == b,
            (Const::Bool(a), Const::Bool(b)) => a == b,
            (Const::Int(a), Const::Int(b)) => a == b,
            (Const::Float(a), Const::Float(b)) => a.to_bits() == b.to_bits(),
            (Const::Str(a), Const::Str(b)) => a == b,
            (Const::Tuple(a), Const::Tuple(b)) | (Const::List(a), Const::List(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.same_as(y))
            }
            (Const::Tensor(a), Const::Tensor(b)) => a.same_as(b),
            (Const::DType(a), Const::DType(b)) => a == b,
            (Const::Prim(a), Const::Prim(b)) => a == b,
            (Const::Graph(a), Const::Graph(b)) => a == b,
            (Const::Ref(a), Const::Ref(b)) => a == b,
            (Const::Monad(a), Const::Monad(b)) => a == b,
            _ => false,
        }
    }
}

/// Quotes a string the way the `.ir` dump shows string constants.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `items` between `open` and `close`, separated by commas.
fn write_items(
    f: &mut fmt::Formatter<'_>,
    open: &str,
    items: &[Const],
    close: &str,
) -> fmt::Result {
    f.write_str(open)?;
    for (i, c) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{c}")?;
    }
    f.write_str(close)
}

/// How a constant is written in the `.ir` dump (MindSpore style: `I64(2)`, `F64(0.5)`).
/// Graph names need the module, so graphs print as their id here; the printer overrides them.
impl fmt::Display for Const {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::deep(|| match self {
            Const::None => f.write_str("None"),
            Const::Bool(b) => write!(f, "Bool({})", *b as u8),
            Const::Int(i) => write!(f, "I64({i})"),
            Const::Float(x) => write!(f, "F64({x:?})"),
            Const::Str(s) => f.write_str(&quote(s)),
            Const::Tuple(items) if items.len() == 1 => write!(f, "({},)", items[0]),
            Const::Tuple(items) => write_items(f, "(", items, ")"),
            Const::List(items) => write_items(f, "[", items, "]"),
            Const::Tensor(t) => {
                let shape: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
                if t.numel() <= 16 {
                    write!(
                        f,
                        "Tensor(shape=[{}], dtype={}, value={})",
                        shape.join(", "),
                        t.dtype(),
                        t.to_str().replace('\n', "")
                    )
                } else {
                    write!(
                        f,
                        "Tensor(shape=[{}], dtype={})",
                        shape.join(", "),
                        t.dtype()
                    )
                }
            }
            Const::DType(d) => write!(f, "DType({d})"),
            Const::Prim(p) => f.write_str(p.name()),
            Const::Graph(g) => write!(f, "@{g}"),
            Const::Ellipsis => f.write_str("Ellipsis"),
            Const::Ref(p) => write!(f, "%para.{}", p.name()),
            Const::Monad(m) => f.write_str(m.dump_name()),
            Const::Symbol { name, .. } => write!(f, "Symbol({name})"),
            Const::Namespace(name) => write!(f, "Namespace({name})"),
            Const::HostObject(id) => write!(f, "HostObject({id})"),
            Const::Unbound => f.write_str("Unbound"),
        })
    }
}
