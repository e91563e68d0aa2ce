//! Functions that update their arguments in place, called by name.
//!
//! numpy's `x += v` in a function changes the caller's array. A function called by its
//! name (a module-level function, `self.method(...)`) that updates a parameter in place,
//! itself or through a function it passes the parameter to, is lowered a second time for
//! such calls (`Frontend::write_back_variant`): each parameter it writes owns the caller's
//! object together with a hidden variable (`ownership::caller_object`), so an update through
//! the parameter (or a name it shares the object with) rebinds both, and the function
//! returns `(value, objects...)`.
//!
//! The call binds each variable passed for a written parameter back to the object returned
//! for it: `IfMutable(old, new, old)`, since an int the function rebound by `n += 1` is not
//! the caller's to change. An attribute passed (`sgd(self.w, g)`) is a Parameter, written
//! with `Assign` (any other attribute is refused there, as `self.n += 1` is). Where the
//! caller's variable does not own its object (another name, a tuple or a view may hold it)
//! or the argument is not a variable, a mutable argument is refused (`SharedUpdate`, E0306),
//! as an in-place update of it in the caller would be; a fresh value (an operator's result,
//! a literal) is nobody else's and passes as it is.
//!
//! The gradient of such a function called at once, `grad(f, ...)(args...)` or
//! `value_and_grad(f, ...)(args...)`, is the transform of its variant with `has_aux`: the
//! variant returns the pair `(value, objects)`, the value is differentiated and the objects
//! come back beside the gradients, to be bound as for a call of `f` itself.
//!
//! The function as a value otherwise (called through a variable, passed to `grad` and kept,
//! the entry called from Python) is the plain lowering, whose in-place updates of parameters
//! are refused.

use std::rc::Rc;

use anfora_ir::{Const, GraphId, NodeId, Prim, Span};

use super::Lowerer;
use crate::ast::*;
use crate::ownership::{CallKind, Writes};

/// A call as written.
pub(super) struct Call<'e> {
    pub func: &'e Expr,
    pub args: &'e [Expr],
    pub keywords: &'e [Keyword],
    pub span: Span,
}

/// How a writing call's result holds the call's value and the tuple of written objects.
pub(super) enum Written {
    /// `(value, objects)`: the variant's own result, and `grad`'s with `has_aux`.
    Pair,
    /// `((value, objects), gradients)`: `value_and_grad`'s with `has_aux`; the call's value
    /// is `(value, gradients)`.
    ValueAndGrad,
}

/// Where the object a function returns for an argument goes.
enum Back {
    /// A variable that owns its object, and the other names of that object.
    Owner(Name, Vec<Name>),
    /// A Parameter (an attribute, `self.w`): written with `Assign`, as `self.w[i] = v` is.
    Parameter,
    /// Nowhere: a fresh value, or one refused if it is mutable.
    Nowhere,
}

impl Lowerer<'_> {
    /// The variant of the function `func` names (a global function, or a method of `self`)
    /// that writes its arguments back, and which it writes, if it updates a parameter in
    /// place.
    pub(super) fn write_back_callee(&mut self, func: &Expr) -> Option<(GraphId, Rc<Writes>)> {
        if matches!(&func.kind, ExprKind::Name(n) if self.is_local_anywhere(n)) {
            return None;
        }
        let f = self.fun();
        let this = f.self_name.clone().zip(f.self_object);
        let this = this.as_ref().map(|(n, id)| (n, *id));
        let callee = self
            .fe
            .called_function(func, self.scope, this, self.resolver)?;
        self.fe.write_back_variant(callee, self.resolver)
    }

    /// `grad(f, ...)` or `value_and_grad(f, ...)`, about to be called, of a function `f` named
    /// as [`Self::write_back_callee`] finds it: the transform, `f`'s variant and what it
    /// writes. None where the options change the call's arguments or the result's shape
    /// (`sens_param`, the caller's own `has_aux`).
    pub(super) fn grad_write_back(&mut self, func: &Expr) -> Option<(Prim, GraphId, Rc<Writes>)> {
        let ExprKind::Call {
            func: transform,
            args,
            keywords,
        } = &func.kind
        else {
            return None;
        };
        let prim = self.named_prim(transform)?;
        let [f, options @ ..] = &args[..] else {
            return None;
        };
        let is_false = |e: &Expr| matches!(e.kind, ExprKind::Literal(Literal::Bool(false)));
        let plain = matches!(prim, Prim::Grad | Prim::ValueAndGrad)
            && !super::expr::starred(args)
            && options.len() <= 4
            && options.get(2).is_none_or(is_false)
            && keywords.iter().all(|k| match &*k.name {
                "argnums" | "weights" | "integers" => !k.unpack,
                "sens_param" => is_false(&k.value),
                _ => false,
            });
        if !plain {
            return None;
        }
        let (variant, writes) = self.write_back_callee(f)?;
        Some((prim, variant, writes))
    }

    /// `grad(f, options...)(args...)` (`call`, whose callee is the transform's call `inner`)
    /// of a function whose variant is `variant`: the transform of the variant with
    /// `has_aux=True`, called, and each variable passed bound to the object returned for it.
    pub(super) fn grad_write_back_call(
        &mut self,
        call: &Call,
        (prim, variant, writes): (Prim, GraphId, &Writes),
    ) -> NodeId {
        let ExprKind::Call { args, keywords, .. } = &call.func.kind else {
            unreachable!("grad_write_back matched a call")
        };
        let transform = self.konst_at(Const::Prim(prim), call.func.span);
        let mut values = vec![self.konst_at(Const::Graph(variant), args[0].span)];
        values.extend(args[1..].iter().map(|a| self.value(a)));
        values.extend(keywords.iter().map(|k| self.value(&k.value)));
        values.push(self.konst(Const::Bool(true)));
        let names =
            (keywords.iter().map(|k| Const::Str(k.name.clone()))).chain([Const::str("has_aux")]);
        let names = self.konst(Const::tuple(names.collect()));
        let call_kw = self.konst(Const::Prim(Prim::CallKw));
        let inputs = [call_kw, transform, names].into_iter().chain(values);
        let gradient = self.apply(inputs.collect(), call.func.span);
        let shape = match prim {
            Prim::ValueAndGrad => Written::ValueAndGrad,
            _ => Written::Pair,
        };
        self.writing_call(call, gradient, writes, shape)
    }

    /// `f(args...)` of a function that writes its arguments back: the call of its variant,
    /// then each variable passed bound to the object returned for it.
    pub(super) fn write_back_call(
        &mut self,
        call: &Call,
        variant: GraphId,
        writes: &Writes,
    ) -> NodeId {
        let callee = self.konst_at(Const::Graph(variant), call.func.span);
        self.writing_call(call, callee, writes, Written::Pair)
    }

    /// The call of `callee`, which writes the arguments `writes` names back and returns them
    /// as `shape` says, then each variable passed bound to the object returned for it.
    fn writing_call(
        &mut self,
        call: &Call,
        callee: NodeId,
        writes: &Writes,
        shape: Written,
    ) -> NodeId {
        let bound = writes.bound(call.args, call.keywords);
        let written = |e: &Expr| bound.iter().find(|(_, a)| std::ptr::eq(*a, e)).map(|b| b.0);
        let mut values = Vec::new();
        let mut backs: Vec<(usize, NodeId, Back)> = Vec::new();
        let exprs = call
            .args
            .iter()
            .chain(call.keywords.iter().map(|k| &k.value));
        let all: Vec<&Expr> = exprs.clone().collect();
        for e in exprs {
            let v = self.value(e);
            let v = match written(e) {
                Some(k) => {
                    let others: Vec<&Expr> = all
                        .iter()
                        .copied()
                        .filter(|o| !std::ptr::eq(*o, e))
                        .collect();
                    let (v, back) = self.passed(e, v, &others, call.span);
                    backs.push((k, v, back));
                    v
                }
                None => v,
            };
            values.push(v);
        }
        let r = self.bound_call(callee, call, values);
        let (value, objects) = match shape {
            Written::Pair => (self.item(r, 0, call.span), self.item(r, 1, call.span)),
            Written::ValueAndGrad => {
                let pair = self.item(r, 0, call.span);
                let v = self.item(pair, 0, call.span);
                let grads = self.item(r, 1, call.span);
                let value = self.prim(Prim::MakeTuple, &[v, grads], call.span);
                (value, self.item(pair, 1, call.span))
            }
        };
        for (k, old, back) in backs {
            match back {
                Back::Owner(n, names) => {
                    let object = self.item(objects, k, call.span);
                    let new = self.prim(Prim::IfMutable, &[old, object, old], call.span);
                    for m in &names {
                        self.bind(m, new, call.span);
                    }
                    self.assign(&Target::Name(n, call.span), new);
                }
                Back::Parameter => {
                    let object = self.item(objects, k, call.span);
                    self.prim(Prim::Assign, &[old, object], call.span);
                }
                Back::Nowhere => {}
            }
        }
        value
    }

    /// The call of `callee` with the values of the positional arguments then the keywords.
    fn bound_call(&mut self, callee: NodeId, call: &Call, values: Vec<NodeId>) -> NodeId {
        if call.keywords.is_empty() {
            let inputs = std::iter::once(callee).chain(values);
            return self.apply(inputs.collect(), call.span);
        }
        let names = call.keywords.iter().map(|k| Const::Str(k.name.clone()));
        let names = self.konst(Const::tuple(names.collect()));
        let call_kw = self.konst(Const::Prim(Prim::CallKw));
        let inputs = [call_kw, callee, names].into_iter().chain(values);
        self.apply(inputs.collect(), call.span)
    }

    /// The value passed for argument `e` (whose value is `v`) that the function may update
    /// in place, and where the updated object goes. The function must not get the same
    /// object through one of the `others` arguments too (the name again, another of its
    /// names, a view of it): it would update one and read the other unchanged.
    fn passed(&mut self, e: &Expr, v: NodeId, others: &[&Expr], span: Span) -> (NodeId, Back) {
        if let ExprKind::Name(n) = &e.kind
            && self.fun().info.locals.contains(n)
            && let Some(Some(group)) = self.fun().owned.get(&e.span.start).cloned()
            && !self.passed_again(&group, others)
        {
            let names = group.into_iter().filter(|m| m != n).collect();
            return (v, Back::Owner(n.clone(), names));
        }
        if self.is_fresh(e) {
            return (v, Back::Nowhere);
        }
        if matches!(e.kind, ExprKind::Attribute { .. }) && !others.iter().any(|o| views(o, e)) {
            return (v, Back::Parameter);
        }
        let name = match &e.kind {
            ExprKind::Name(n) => n.to_string(),
            _ => "an argument".to_string(),
        };
        let name = self.konst(Const::Str(name.into()));
        (
            self.prim(Prim::SharedUpdate, &[v, name], span),
            Back::Nowhere,
        )
    }

    /// Whether one of `others` may hold the object of one of `names`: it reads one of them
    /// and is not a fresh value computed from it.
    fn passed_again(&mut self, names: &[Name], others: &[&Expr]) -> bool {
        others.iter().any(|o| {
            let mut reads = false;
            crate::flow::expr_reads(o, &mut |n, _| reads |= names.contains(n));
            reads && !self.is_fresh(o)
        })
    }

    /// Whether `e` makes a new object no one else holds.
    fn is_fresh(&mut self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Literal(_)
            | ExprKind::BinOp { .. }
            | ExprKind::UnaryOp { .. }
            | ExprKind::Compare { .. }
            | ExprKind::Tuple(_)
            | ExprKind::List(_) => true,
            ExprKind::Call { func, .. } => matches!(
                self.call_kind(func),
                CallKind::Fresh { .. } | CallKind::Container { .. }
            ),
            _ => false,
        }
    }
}

/// Whether `a` is attribute `b` (`self.w` twice) or an item or attribute of it.
fn views(a: &Expr, b: &Expr) -> bool {
    match (&a.kind, &b.kind) {
        (ExprKind::Attribute { value: x, attr: p }, ExprKind::Attribute { value: y, attr: q })
            if p == q && same_name(x, y) =>
        {
            true
        }
        (ExprKind::Subscript { value, .. } | ExprKind::Attribute { value, .. }, _) => {
            views(value, b)
        }
        _ => false,
    }
}

fn same_name(a: &Expr, b: &Expr) -> bool {
    matches!((&a.kind, &b.kind), (ExprKind::Name(m), ExprKind::Name(n)) if m == n)
}
