//! Statements: assignments, `if`, loops (a header, a body and an exit block), `assert`,
//! `return`, `break` and `continue`.

use std::rc::Rc;
use std::sync::Arc;

use anfora_ir::{Const, GraphKind, NodeId, Prim, Span};

use super::{BlockId, IterKind, LoopCtx, Lowerer, bin_prim, const_eval};
use crate::ast::*;

impl Lowerer<'_> {
    pub(super) fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            if self.cur().is_none() {
                break; // unreachable code after return/break/continue
            }
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        anfora_ir::deep(|| self.stmt_inner(s))
    }

    fn stmt_inner(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::FunctionDef(def) => {
                let g = self.fun().nested[&Rc::as_ptr(def)];
                let q: Arc<str> =
                    Arc::from(format!("{}.<locals>.{}", self.fun().qualname, def.name).as_str());
                let conv = self.fun().convs.get(&Rc::as_ptr(def)).cloned();
                self.function(def.clone(), g, q, None, conv);
                let v = self.konst_at(Const::Graph(g), def.head_span);
                self.bind(&def.name, v, def.head_span);
            }
            StmtKind::Return(value) => {
                let v = match value {
                    Some(e) => self.value(e),
                    None => self.none(),
                };
                let v = self.with_outs(v, s.span);
                // Calls of user functions stay ordinary calls, even in tail position, so that
                // tracebacks and the recursion limit match Python; only jumps between the
                // blocks of one function are tail calls.
                let g = self.cur_graph();
                self.fe.module.set_output(g, v);
                self.set_cur(None);
            }
            StmtKind::Assign { targets, value } => {
                let v = self.value(value);
                for t in targets {
                    self.assign(t, v);
                }
            }
            StmtKind::AugAssign { target, op, value } => {
                self.aug_assign(target, *op, value, s.span)
            }
            StmtKind::AttrAssign {
                object,
                attr,
                target_span,
                op,
                value,
            } => self.attr_assign(object, attr, *target_span, *op, value, s.span),
            StmtKind::Declare(_)
            | StmtKind::Nonlocal(_)
            | StmtKind::Pass
            | StmtKind::Import(_)
            | StmtKind::MainGuard => {}
            StmtKind::For { target, iter, body } => self.for_stmt(target, iter, body, s.span),
            StmtKind::While { test, body } => self.while_stmt(test, body, s.span),
            StmtKind::If { test, body, orelse } => {
                let c = self.value(test);
                let t = self.prim(Prim::Truth, &[c], test.span);
                let base = self.cur_name();
                let (tb, fb) = self.branch(t, s.span);
                self.set_cur(Some(tb));
                self.stmts(body);
                let end_t = self.cur();
                self.set_cur(Some(fb));
                self.stmts(orelse);
                let end_f = self.cur();
                let ends = [end_t, end_f].into_iter().flatten().collect();
                let j = self.join(ends, &base, s.span);
                self.set_cur(j);
            }
            StmtKind::Assert { test, msg } => self.assert(test, msg.as_ref(), s.span),
            StmtKind::Expr(e) => {
                let _ = self.expr(e);
            }
            StmtKind::Break => {
                let cur = self.cur_block();
                let target = match self.fun().loops.last().and_then(|l| l.break_target) {
                    Some(t) => t,
                    None => {
                        let base = self
                            .fun()
                            .loops
                            .last()
                            .expect("break inside a loop")
                            .base
                            .clone();
                        let t = self.new_named_block(
                            GraphKind::Join,
                            &format!("↓{base}"),
                            false,
                            s.span,
                        );
                        self.fun_mut().loops.last_mut().unwrap().break_target = Some(t);
                        t
                    }
                };
                self.jump(cur, target, s.span);
                self.set_cur(None);
            }
            StmtKind::Continue => {
                let cur = self.cur_block();
                let header = self
                    .fun()
                    .loops
                    .last()
                    .expect("continue inside a loop")
                    .header;
                self.jump(cur, header, s.span);
                self.set_cur(None);
            }
            StmtKind::Invalid => {}
        }
    }

    pub(super) fn assign(&mut self, t: &Target, v: NodeId) {
        match t {
            Target::Name(n, _) => {
                let g = self.cur_graph();
                let node = self.fe.module.node(v);
                if node.owner == Some(g) && node.name.is_none() && self.fe.module.is_apply(v) {
                    self.fe.module.set_name(v, n);
                }
                self.bind(n, v, t.span());
            }
            Target::Tuple(items, span) => {
                if let Some(star) = items.iter().position(|t| matches!(t, Target::Starred(..))) {
                    return self.assign_starred(items, star, v, *span);
                }
                let n = self.konst(Const::Int(items.len() as i64));
                let unpacked = self.prim(Prim::Unpack, &[v, n], *span);
                for (i, item) in items.iter().enumerate() {
                    let idx = self.konst(Const::Int(i as i64));
                    let x = self.prim(Prim::TupleGetItem, &[unpacked, idx], item.span());
                    self.assign(item, x);
                }
            }
            // Converted only inside a tuple target.
            Target::Starred(..) => {}
            Target::Item {
                object,
                index,
                span,
            } => self.store_item(object, index, v, *span),
            Target::Invalid(_) => {}
        }
    }

    /// `a, *b, c = v`: the items of `v` (at least as many as the other targets), the first and
    /// last ones to the targets around the star, the rest as a list to the starred name.
    fn assign_starred(&mut self, items: &[Target], star: usize, v: NodeId, span: Span) {
        let after = items.len() - star - 1;
        let n = self.konst(Const::Int((items.len() - 1) as i64));
        let all = self.prim(Prim::UnpackAtLeast, &[v, n], span);
        for (i, item) in items.iter().enumerate() {
            let x = if i == star {
                let stop = match after {
                    0 => Const::None,
                    k => Const::Int(-(k as i64)),
                };
                let bounds = [Const::Int(star as i64), stop, Const::None].map(|c| self.konst(c));
                let slice = self.prim(Prim::MakeSlice, &bounds, item.span());
                let rest = self.prim(Prim::GetItem, &[all, slice], item.span());
                let list = self.konst(Const::Prim(Prim::ListType));
                self.apply(vec![list, rest], item.span())
            } else {
                let at = if i < star {
                    i as i64
                } else {
                    i as i64 - items.len() as i64
                };
                let idx = self.konst(Const::Int(at));
                self.prim(Prim::GetItem, &[all, idx], item.span())
            };
            match item {
                Target::Starred(n, s) => self.assign(&Target::Name(n.clone(), *s), x),
                other => self.assign(other, x),
            }
        }
    }

    fn assert(&mut self, test: &Expr, msg: Option<&Expr>, span: Span) {
        let c = self.value(test);
        match msg.map(|m| (m, const_eval(m))) {
            None => {
                let none = self.none();
                self.prim(Prim::Assert, &[c, none], span);
            }
            Some((_, Some(k))) => {
                let m = self.konst(k);
                self.prim(Prim::Assert, &[c, m], span);
            }
            Some((m, None)) => {
                // The message is evaluated only when the assertion fails, as in Python.
                let t = self.prim(Prim::Truth, &[c], test.span);
                let (ok, fail) = self.branch(t, span);
                self.set_cur(Some(fail));
                let text = self.value(m);
                let kind = self.konst(Const::str("AssertionError"));
                let raise = self.prim(Prim::Raise, &[kind, text], span);
                let g = self.cur_graph();
                self.fe.module.set_output(g, raise);
                self.set_cur(Some(ok));
            }
        }
    }

    fn while_stmt(&mut self, test: &Expr, body: &[Stmt], span: Span) {
        let base = self.cur_name();
        let cur = self.cur_block();
        let header = self.new_named_block(GraphKind::LoopHeader, &base, false, span);
        self.jump(cur, header, span);
        self.set_cur(Some(header));
        let c = self.value(test);
        let t = self.prim(Prim::Truth, &[c], test.span);
        self.loop_rest(t, header, &base, span, |l| l.stmts(body));
    }

    /// Builds body and exit after the header's condition `cond` (computed in the current
    /// block), runs `body`, closes the loop and continues after it.
    fn loop_rest(
        &mut self,
        cond: NodeId,
        header: BlockId,
        base: &str,
        span: Span,
        body: impl FnOnce(&mut Self),
    ) {
        let test_block = self.cur_block();
        let body_block = self.new_named_block(GraphKind::LoopBody, base, true, span);
        let exit = self.new_named_block(GraphKind::Join, base, true, span);
        self.blocks[body_block].preds.push((test_block, None));
        self.blocks[exit].preds.push((test_block, None));
        self.branch_to(cond, body_block, exit, span);
        self.fun_mut().loops.push(LoopCtx {
            header,
            break_target: None,
            base: base.to_string(),
        });
        self.set_cur(Some(body_block));
        body(self);
        if let Some(end) = self.cur() {
            self.jump(end, header, span);
        }
        let ctx = self.fun_mut().loops.pop().expect("loop context");
        self.seal(header);
        match ctx.break_target {
            Some(bt) => {
                self.jump(exit, bt, span);
                self.seal(bt);
                self.set_cur(Some(bt));
            }
            None => self.set_cur(Some(exit)),
        }
    }

    /// The sequence a `for` loop over `iter` walks: a dict's keys (`IterSequence`), where the
    /// expression may be a dict (a display of a tuple or list, or `range(...)`, is not).
    fn iter_sequence(&mut self, iter: &Expr) -> NodeId {
        let v = self.value(iter);
        let sequence = match &iter.kind {
            ExprKind::Tuple(_) | ExprKind::List(_) => true,
            ExprKind::Call { func, .. } => {
                matches!(&func.kind, ExprKind::Name(n) if &**n == "range" && self.is_builtin(n))
            }
            _ => false,
        };
        match sequence {
            true => v,
            false => self.prim(Prim::IterSequence, &[v], iter.span),
        }
    }

    fn for_stmt(&mut self, target: &Target, iter: &Expr, body: &[Stmt], span: Span) {
        // The sequence and its length are computed once; the loop walks an index.
        let (kind, seqs) = match self.dict_view(iter) {
            Some(items) => (None, vec![items]),
            None => match self.iterator_call(iter) {
                Some((kind, mut args)) => {
                    // enumerate's start, after its iterable, is no sequence.
                    let n = if kind == IterKind::Enumerate {
                        1
                    } else {
                        args.len()
                    };
                    let n = n.min(args.len());
                    for a in &mut args[..n] {
                        *a = self.prim(Prim::IterSequence, &[*a], iter.span);
                    }
                    (Some(kind), args)
                }
                None => (None, vec![self.iter_sequence(iter)]),
            },
        };
        let len = match kind {
            Some(IterKind::Enumerate) | None => self.prim(Prim::IterLen, &[seqs[0]], iter.span),
            Some(IterKind::Zip) => {
                let lens: Vec<NodeId> = seqs
                    .iter()
                    .map(|&s| self.prim(Prim::IterLen, &[s], iter.span))
                    .collect();
                if lens.len() == 1 {
                    lens[0]
                } else {
                    self.prim(Prim::Min, &lens, iter.span)
                }
            }
        };
        let index = self.hidden_name("i");
        let zero = self.konst(Const::Int(0));
        let cur = self.cur_block();
        self.write(cur, &index, zero);
        let base = self.cur_name();
        let header = self.new_named_block(GraphKind::LoopHeader, &base, false, span);
        let header_graph = self.blocks[header].graph;
        self.fe.module.graphs[header_graph].iterates = seqs.clone();
        self.jump(cur, header, span);
        self.set_cur(Some(header));
        let i = self.read(header, &index);
        let cond = self.prim(Prim::Lt, &[i, len], iter.span);
        self.loop_rest(cond, header, &base, span, |l| {
            let b = l.cur_block();
            let i = l.read(b, &index);
            let item = match kind {
                None => l.prim(Prim::GetItem, &[seqs[0], i], iter.span),
                Some(IterKind::Enumerate) => {
                    let n = l.prim(Prim::Add, &[seqs[1], i], iter.span);
                    let x = l.prim(Prim::GetItem, &[seqs[0], i], iter.span);
                    l.prim(Prim::MakeTuple, &[n, x], iter.span)
                }
                Some(IterKind::Zip) => {
                    let items: Vec<NodeId> = seqs
                        .iter()
                        .map(|&s| l.prim(Prim::GetItem, &[s, i], iter.span))
                        .collect();
                    l.prim(Prim::MakeTuple, &items, iter.span)
                }
            };
            let one = l.konst(Const::Int(1));
            let next = l.prim(Prim::Add, &[i, one], iter.span);
            l.write(b, &index, next);
            l.assign(target, item);
            l.stmts(body);
        });
    }

    /// `obj.attr = value` writes the Parameter the attribute holds (`Assign`); `+=` and `-=`
    /// are `AssignAdd`/`AssignSub`, other operators read, compute and `Assign`. Python's order:
    /// the value first for `=`, the object and its attribute first for `op=`. Whether the
    /// attribute is a Parameter is checked by inference (the write's rule).
    fn attr_assign(
        &mut self,
        object: &Expr,
        attr: &Name,
        target_span: Span,
        op: Option<BinOp>,
        value: &Expr,
        span: Span,
    ) {
        let target = |l: &mut Self| {
            let n = l.value(object);
            let s = l.konst(Const::Str(attr.clone()));
            l.prim(Prim::GetAttr, &[n, s], target_span)
        };
        match op {
            None => {
                let v = self.value(value);
                let t = target(self);
                self.prim(Prim::Assign, &[t, v], span);
            }
            Some(op @ (BinOp::Add | BinOp::Sub)) => {
                let t = target(self);
                let v = self.value(value);
                let prim = match op {
                    BinOp::Add => Prim::AssignAdd,
                    _ => Prim::AssignSub,
                };
                self.prim(prim, &[t, v], span);
            }
            Some(other) => {
                let t = target(self);
                let v = self.value(value);
                let r = self.prim(bin_prim(other), &[t, v], span);
                self.prim(Prim::Assign, &[t, r], span);
            }
        }
    }
}
