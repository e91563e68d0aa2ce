//! In-place updates: `x op= v`, `x[i] = v` and `x[i] op= v`.
//!
//! numpy changes the array itself; anfora binds the variable to the updated value, which is
//! the same wherever the variable owns its object (`ownership`). Where it may not, the object
//! passes through `SharedUpdate`, which refuses mutable objects (tensors, lists, Parameters)
//! and lets immutable ones be rebound, as Python does. The value of `x op= v` on a tensor
//! keeps `x`'s dtype and shape (`InplaceCast`: numpy's rule for an in-place ufunc's output).
//! An item of an attribute (`self.w[i] = v`) writes the Parameter. An item of an item
//! (`x[i][j] = v`) writes through the view `x[i]`: the updated item is stored back into `x`.

use anfora_ir::{Const, NodeId, Prim, Span};

use super::{Lowerer, bin_prim};
use crate::ast::*;

/// What an item assignment writes back to.
enum Root {
    /// A local variable, rebound to the updated value.
    Local(Name, Span),
    /// A Parameter attribute (`self.w`), written with `Assign`.
    Parameter(NodeId),
    /// A variable of an enclosing function or a global: nothing to rebind (a mutable object
    /// was refused by `SharedUpdate`; an immutable one raises in `SetItem`).
    Outside,
    /// An item of an array (`x[i]` of `x[i][j] = v`, a view of it: `ViewIndex` refuses
    /// anything else): the updated item is stored back into the array, which goes to `root`.
    Item {
        root: Box<Root>,
        array: NodeId,
        index: NodeId,
    },
}

impl Lowerer<'_> {
    pub(super) fn aug_assign(&mut self, target: &Target, op: BinOp, value: &Expr, span: Span) {
        match target {
            Target::Name(n, name_span) => {
                let cur = self.load(n, *name_span);
                let v = self.value(value);
                let cur = self.check_owned(cur, n, span);
                let r = self.prim(inplace_prim(op), &[cur, v], span);
                let r = self.prim(Prim::InplaceCast, &[cur, r], span);
                self.assign(&Target::Name(n.clone(), *name_span), r);
                self.rebind_aliases(n, cur, r, span);
            }
            Target::Item {
                object,
                index,
                span: item_span,
            } => {
                let (root, cur) = self.item_object(object, span);
                let idx = self.value(index);
                let old = self.prim(Prim::GetItem, &[cur, idx], *item_span);
                // The item of a list is an object of its own that others may hold.
                let item_name =
                    self.konst(Const::Str(format!("{}[...]", root_name(object)).into()));
                let old = self.prim(Prim::SharedUpdate, &[old, item_name, cur], *item_span);
                let v = self.value(value);
                let r = self.prim(inplace_prim(op), &[old, v], span);
                let r = self.prim(Prim::InplaceCast, &[old, r], span);
                let new = self.prim(Prim::SetItem, &[cur, idx, r], span);
                self.write_back(root, new, span);
            }
            Target::Tuple(..) | Target::Starred(..) | Target::Invalid(_) => {}
        }
    }

    /// `object[index] = v`, after `v` is evaluated (Python evaluates the object, then the
    /// index).
    pub(super) fn store_item(&mut self, object: &Expr, index: &Expr, v: NodeId, span: Span) {
        let (root, cur) = self.item_object(object, span);
        let idx = self.value(index);
        let new = self.prim(Prim::SetItem, &[cur, idx, v], span);
        self.write_back(root, new, span);
    }

    /// The object whose item is assigned, and where the result goes.
    fn item_object(&mut self, object: &Expr, span: Span) -> (Root, NodeId) {
        match &object.kind {
            ExprKind::Name(n) => {
                let cur = self.load(n, object.span);
                let cur = self.check_owned(cur, n, span);
                let local = self.fun().info.locals.contains(n);
                let root = if local {
                    Root::Local(n.clone(), object.span)
                } else {
                    Root::Outside
                };
                (root, cur)
            }
            ExprKind::Attribute { value, attr } => {
                let obj = self.value(value);
                let name = self.konst(Const::Str(attr.clone()));
                let t = self.prim(Prim::GetAttr, &[obj, name], object.span);
                (Root::Parameter(t), t)
            }
            ExprKind::Subscript { value, index } => {
                let (root, array) = anfora_ir::deep(|| self.item_object(value, span));
                let i = self.value(index);
                let i = self.prim(Prim::ViewIndex, &[array, i], object.span);
                let item = self.prim(Prim::GetItem, &[array, i], object.span);
                let root = Root::Item {
                    root: Box::new(root),
                    array,
                    index: i,
                };
                (root, item)
            }
            // The converter accepts only the two forms above.
            _ => (Root::Outside, self.value(object)),
        }
    }

    fn write_back(&mut self, root: Root, new: NodeId, span: Span) {
        match root {
            Root::Local(n, s) => {
                let old = self.load(&n, s);
                self.assign(&Target::Name(n.clone(), s), new);
                self.rebind_aliases(&n, old, new, span);
            }
            Root::Parameter(t) => {
                self.prim(Prim::Assign, &[t, new], span);
            }
            Root::Item { root, array, index } => {
                let up = self.prim(Prim::SetItem, &[array, index, new], span);
                self.write_back(*root, up, span);
            }
            Root::Outside => {}
        }
    }

    /// The other names of the object the statement at `span` updated through `name`, bound
    /// to its new value `new` as well.
    fn rebind_aliases(&mut self, name: &Name, old: NodeId, new: NodeId, span: Span) {
        let Some(Some(group)) = self.fun().owned.get(&span.start).cloned() else {
            return;
        };
        if group.iter().all(|m| m == name) {
            return;
        }
        // Refuses a 0-d tensor: numpy would rebind a scalar's other names only.
        let seen = self.prim(Prim::IfMutable, &[old, new, old], span);
        for m in group.iter().filter(|m| *m != name) {
            self.bind(m, seen, span);
        }
    }

    /// `cur`, the value of variable `name` updated in place by the statement at `span`,
    /// checked by `SharedUpdate` unless the variable owns it there.
    fn check_owned(&mut self, cur: NodeId, name: &Name, span: Span) -> NodeId {
        let local = self.fun().info.locals.contains(name);
        let owned = local && matches!(self.fun().owned.get(&span.start), Some(Some(_)));
        if owned {
            return cur;
        }
        let n = self.konst(Const::Str(name.clone()));
        self.prim(Prim::SharedUpdate, &[cur, n], span)
    }
}

/// How messages name the object of an item target.
fn root_name(object: &Expr) -> String {
    match &object.kind {
        ExprKind::Name(n) => n.to_string(),
        ExprKind::Attribute { attr, .. } => format!("….{attr}"),
        ExprKind::Subscript { value, .. } => format!("{}[...]", root_name(value)),
        _ => "…".into(),
    }
}

/// The operation of `x op= v`: `+=` and `*=` have their own primitives for sequences (a
/// list's `+=` extends it in place).
fn inplace_prim(op: BinOp) -> Prim {
    match op {
        BinOp::Add => Prim::InplaceAdd,
        BinOp::Mul => Prim::InplaceMul,
        other => bin_prim(other),
    }
}
