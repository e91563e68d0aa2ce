//! The table of every built-in family, and what any stage may ask of a [`Prim`]: its
//! declaration, name, signature, effects and the names users call it by.

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use crate::abs::{Abs, Rule};
use crate::def::Backward;
use crate::def::{Family, PrimDef, Py};
use crate::emit::{Call, Emit, Grads};
use crate::family::{
    array, builtins, creation, dict, effect, grad, linalg, math, nn, operators, optim, pad, quant,
    random, reduce, shape, structure,
};
use crate::prim::{Effects, Prim};
use crate::signature::Signature;
use crate::value::{OpResult, Value};

/// The built-in families, each at its own index.
static FAMILIES: &[&Family] = &[
    &structure::FAMILY,
    &operators::FAMILY,
    &builtins::FAMILY,
    &creation::FAMILY,
    &math::FAMILY,
    &reduce::FAMILY,
    &shape::FAMILY,
    &array::FAMILY,
    &pad::FAMILY,
    &nn::FAMILY,
    &linalg::FAMILY,
    &effect::FAMILY,
    &optim::FAMILY,
    &random::FAMILY,
    &grad::FAMILY,
    &dict::FAMILY,
    &quant::FAMILY,
    &crate::family::collective::FAMILY,
];

/// Where a Python name is looked up.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Namespace {
    Builtin,
    Op,
    Anfora,
}

struct Tables {
    all: Vec<Prim>,
    signatures: Vec<Vec<Signature>>,
    names: HashMap<(Namespace, &'static str), Prim>,
    /// Names of each namespace in declaration order.
    listed: HashMap<Namespace, Vec<&'static str>>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut t = Tables {
            all: Vec::new(),
            signatures: Vec::new(),
            names: HashMap::new(),
            listed: HashMap::new(),
        };
        for (f, family) in FAMILIES.iter().enumerate() {
            assert_eq!(
                family.index as usize, f,
                "family {} is out of place",
                family.name
            );
            let mut sigs = Vec::new();
            for (i, def) in family.members.iter().enumerate() {
                let p = Prim::member(f as u16, i as u16);
                t.all.push(p);
                sigs.push(
                    Signature::parse(&python_name(def), def.signature).unwrap_or_else(|e| {
                        panic!("the signature of {} does not parse: {e}", def.name)
                    }),
                );
                for &py in def.python {
                    let (ns, name) = match py {
                        Py::Builtin(n) => (Namespace::Builtin, n),
                        Py::Op(n) => (Namespace::Op, n),
                        Py::Anfora(n) => (Namespace::Anfora, n),
                    };
                    let old = t.names.insert((ns, name), p);
                    assert!(old.is_none(), "two primitives are called {name}");
                    t.listed.entry(ns).or_default().push(name);
                }
            }
            t.signatures.push(sigs);
        }
        t
    })
}

fn python_name(def: &PrimDef) -> String {
    match def.python.first() {
        Some(Py::Builtin(n)) => n.to_string(),
        Some(Py::Op(n)) => format!("ops.{n}"),
        Some(Py::Anfora(n)) => format!("anfora.{n}"),
        None => def.name.to_string(),
    }
}

fn lookup(ns: Namespace, name: &str) -> Option<Prim> {
    tables().names.get(&(ns, name)).copied()
}

fn listed(ns: Namespace) -> impl Iterator<Item = &'static str> {
    tables().listed.get(&ns).into_iter().flatten().copied()
}

impl Prim {
    /// The declaration of this primitive.
    pub fn def(self) -> &'static PrimDef {
        match self.custom_id() {
            Some(id) => crate::custom::get(id).def,
            None => &FAMILIES[self.family_index() as usize].members[self.index()],
        }
    }

    /// The reference implementation on bound arguments (states dropped, Parameters read): how
    /// one primitive's rules use another's.
    pub fn eval(self, args: &[Value]) -> OpResult {
        if let Some(k) = crate::kernels::on_device(self, args) {
            return k.call(&mut args.to_vec(), &mut std::io::sink());
        }
        (self.def().eval)(self, args, &mut std::io::sink())
    }

    /// The inference rule on bound arguments.
    pub fn infer(self, args: &[Abs]) -> Rule {
        (self.def().infer)(self, args)
    }

    /// The backward rule for call `c`; `None` where there is none (see [`Backward`]).
    pub fn backward(self, e: &mut dyn Emit, c: &Call) -> Option<Grads> {
        match self.def().backward {
            Backward::Rule(rule) => rule(e, c),
            Backward::First(f) => Some(c.first(e, |e| f(e, c))),
            Backward::Zero => Some(c.none()),
            Backward::Refused(_) | Backward::Through(_) => None,
        }
    }

    /// The built-in primitives (custom ones are in their registry).
    pub fn all() -> &'static [Prim] {
        &tables().all
    }

    /// Name in `.ir` dumps.
    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// How users call it: `len`, `ops.sum`, or the IR name for internal primitives.
    pub fn python_name(self) -> String {
        python_name(self.def())
    }

    /// The Python-level signature, used to bind keyword arguments and defaults.
    pub fn signature(self) -> &'static Signature {
        match self.custom_id() {
            Some(id) => &crate::custom::get(id).signature,
            None => &tables().signatures[self.family_index() as usize][self.index()],
        }
    }

    /// The side-effect attributes (MindSpore's `side_effect_mem`, `_io`, `_hidden`,
    /// `_propagate`).
    pub fn effects(self) -> Effects {
        self.def().effects
    }

    /// Whether argument `i` is taken as a Parameter reference rather than read as a value.
    /// Everywhere else a Parameter argument is read (`Load`) at that point of the program.
    pub fn takes_ref(self, i: usize) -> bool {
        self.def().attrs.refs.takes(i)
    }

    /// The number of leading arguments that are Parameters written in place.
    pub fn written_refs(self) -> usize {
        self.def().attrs.refs.written()
    }

    /// True for the builtin classes that `isinstance` accepts.
    pub fn is_type(self) -> bool {
        self.def().attrs.is_type
    }

    /// Whether its result may be one of its arguments or share memory with one (a numpy
    /// view), or is a Parameter it writes: an in-place update of either is seen through the
    /// other.
    pub fn views(self) -> bool {
        let a = &self.def().attrs;
        a.views || self.written_refs() > 0 || a.states
    }

    /// Whether it is a numpy constructor, whose 0-d result is an array, not a scalar.
    pub fn makes_array(self) -> bool {
        self.def().attrs.makes_array
    }

    /// A function of its arguments alone (no effects, never raises through a callee, creates
    /// no closure): passes may merge equal calls and drop unused ones.
    pub fn is_pure(self) -> bool {
        self.pure_with(self.effects())
    }

    /// [`Prim::is_pure`] under effect attributes `e` (tests mark primitives hidden).
    pub fn pure_with(self, e: Effects) -> bool {
        !self.def().attrs.opaque && !e.ordered()
    }

    /// Whether a call with constant arguments may be evaluated at compile time. State plumbing
    /// is not (a `Load` reads the Parameter when the program runs), nor are custom kernels.
    pub fn foldable(self) -> bool {
        self.foldable_with(self.effects())
    }

    /// [`Prim::foldable`] under effect attributes `e` (tests mark primitives hidden).
    pub fn foldable_with(self, e: Effects) -> bool {
        self.pure_with(e) && self.def().attrs.fold
    }

    /// The Python builtin called `name`.
    pub fn builtin(name: &str) -> Option<Prim> {
        lookup(Namespace::Builtin, name)
    }

    /// `ops.<name>`: a built-in or a registered custom primitive.
    pub fn op(name: &str) -> Option<Prim> {
        Prim::builtin_op(name).or_else(|| crate::custom::lookup(name))
    }

    /// `ops.<name>` among the built-in primitives.
    pub fn builtin_op(name: &str) -> Option<Prim> {
        lookup(Namespace::Op, name)
    }

    /// Names of the `anfora.ops` namespace (for "did you mean" hints).
    pub fn op_names() -> impl Iterator<Item = &'static str> {
        listed(Namespace::Op).chain(crate::custom::names())
    }

    /// `anfora.Parameter`, `anfora.set_seed`.
    pub fn anfora_function(name: &str) -> Option<Prim> {
        lookup(Namespace::Anfora, name)
    }

    pub fn anfora_function_names() -> impl Iterator<Item = &'static str> {
        listed(Namespace::Anfora)
    }

    /// The builtins the frontend knows (`enumerate` and `zip` it lowers itself).
    pub fn builtin_names() -> impl Iterator<Item = &'static str> {
        listed(Namespace::Builtin).chain(["enumerate", "zip"])
    }
}

impl fmt::Debug for Prim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.custom_id() {
            Some(id) => write!(f, "Custom({id:?})"),
            None => f.write_str(self.def().ident),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn families_declare_unique_primitives_with_parsing_signatures() {
        let t = tables();
        let mut names = HashSet::new();
        let mut idents = HashSet::new();
        for &p in &t.all {
            assert!(names.insert(p.name()), "two primitives named {}", p.name());
            assert!(idents.insert(p.def().ident), "two constants {:?}", p);
            let text = p.signature().python_text();
            let again = Signature::parse(p.name(), &text).unwrap();
            assert_eq!(
                again.python_text(),
                text,
                "{} does not round-trip",
                p.name()
            );
        }
        assert!(t.all.len() > 100);
    }

    #[test]
    fn namespaces_resolve() {
        assert_eq!(Prim::builtin("len"), Some(Prim::Len));
        assert_eq!(Prim::op("sum"), Some(Prim::ReduceSum));
        assert_eq!(Prim::op("add"), Some(Prim::Add));
        assert_eq!(Prim::builtin("open"), None);
        assert_eq!(Prim::ReduceSum.python_name(), "ops.sum");
        assert_eq!(Prim::Len.python_name(), "len");
        assert_eq!(Prim::Abs.python_name(), "abs");
        assert_eq!(Prim::Switch.python_name(), "Switch");
        assert_eq!(Prim::anfora_function("set_seed"), Some(Prim::SetSeed));
        assert_eq!(Prim::SetSeed.python_name(), "anfora.set_seed");
        assert_eq!(format!("{:?}", Prim::Eq), "Eq");
    }

    #[test]
    fn signatures_and_effects_are_declared() {
        let sig = Prim::ReduceSum.signature();
        assert_eq!(sig.params.len(), 3);
        assert_eq!(&*sig.params[1].name, "axis");
        assert_eq!(&*sig.name, "ops.sum");
        assert!(Prim::Print.effects().io);
        assert!(!Prim::Add.effects().io);
        assert!(Prim::Partial.effects().propagate);
        assert!(Prim::Assign.effects().mem && !Prim::Assign.effects().io);
        assert!(Prim::Uniform.effects().hidden && !Prim::Uniform.effects().mem);
        assert!(Prim::Depend.effects().propagate);
        assert!(Prim::Adam.takes_ref(2) && !Prim::Adam.takes_ref(3));
        assert_eq!(Prim::ApplyMomentum.written_refs(), 2);
        assert!(!Prim::Add.takes_ref(0));
    }
}
