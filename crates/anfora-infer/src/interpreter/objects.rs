//! Attributes of host objects used as values (`Module::objects`): `net.w` where `net` is a
//! parameter, a tuple item or a branch's result. The object is known at compile time, so the
//! attribute is its constant; the specializer puts that constant in place of the read. Where
//! the value is one of several objects, chosen at run time, whose constants differ, the read
//! gets the join of their abstracts and the specializer selects the constant of the object
//! the value is (see [`chosen_attributes`]).

use anfora_ir::codes::{HOST_VALUE, NO_ATTRIBUTE, NO_BACKWARD_RULE, OBJECT_VALUE};
use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, GraphId, Module, NodeId};
use anfora_ops::abs::{Abs, CtxId, Func};

use super::Interpreter;

/// The objects among the functions value `a` may be (their graphs), and whether it may be
/// anything else too.
fn objects_of(module: &Module, a: &Abs) -> (Vec<GraphId>, bool) {
    let Abs::Func(fs) = a else {
        return (Vec::new(), true);
    };
    let objects: Vec<GraphId> = (fs.iter())
        .filter_map(|f| match f {
            Func::Closure { graph, .. } if module.objects.contains_key(graph) => Some(*graph),
            _ => None,
        })
        .collect();
    let other = objects.len() < fs.len();
    (objects, other)
}

/// The objects `object` may be with their attribute `name`, where the value is only ever one
/// of two or more objects and each has the attribute (its constants may differ).
pub(crate) fn chosen_attributes(
    module: &Module,
    object: &Abs,
    name: &str,
) -> Option<Vec<(GraphId, Const)>> {
    let (objects, other) = objects_of(module, object);
    if other || objects.len() < 2 {
        return None;
    }
    objects
        .iter()
        .map(|g| {
            Some((
                *g,
                module.objects[g].attrs.get(name)?.as_ref().ok()?.clone(),
            ))
        })
        .collect()
}

/// The constant attribute `name` of the objects `object` may be, if each has it and they
/// agree (one object, or objects chosen at run time whose attribute is the same constant).
pub(crate) fn attribute_const(module: &Module, object: &Abs, name: &str) -> Option<Const> {
    let (objects, other) = objects_of(module, object);
    if other {
        return None;
    }
    let mut values = objects
        .iter()
        .map(|g| module.objects[g].attrs.get(name)?.as_ref().ok());
    let first = values.next()??;
    values
        .all(|v| v.is_some_and(|v| v.same_as(first)))
        .then(|| first.clone())
}

/// The grad stage's copy of an object that value `a` is (its J graph, bare or partially
/// applied to its lifted weights): the original object, and the abstracts of the bound
/// values. `None` where `a` is not exactly one such copy.
fn differentiated_object(module: &Module, a: &Abs) -> Option<(GraphId, Vec<Abs>)> {
    let Abs::Func(fs) = a else {
        return None;
    };
    let [f] = &fs[..] else {
        return None;
    };
    let (original, bound) = object_copy(module, f)?;
    Some((original, bound.to_vec()))
}

/// The original objects of the grad-stage copies of objects that `a` may be.
fn objects_or_copies(module: &Module, a: &Abs) -> Vec<GraphId> {
    match a {
        Abs::Func(fs) => (fs.iter())
            .filter_map(|f| Some(object_copy(module, f)?.0))
            .collect(),
        _ => Vec::new(),
    }
}

/// Where function `f` is a grad-stage copy of an object (its J graph, bare or partially
/// applied): the original object and the values bound.
fn object_copy<'f>(module: &Module, f: &'f Func) -> Option<(GraphId, &'f [Abs])> {
    let (graph, bound): (GraphId, &[Abs]) = match f {
        Func::Closure { graph, .. } => (*graph, &[]),
        Func::Partial(inner, bound) => match &**inner {
            Func::Closure { graph, .. } => (*graph, bound),
            _ => return None,
        },
        _ => return None,
    };
    Some((*module.differentiated_objects.get(&graph)?, bound))
}

/// The constant attribute `name` of the object whose grad-stage copy `object` is, where the
/// read needs no J transform of its own (a Parameter, a number, a tensor: no function).
pub(crate) fn differentiated_attribute_const(
    module: &Module,
    object: &Abs,
    name: &str,
) -> Option<Const> {
    let (original, _) = differentiated_object(module, object)?;
    let k = module.objects[&original].attrs.get(name)?.as_ref().ok()?;
    (!k.holds_graph()).then(|| k.clone())
}

/// Where `AttrGrad(object, name, d)` puts `d`: the place among the bound values of `object`
/// (a grad-stage copy of an object) of the weight Parameter that attribute `name` is, and
/// how many values are bound. `None` where the attribute is no such weight: no sensitivity.
pub(crate) fn attr_grad_place(module: &Module, object: &Abs, name: &str) -> Option<(usize, usize)> {
    let (_, bound) = differentiated_object(module, object)?;
    let Const::Ref(p) = differentiated_attribute_const(module, object, name)? else {
        return None;
    };
    let at = bound
        .iter()
        .position(|a| matches!(a, Abs::Ref(r) if r.param.as_ref() == Some(&p)))?;
    Some((at, bound.len()))
}

impl Interpreter<'_> {
    /// `GetAttr(obj, name)` where `obj` may be an object's copy in differentiated code: the
    /// attribute's constant (a Parameter's gradient flows back through `AttrGrad`), refused
    /// where the read would need its own J transform (a method, another object) or where the
    /// value may be one of several objects.
    fn differentiated_object_attribute(
        &mut self,
        c: CtxId,
        n: NodeId,
        object: &Abs,
        name: &str,
    ) -> Option<Abs> {
        let originals = objects_or_copies(self.module, object);
        let first = *originals.first()?;
        if let Some(k) = differentiated_attribute_const(self.module, object, name) {
            return Some(self.constant(c, &k));
        }
        let type_name = self.module.objects[&first].type_name.clone();
        let span = self.module.node(n).span;
        let error = Diagnostic::error(
            NO_BACKWARD_RULE,
            format!(
                "the attribute '{name}' of a '{type_name}' object used as a value is read in differentiated code"
            ),
            span,
        )
        .with_label("read here")
        .with_hint(
            "in a function being differentiated, an object passed, stored or chosen at run time \
             gives its Parameters and other constants; read its methods and sub-objects \
             through `self` (or call the object itself), and read attributes of one of several \
             objects in each branch",
        );
        self.ctx_mut(c).refusals.push(error);
        Some(Abs::Bottom)
    }

    /// `AttrGrad(obj, name, d)`: see [`attr_grad_place`].
    pub(super) fn attr_grad(&mut self, args: &[Abs]) -> Abs {
        let Abs::Str(Some(name)) = &args[1] else {
            return Abs::None;
        };
        match attr_grad_place(self.module, &args[0], name) {
            Some((at, len)) => {
                let mut items = vec![Abs::None; len];
                items[at] = args[2].clone();
                Abs::tuple(items)
            }
            None => Abs::None,
        }
    }

    /// `GetAttr(obj, name)` where `obj` is an object used as a value: the attribute's
    /// abstract, or `Bottom` after an error. `None` where `obj` is no object.
    pub(super) fn object_attribute(&mut self, c: CtxId, n: NodeId, args: &[Abs]) -> Option<Abs> {
        let (objects, other) = objects_of(self.module, &args[0]);
        let Abs::Str(Some(name)) = &args[1] else {
            return None;
        };
        if objects.is_empty() {
            return self.differentiated_object_attribute(c, n, &args[0], name);
        }
        // One object, or objects chosen at run time that agree on the attribute.
        if let Some(k) = attribute_const(self.module, &args[0], name) {
            self.note_const_value_use(c, &k);
            return Some(self.constant(c, &k));
        }
        // Objects chosen at run time whose constants differ but join (Parameters of one dtype
        // and shape, numbers of one kind): the one read is selected when the program runs.
        if let Some(chosen) = chosen_attributes(self.module, &args[0], name) {
            let mut joined = Abs::Bottom;
            let mut fits = true;
            for (_, k) in &chosen {
                self.note_const_value_use(c, k);
                let a = self.constant(c, k);
                match self.join(&joined, &a) {
                    Ok(j) if !matches!(j, Abs::Any) || matches!(a, Abs::Any) => joined = j,
                    _ => fits = false,
                }
            }
            if fits {
                return Some(joined);
            }
        }
        let span = self.module.node(n).span;
        let object = &self.module.objects[&objects[0]];
        let error = if objects.len() > 1 || other {
            Diagnostic::error(
                OBJECT_VALUE,
                format!(
                    "the attribute '{name}' is read from an object chosen at run time, and the \
                     objects it may be differ there"
                ),
                span,
            )
            .with_label("one of several objects or functions")
            .with_hint(
                "compiled code reads an attribute of an object chosen at run time only where \
                 every object it may be has the same constant there; read the attribute in \
                 each branch, before the choice",
            )
        } else if let Some(Err(refusal)) = object.attrs.get(name) {
            Diagnostic::error(HOST_VALUE, refusal.message.clone(), span)
                .with_label("used here")
                .with_hint(refusal.hint.clone())
        } else {
            Diagnostic::error(
                NO_ATTRIBUTE,
                format!("'{}' object has no attribute '{name}'", object.type_name),
                span,
            )
            .with_label("unknown attribute")
            .with_hint(
                "attributes of objects are read when the function compiles; set them in `__init__`",
            )
        };
        self.ctx_mut(c).refusals.push(error);
        Some(Abs::Bottom)
    }
}
