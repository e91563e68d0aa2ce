//! Expressions: operators, `and`/`or`, conditional expressions and comparison chains (through
//! hidden variables), subscripts and calls.

use anfora_ir::diag::Diagnostic;
use anfora_ir::{ArgSource, Const, NodeId, Prim, Signature, Span};

use super::{IterKind, Lowerer, Val, bin_prim, cmp_prim, const_eval, literal};
use crate::ast::*;
use crate::codes;

impl Lowerer<'_> {
    pub(super) fn value(&mut self, e: &Expr) -> NodeId {
        let v = self.expr(e);
        self.require_node(v, e.span)
    }

    pub(super) fn expr(&mut self, e: &Expr) -> Val {
        anfora_ir::deep(|| self.expr_inner(e))
    }

    fn expr_inner(&mut self, e: &Expr) -> Val {
        let span = e.span;
        let node = match &e.kind {
            ExprKind::Name(n) => return self.load_name(n, span),
            ExprKind::Literal(l) => self.konst_at(literal(l), span),
            ExprKind::Tuple(items) if starred(items) => self.starred_items(items, span),
            ExprKind::List(items) if starred(items) => {
                let items = self.starred_items(items, span);
                let list = self.konst(Const::Prim(Prim::ListType));
                self.apply(vec![list, items], span)
            }
            ExprKind::Tuple(items) => {
                let nodes: Vec<NodeId> = items.iter().map(|i| self.value(i)).collect();
                let consts: Option<Vec<Const>> = nodes
                    .iter()
                    .map(|&n| match self.fe.module.constant(n) {
                        Some(
                            c @ (Const::None
                            | Const::Bool(_)
                            | Const::Int(_)
                            | Const::Float(_)
                            | Const::Str(_)
                            | Const::Tuple(_)),
                        ) => Some(c.clone()),
                        _ => None,
                    })
                    .collect();
                match consts {
                    Some(cs) => self.konst_at(Const::tuple(cs), span),
                    None => self.prim(Prim::MakeTuple, &nodes, span),
                }
            }
            ExprKind::List(items) => {
                let nodes: Vec<NodeId> = items.iter().map(|i| self.value(i)).collect();
                self.prim(Prim::MakeList, &nodes, span)
            }
            ExprKind::Dict(items) => self.dict_display(items, span),
            ExprKind::BinOp { op, left, right } => {
                let l = self.value(left);
                let r = self.value(right);
                self.prim(bin_prim(*op), &[l, r], span)
            }
            ExprKind::UnaryOp { op, operand } => {
                if let Some(c) = const_eval(e)
                    && matches!(c, Const::Int(_) | Const::Float(_))
                {
                    return Val::Node(self.konst_at(c, span));
                }
                let x = self.value(operand);
                let p = match op {
                    UnaryOp::Neg => Prim::Neg,
                    UnaryOp::Pos => Prim::Pos,
                    UnaryOp::Invert => Prim::Invert,
                    UnaryOp::Not => Prim::Not,
                };
                self.prim(p, &[x], span)
            }
            ExprKind::BoolOp { op, values } => self.bool_op(*op, values, span),
            ExprKind::Compare {
                left,
                ops,
                comparators,
            } => self.compare(left, ops, comparators, span),
            ExprKind::IfExp { test, body, orelse } => {
                let c = self.value(test);
                let t = self.prim(Prim::Truth, &[c], test.span);
                self.select(t, span, |l| l.value(body), |l| l.value(orelse))
            }
            ExprKind::Call {
                func,
                args,
                keywords,
            } => return self.call(func, args, keywords, span),
            ExprKind::Attribute { value, attr } => return self.attribute(value, attr, span),
            ExprKind::Subscript { value, index } => {
                let obj = self.value(value);
                let idx = self.index(index);
                self.prim(Prim::GetItem, &[obj, idx], span)
            }
            ExprKind::Slice { .. } => self.index(e),
            ExprKind::Lambda(def) => self.lambda(def),
            // Only a call's arguments are starred (the converter makes no other).
            ExprKind::Starred(v) => return self.expr(v),
            ExprKind::Invalid => self.none(),
        };
        Val::Node(node)
    }

    /// `then` or `else_` depending on the bool `cond`, as a value (through a join phi).
    fn select(
        &mut self,
        cond: NodeId,
        span: Span,
        then: impl FnOnce(&mut Self) -> NodeId,
        else_: impl FnOnce(&mut Self) -> NodeId,
    ) -> NodeId {
        let var = self.hidden_name("v");
        let base = self.cur_name();
        let (tb, fb) = self.branch(cond, span);
        self.set_cur(Some(tb));
        let a = then(self);
        let end_t = self.cur_block();
        self.write(end_t, &var, a);
        self.set_cur(Some(fb));
        let b = else_(self);
        let end_f = self.cur_block();
        self.write(end_f, &var, b);
        let j = self
            .join(vec![end_t, end_f], &base, span)
            .expect("two live ends");
        self.set_cur(Some(j));
        self.read(j, &var)
    }

    /// `a and b and c` is `a and (b and c)`: each operand's truth is tested once, as CPython
    /// does, and a falsy `a` is the result at once. Every operand but the last opens a
    /// `select` that settles on it (when falsy for `and`, truthy for `or`) and continues with
    /// the rest; the selects are closed innermost first. A loop, not a recursion: a chain may
    /// have 100,000 terms, and nesting to the right keeps the join blocks out of the branches.
    fn bool_op(&mut self, op: BoolOp, values: &[Expr], span: Span) -> NodeId {
        let (last, rest) = values.split_last().expect("a BoolOp has operands");
        let mut open = Vec::with_capacity(rest.len());
        for v in rest {
            let x = self.value(v);
            let t = self.prim(Prim::Truth, &[x], span);
            open.push(self.open_select(t, span, x, op == BoolOp::Or));
        }
        let mut acc = self.value(last);
        while let Some(s) = open.pop() {
            acc = self.close_select(s, acc, span);
        }
        acc
    }

    fn compare(&mut self, left: &Expr, ops: &[CmpOp], comparators: &[Expr], span: Span) -> NodeId {
        let l = self.value(left);
        self.compare_chain(l, ops, comparators, span)
    }

    /// `l op0 c0 op1 c1 ...` = `(l op0 c0) and (c0 op1 c1) and ...`, each operand evaluated once.
    /// Each comparison but the last opens a `select` whose true branch holds the rest of the
    /// chain and whose false branch gives that comparison; the selects are closed innermost
    /// first. A loop, not a recursion: a chain may have 100,000 terms.
    fn compare_chain(
        &mut self,
        mut l: NodeId,
        ops: &[CmpOp],
        comparators: &[Expr],
        span: Span,
    ) -> NodeId {
        let mut open = Vec::new();
        let mut acc = l;
        for (i, (op, comparator)) in ops.iter().zip(comparators).enumerate() {
            let r = self.value(comparator);
            let c = self.prim(cmp_prim(*op), &[l, r], span);
            acc = c;
            if i + 1 < ops.len() {
                let t = self.prim(Prim::Truth, &[c], span);
                open.push(self.open_select(t, span, c, false));
            }
            l = r;
        }
        while let Some(s) = open.pop() {
            acc = self.close_select(s, acc, span);
        }
        acc
    }

    /// The first half of a `select` that settles on the value `settled` where `cond` is
    /// `settles_on`: branches on `cond` and continues in the other branch.
    fn open_select(
        &mut self,
        cond: NodeId,
        span: Span,
        settled: NodeId,
        settles_on: bool,
    ) -> OpenSelect {
        let var = self.hidden_name("v");
        let base = self.cur_name();
        let (tb, fb) = self.branch(cond, span);
        let (done, next) = if settles_on { (tb, fb) } else { (fb, tb) };
        self.write(done, &var, settled);
        self.set_cur(Some(next));
        OpenSelect {
            var,
            base,
            done,
            settles_on,
        }
    }

    /// The second half: the branch lowering continued in ends with the value `a`, and the two
    /// meet (the true branch's end first).
    fn close_select(&mut self, s: OpenSelect, a: NodeId, span: Span) -> NodeId {
        let end = self.cur_block();
        self.write(end, &s.var, a);
        let ends = if s.settles_on {
            vec![s.done, end]
        } else {
            vec![end, s.done]
        };
        let j = self.join(ends, &s.base, span).expect("two live ends");
        self.set_cur(Some(j));
        self.read(j, &s.var)
    }

    fn index(&mut self, e: &Expr) -> NodeId {
        match &e.kind {
            ExprKind::Slice { lower, upper, step } => {
                let part = |l: &mut Self, x: &Option<Box<Expr>>| match x {
                    Some(x) => l.value(x),
                    None => l.none(),
                };
                let a = part(self, lower);
                let b = part(self, upper);
                let c = part(self, step);
                self.prim(Prim::MakeSlice, &[a, b, c], e.span)
            }
            ExprKind::Tuple(items)
                if items
                    .iter()
                    .any(|i| matches!(i.kind, ExprKind::Slice { .. })) =>
            {
                let nodes: Vec<NodeId> = items.iter().map(|i| self.index(i)).collect();
                self.prim(Prim::MakeTuple, &nodes, e.span)
            }
            _ => self.value(e),
        }
    }

    fn attribute(&mut self, obj: &Expr, attr: &Name, span: Span) -> Val {
        // `ops.add` is folded by the resolve stage once `ops` is known to be a namespace.
        let n = self.value(obj);
        let s = self.konst(Const::Str(attr.clone()));
        Val::Node(self.prim(Prim::GetAttr, &[n, s], span))
    }

    /// `d.items()`, `d.keys()` or `d.values()` consumed at once (a `for` header, `tuple()` or
    /// `list()`): the tuple of its items.
    pub(super) fn dict_view(&mut self, e: &Expr) -> Option<NodeId> {
        let ExprKind::Call {
            func,
            args,
            keywords,
        } = &e.kind
        else {
            return None;
        };
        let ExprKind::Attribute { value, attr } = &func.kind else {
            return None;
        };
        let prim = match &**attr {
            "items" => Prim::DictItems,
            "keys" => Prim::DictKeys,
            "values" => Prim::DictValues,
            _ => return None,
        };
        if !args.is_empty() || !keywords.is_empty() {
            return None;
        }
        let d = self.value(value);
        Some(self.prim(prim, &[d], e.span))
    }

    /// The items of a dict view or of `enumerate(...)`/`zip(...)` that `e` is, if it is one.
    fn consumed_items(&mut self, e: &Expr) -> Option<NodeId> {
        if let Some(items) = self.dict_view(e) {
            return Some(items);
        }
        let (kind, args) = self.iterator_call(e)?;
        Some(self.prim(kind.prim(), &args, e.span))
    }

    /// `enumerate(...)`/`zip(...)` where the builtin is meant: returns the kind and its
    /// arguments (`[seq, start]` or the sequences).
    pub(super) fn iterator_call(&mut self, e: &Expr) -> Option<(IterKind, Vec<NodeId>)> {
        let ExprKind::Call {
            func,
            args,
            keywords,
        } = &e.kind
        else {
            return None;
        };
        let ExprKind::Name(name) = &func.kind else {
            return None;
        };
        let kind = self.builtin_iterator(name)?;
        let nodes = self.bound_args(kind.prim().signature(), args, keywords, e.span)?;
        Some((kind, nodes))
    }

    /// Evaluates the arguments and binds them to `sig`; `None` after a diagnosed mismatch.
    fn bound_args(
        &mut self,
        sig: &Signature,
        args: &[Expr],
        keywords: &[Keyword],
        span: Span,
    ) -> Option<Vec<NodeId>> {
        let positional: Vec<NodeId> = args.iter().map(|a| self.value(a)).collect();
        let kw: Vec<NodeId> = keywords.iter().map(|k| self.value(&k.value)).collect();
        let names: Vec<&str> = keywords.iter().map(|k| &*k.name).collect();
        match sig.bind(positional.len(), &names) {
            Ok(sources) => Some(
                sources
                    .into_iter()
                    .map(|s| match s {
                        ArgSource::Positional(i) => positional[i],
                        ArgSource::Keyword(j) => kw[j],
                        ArgSource::Default(c) => self.konst(c),
                        ArgSource::Packed(a, b) => {
                            self.prim(Prim::MakeTuple, &positional[a..b], span)
                        }
                        ArgSource::PackedKeywords(js) => {
                            let keys = js
                                .iter()
                                .map(|&j| Const::Str(std::sync::Arc::from(names[j])));
                            let mut inputs = vec![self.konst(Const::tuple(keys.collect()))];
                            inputs.extend(js.iter().map(|&j| kw[j]));
                            self.prim(Prim::MakeDict, &inputs, span)
                        }
                    })
                    .collect(),
            ),
            Err(err) => {
                self.error(
                    Diagnostic::error(codes::BAD_CALL, err.message(&sig.name), span)
                        .with_label("in this call")
                        .with_hint("this fails in Python too: fix the arguments"),
                );
                None
            }
        }
    }

    /// A call: the callee and the arguments in order. Keyword arguments make a `CallKw`. The
    /// resolve stage binds arguments to the signature of callees known at compile time.
    fn call(&mut self, func: &Expr, args: &[Expr], keywords: &[Keyword], span: Span) -> Val {
        // tuple(enumerate(x)) and list(zip(a, b)) materialize the iterator's items, and
        // tuple(d.items()) a dict view's.
        if let ExprKind::Name(f) = &func.kind
            && matches!(&**f, "tuple" | "list")
            && args.len() == 1
            && keywords.is_empty()
            && self.is_builtin(f)
            && let Some(items) = self.consumed_items(&args[0])
        {
            let callee = self.konst_at(
                Const::Prim(if &**f == "tuple" {
                    Prim::TupleType
                } else {
                    Prim::ListType
                }),
                func.span,
            );
            return Val::Node(self.apply(vec![callee, items], span));
        }
        if let ExprKind::Name(f) = &func.kind
            && &**f == "dict"
            && args.len() <= 1
            && !starred(args)
            && self.is_builtin(f)
        {
            return Val::Node(self.dict_builtin(args, keywords, span));
        }
        if !starred(args) && !unpacks(keywords) {
            let call = super::write_back::Call {
                func,
                args,
                keywords,
                span,
            };
            if let Some((variant, writes)) = self.write_back_callee(func) {
                return Val::Node(self.write_back_call(&call, variant, &writes));
            }
            if let Some((prim, variant, writes)) = self.grad_write_back(func) {
                return Val::Node(self.grad_write_back_call(&call, (prim, variant, &writes)));
            }
        }
        let converted = match &func.kind {
            ExprKind::Name(g) if self.fun().info.locals.contains(g) => self.conversion_of_var(g),
            _ => None,
        };
        let callee = match self.expr(func) {
            Val::Node(n) if converted.is_some() => {
                let conv = converted.expect("checked");
                return Val::Node(self.converted_call(&conv, n, args, keywords, span));
            }
            Val::Node(n) => n,
            other => {
                let n = self.require_node(other, func.span);
                // Still lower the arguments so that their own problems are reported.
                for a in args {
                    let _ = self.expr(a);
                }
                return Val::Node(n);
            }
        };
        if unpacks(keywords) {
            return Val::Node(self.dict_call(callee, args, keywords, &[], span));
        }
        if args.iter().any(|a| matches!(a.kind, ExprKind::Starred(_))) {
            return Val::Node(self.star_call(callee, args, keywords, &[], span));
        }
        let mut inputs = vec![callee];
        inputs.extend(args.iter().map(|a| self.value(a)));
        if keywords.is_empty() {
            return Val::Node(self.apply(inputs, span));
        }
        let names = Const::tuple(
            keywords
                .iter()
                .map(|k| Const::Str(k.name.clone()))
                .collect(),
        );
        let names = self.konst(names);
        inputs.insert(1, names);
        for k in keywords {
            let v = self.value(&k.value);
            inputs.push(v);
        }
        let call_kw = self.konst(Const::Prim(Prim::CallKw));
        inputs.insert(0, call_kw);
        Val::Node(self.apply(inputs, span))
    }
}

/// Whether a call has `**` keyword arguments.
pub(super) fn unpacks(keywords: &[Keyword]) -> bool {
    keywords.iter().any(|k| k.unpack)
}

/// Whether a display or argument list has a starred item.
pub(super) fn starred(items: &[Expr]) -> bool {
    items.iter().any(|a| matches!(a.kind, ExprKind::Starred(_)))
}

impl Lowerer<'_> {
    /// The tuple of `items`, where `*x` stands for the items of `x`: `(a,) + tuple(x) + (b,)`.
    fn starred_items(&mut self, items: &[Expr], span: Span) -> NodeId {
        let mut parts: Vec<NodeId> = Vec::new();
        let mut run: Vec<NodeId> = Vec::new();
        for a in items {
            match &a.kind {
                ExprKind::Starred(v) => {
                    if !run.is_empty() {
                        let t = self.prim(Prim::MakeTuple, &std::mem::take(&mut run), span);
                        parts.push(t);
                    }
                    let x = self.value(v);
                    let tuple = self.konst(Const::Prim(Prim::TupleType));
                    parts.push(self.apply(vec![tuple, x], a.span));
                }
                _ => run.push(self.value(a)),
            }
        }
        if !run.is_empty() {
            parts.push(self.prim(Prim::MakeTuple, &run, span));
        }
        parts
            .into_iter()
            .reduce(|acc, t| self.prim(Prim::Add, &[acc, t], span))
            .expect("a starred item")
    }

    /// `f(a, *t, k=v, **d)`: `CallDict(f, (a,) + tuple(t), {'k': v} | d)`, all positional
    /// arguments in one tuple and all keyword arguments in one dict, in Python's order (a
    /// keyword given twice raises TypeError); the variables `extra` are keywords too.
    pub(super) fn dict_call(
        &mut self,
        callee: NodeId,
        args: &[Expr],
        keywords: &[Keyword],
        extra: &[Name],
        span: Span,
    ) -> NodeId {
        // A node even when empty: specialization reads the tuple's abstract to bind the call.
        let positional = if starred(args) {
            self.starred_items(args, span)
        } else {
            let items: Vec<NodeId> = args.iter().map(|a| self.value(a)).collect();
            self.prim(Prim::MakeTuple, &items, span)
        };
        let label = callee_label(&self.fe.module, callee);
        let kwargs = self.keywords_dict(keywords, extra, label, span);
        let f = self.konst(Const::Prim(Prim::CallDict));
        self.apply(vec![f, callee, positional, kwargs], span)
    }

    /// `dict(d, k=v, **e)`: a copy of `d` (a dict) updated with the keyword arguments.
    fn dict_builtin(&mut self, args: &[Expr], keywords: &[Keyword], span: Span) -> NodeId {
        let empty = self.make_dict((Vec::new(), Vec::new()), span);
        let base = match args.first() {
            Some(d) => {
                let d = self.value(d);
                self.prim(Prim::DictUpdate, &[empty, d], span)
            }
            None => empty,
        };
        if keywords.is_empty() {
            return base;
        }
        let kw = self.keywords_dict(keywords, &[], "dict".into(), span);
        self.prim(Prim::DictUpdate, &[base, kw], span)
    }

    /// The keyword arguments of a call as one dict, in Python's order (a keyword given twice
    /// raises TypeError naming the callee `label`); the variables `extra` are keywords too.
    fn keywords_dict(
        &mut self,
        keywords: &[Keyword],
        extra: &[Name],
        label: std::sync::Arc<str>,
        span: Span,
    ) -> NodeId {
        let label = self.konst(Const::Str(label));
        let mut acc: Option<NodeId> = None;
        let mut run: (Vec<Const>, Vec<NodeId>) = (Vec::new(), Vec::new());
        for k in keywords {
            if !k.unpack {
                run.0.push(Const::Str(k.name.clone()));
                run.1.push(self.value(&k.value));
                continue;
            }
            if !run.0.is_empty() || acc.is_none() {
                let part = self.make_dict(std::mem::take(&mut run), span);
                acc = Some(self.merge_into(acc, part, label, span));
            }
            let d = self.value(&k.value);
            acc = Some(self.merge_into(acc, d, label, k.span));
        }
        let b = self.cur_block();
        for n in extra {
            run.0.push(Const::Str(n.clone()));
            let v = self.read(b, n);
            run.1.push(v);
        }
        if !run.0.is_empty() || acc.is_none() {
            let part = self.make_dict(run, span);
            acc = Some(self.merge_into(acc, part, label, span));
        }
        acc.expect("a dict")
    }

    /// `{'a': x, **d, 'b': y}`: runs of keys are `MakeDict`s, each `**d` updates what is
    /// before it (`DictUpdate`: its values win, as later keys do).
    fn dict_display(&mut self, items: &[(Option<Name>, Expr)], span: Span) -> NodeId {
        let mut acc: Option<NodeId> = None;
        let mut run: Vec<(Name, NodeId)> = Vec::new();
        for (k, v) in items {
            let v = self.value(v);
            match k {
                Some(k) => run.push((k.clone(), v)),
                None => {
                    let part = self.unique_dict(std::mem::take(&mut run), span);
                    let before =
                        acc.map_or(part, |a| self.prim(Prim::DictUpdate, &[a, part], span));
                    acc = Some(self.prim(Prim::DictUpdate, &[before, v], span));
                }
            }
        }
        if acc.is_none() || !run.is_empty() {
            let part = self.unique_dict(run, span);
            acc = Some(match acc {
                Some(a) => self.prim(Prim::DictUpdate, &[a, part], span),
                None => part,
            });
        }
        acc.expect("a dict")
    }

    /// A `MakeDict` of `items` (all evaluated already): a repeated key keeps its first place
    /// and its last value, so `MakeDict`'s keys are unique.
    fn unique_dict(&mut self, items: Vec<(Name, NodeId)>, span: Span) -> NodeId {
        let mut keys: Vec<Name> = Vec::new();
        let mut values: Vec<NodeId> = Vec::new();
        for (k, v) in items {
            match keys.iter().position(|x| *x == k) {
                Some(j) => values[j] = v,
                None => {
                    keys.push(k);
                    values.push(v);
                }
            }
        }
        let keys = keys.into_iter().map(Const::Str).collect();
        self.make_dict((keys, values), span)
    }

    fn make_dict(&mut self, (keys, values): (Vec<Const>, Vec<NodeId>), span: Span) -> NodeId {
        let mut inputs = vec![self.konst(Const::tuple(keys))];
        inputs.extend(values);
        self.prim(Prim::MakeDict, &inputs, span)
    }

    fn merge_into(&mut self, acc: Option<NodeId>, d: NodeId, label: NodeId, span: Span) -> NodeId {
        match acc {
            Some(a) => self.prim(Prim::DictMerge, &[a, d, label], span),
            None => {
                // The first part is checked to be a dict as well.
                let empty = self.make_dict((Vec::new(), Vec::new()), span);
                self.prim(Prim::DictMerge, &[empty, d, label], span)
            }
        }
    }

    /// `f(a, *t, b, k=v)`: `CallStar(f, names, (a,) + tuple(t) + (b,), v)`, the positional
    /// arguments in one tuple whose length inference learns; the variables `extra` follow as
    /// keyword arguments.
    pub(super) fn star_call(
        &mut self,
        callee: NodeId,
        args: &[Expr],
        keywords: &[Keyword],
        extra: &[Name],
        span: Span,
    ) -> NodeId {
        let positional = self.starred_items(args, span);
        let names = keywords
            .iter()
            .map(|k| &k.name)
            .chain(extra)
            .map(|n| Const::Str(n.clone()))
            .collect();
        let names = self.konst(Const::tuple(names));
        let mut inputs = vec![
            self.konst(Const::Prim(Prim::CallStar)),
            callee,
            names,
            positional,
        ];
        for k in keywords {
            let v = self.value(&k.value);
            inputs.push(v);
        }
        // Variables passed to a converted closure (`closures`), read after the arguments;
        // unassigned is passed as it is: the closure raises only if it reads it.
        let b = self.cur_block();
        for n in extra {
            inputs.push(self.read(b, n));
        }
        self.apply(inputs, span)
    }
}

/// A `select` one of whose branches is being lowered (see `Lowerer::open_select`).
struct OpenSelect {
    var: Name,
    base: String,
    /// The branch that settled on its value.
    done: super::BlockId,
    /// Whether that is the true branch.
    settles_on: bool,
}

/// The name of a callee in Python's messages about its arguments: a function's qualified
/// name, a global's or builtin's name, else `function`.
fn callee_label(m: &anfora_ir::Module, callee: NodeId) -> std::sync::Arc<str> {
    match m.constant(callee) {
        Some(Const::Graph(g)) => match &m.graph(*g).signature {
            Some(sig) => sig.name.clone(),
            None => m.graph(*g).function.clone(),
        },
        Some(Const::Symbol { name, .. }) => name.clone(),
        Some(Const::Prim(p)) => p.python_name().into(),
        _ => "function".into(),
    }
}
