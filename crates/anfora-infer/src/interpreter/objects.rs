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

impl Interpreter<'_> {
    /// `GetAttr(obj, name)` where `obj` is an object's J graph (in differentiated code): refused
    /// at the read, which would otherwise raise AttributeError when it runs.
    fn differentiated_object_attribute(
        &mut self,
        c: CtxId,
        n: NodeId,
        object: &Abs,
        name: &str,
    ) -> Option<Abs> {
        let Abs::Func(fs) = object else {
            return None;
        };
        let original = fs.iter().find_map(|f| match f {
            Func::Closure { graph, .. } => self.module.differentiated_objects.get(graph).copied(),
            _ => None,
        })?;
        let type_name = self.module.objects[&original].type_name.clone();
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
            "in a function being differentiated, read attributes through `self` (or pass them as \
             arguments); reading them through an object passed, stored or chosen at run time is \
             not supported there yet",
        );
        self.ctx_mut(c).refusals.push(error);
        Some(Abs::Bottom)
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
