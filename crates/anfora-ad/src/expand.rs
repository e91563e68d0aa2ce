//! Expanding one call of `grad`, `value_and_grad` or `vjp` on a graph `f`: its constant
//! options are checked, `f` is lifted (free values and weights become leading parameters) and
//! differentiated into J(f), and the call is replaced by a wrapper around J(f).

use anfora_ir::codes;
use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, GraphId, GraphKind, Module, NodeId, ParamRef, Prim, Span};

use crate::lift::{FvKey, Lifted, lift};
use crate::{Transform, replace_call};

/// The constant arguments of a `grad`/`value_and_grad` call (`vjp` takes none).
struct Options {
    /// The positions of the arguments differentiated.
    argnums: Vec<usize>,
    /// `argnums` was one int: the wrapper returns that gradient alone, not a tuple.
    single: bool,
    /// The Parameters differentiated, when `weights` is given.
    weights: Option<Vec<ParamRef>>,
    /// The wrapper takes the output's sensitivity as an extra last argument.
    sens: bool,
    /// The rule for integer values' sensitivities (`integers="zero"` or `"cast"`).
    integers: crate::IntegerSensitivities,
    /// `f` returns `(value, aux)`: only the value is differentiated, `aux` is passed on.
    has_aux: bool,
}

/// How to call J(f) from a wrapper: the J graph, then the lifted free values, then the
/// arguments.
struct JCall {
    graph: NodeId,
    free_values: Vec<NodeId>,
    /// The number of lifted free values: where the sensitivities of `f`'s own arguments start.
    k: i64,
    /// The arguments that every call of the gradient function passes as the same constant
    /// holding functions, which the differentiated graph has in place of its parameter.
    known: Vec<bool>,
}

impl JCall {
    /// The call of J(f) with `args` (in graph `g` of module `m`), each argument that is not
    /// a known constant checked to hold no function (`GradArgument`): J(f) calls functions
    /// in the J world, where a primal function does not belong.
    fn inputs(&self, m: &mut Module, g: GraphId, args: &[NodeId], span: Span) -> Vec<NodeId> {
        let mut call = vec![self.graph];
        // The values f reads from the functions around it enter the J world too; weights are
        // Parameters.
        for &v in &self.free_values {
            call.push(match m.constant(v) {
                Some(Const::Ref(_)) => v,
                _ => {
                    // A variable's name; an internal one (a join of branches) says nothing.
                    let name = (m.node(v).name.as_deref())
                        .filter(|n| n.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()))
                        .unwrap_or("a value")
                        .to_string();
                    let name = m.value_at(Const::str(&name), span);
                    m.apply_prim(g, Prim::GradArgument, &[v, name], span)
                }
            });
        }
        for (i, &a) in args.iter().enumerate() {
            call.push(if self.known.get(i) == Some(&true) {
                a
            } else {
                let i = m.value_at(Const::Int(i as i64), span);
                m.apply_prim(g, Prim::GradArgument, &[a, i], span)
            });
        }
        call
    }
}

impl Transform<'_> {
    /// Replaces the grad call `n` in graph `h`, on graph `fg`, by its expansion; `all` are the
    /// graphs whose uses of `n` are rewritten.
    pub(crate) fn expand_one(
        &mut self,
        h: GraphId,
        n: NodeId,
        fg: GraphId,
        all: &[GraphId],
    ) -> Result<(), Vec<Diagnostic>> {
        let p = self.m.callee_prim(n).expect("a grad call");
        let span = self.m.node(n).span;
        let ins = self.m.inputs(n).to_vec();
        let options = if p == Prim::Vjp {
            None
        } else {
            Some(self.options(&ins, self.m.graph(fg).params.len(), span)?)
        };
        let ws = options
            .as_ref()
            .and_then(|o| o.weights.clone())
            .unwrap_or_default();
        let known = match p {
            Prim::Vjp => Vec::new(),
            _ => self.function_arguments(all, n, self.m.graph(fg).params.len()),
        };
        let passes_constants = known.iter().any(Option::is_some);
        let mut copies = crate::constant_args::Specializer::new(self.m, &mut self.names);
        let copy = passes_constants
            .then(|| copies.specialize(fg, &known))
            .flatten();
        let root = copy.unwrap_or(fg);
        copies.calls_in(root);
        crate::constant_args::constant_free_values(self.m, root);
        crate::constant_args::fold_constant_reads(self.m, root);
        let fg = match copy {
            Some(copy) => copy,
            None if passes_constants => self.with_arguments(fg, &known, span),
            None => fg,
        };
        crate::stars::bind_star_calls(self.m, fg);
        let lifted = lift(self.m, fg, &ws, &mut self.names);
        crate::methods::to_primitives(self.m, lifted.graph);
        let outer = self.integers;
        self.integers = options
            .as_ref()
            .map_or(crate::IntegerSensitivities::Zero, |o| o.integers);
        let mut call = self.j_call(&lifted, &ws);
        call.known = known.iter().map(Option::is_some).collect();
        self.integers = outer;
        match options {
            None => self.expand_vjp(h, n, fg, &call, &ins[2..], all, span),
            Some(options) => {
                let wv = self.grad_wrapper(p, fg, &call, &lifted, &options, span);
                self.m.graphs[h].order.retain(|&x| x != n);
                self.m.replace_uses(all, n, wv);
            }
        }
        Ok(())
    }

    /// The options of a `grad`/`value_and_grad` call with inputs `ins`, on a function of
    /// `nparams` parameters.
    fn options(
        &self,
        ins: &[NodeId],
        nparams: usize,
        span: Span,
    ) -> Result<Options, Vec<Diagnostic>> {
        let bad = |msg: &str| vec![Diagnostic::error(codes::GRAD_ARGUMENT, msg, span)];
        let (argnums, single) = self
            .argnums(ins[2], nparams)
            .ok_or_else(|| bad("argnums must be None, an int or a tuple of ints"))?;
        if let Some(i) = argnums.iter().find(|&&i| !(0..nparams as i64).contains(&i)) {
            let msg =
                format!("argnums {i} is out of range for a function of {nparams} argument(s)");
            return Err(bad(&msg));
        }
        let weights = match self.const_arg(ins[3]) {
            Some(Const::None) => None,
            Some(c) => {
                Some(weights_of(c).ok_or_else(|| bad("weights must be a tuple of Parameters"))?)
            }
            None => return Err(bad("weights must be a tuple of module-level Parameters")),
        };
        // With sens_param the wrapper takes the output sensitivity as an extra last argument.
        let sens = match ins.get(4).map(|&x| self.const_arg(x)) {
            None | Some(Some(Const::Bool(false))) => false,
            Some(Some(Const::Bool(true))) => true,
            _ => return Err(bad("sens_param must be a constant bool")),
        };
        let integers = match ins.get(5).map(|&x| self.const_arg(x)) {
            None | Some(Some(Const::None)) => crate::IntegerSensitivities::Zero,
            Some(Some(Const::Str(s))) if &*s == "zero" => crate::IntegerSensitivities::Zero,
            Some(Some(Const::Str(s))) if &*s == "cast" => crate::IntegerSensitivities::Cast,
            _ => return Err(bad("integers must be the constant 'zero' or 'cast'")),
        };
        let has_aux = match ins.get(6).map(|&x| self.const_arg(x)) {
            None | Some(Some(Const::Bool(false))) => false,
            Some(Some(Const::Bool(true))) => true,
            _ => return Err(bad("has_aux must be a constant bool")),
        };
        let argnums = argnums.into_iter().map(|i| i as usize).collect();
        Ok(Options {
            argnums,
            single,
            weights,
            sens,
            integers,
            has_aux,
        })
    }

    /// `argnums`: `None`, `...` (every argument, GradOperation's get_all), an int, or a tuple of
    /// ints; whether it was one int.
    fn argnums(&self, n: NodeId, nparams: usize) -> Option<(Vec<i64>, bool)> {
        Some(match self.const_arg(n)? {
            Const::None => (vec![], false),
            Const::Ellipsis => ((0..nparams as i64).collect(), false),
            Const::Int(i) => (vec![i], true),
            Const::Tuple(items) => {
                let ints = items.iter().map(|c| match c {
                    Const::Int(i) => Some(*i),
                    _ => None,
                });
                (ints.collect::<Option<Vec<_>>>()?, false)
            }
            _ => return None,
        })
    }

    /// Constant `argnums`/`weights` arguments: literals and tuples of them.
    fn const_arg(&self, n: NodeId) -> Option<Const> {
        if let Some(c) = self.m.constant(n) {
            return Some(c.clone());
        }
        if self.m.callee_prim(n) == Some(Prim::MakeTuple) {
            let items = self.m.inputs(n)[1..]
                .iter()
                .map(|&x| self.const_arg(x))
                .collect::<Option<Vec<_>>>()?;
            return Some(Const::tuple(items));
        }
        None
    }

    /// J(f) of the lifted graph, and the values of its free values (weights by reference).
    fn j_call(&mut self, lifted: &Lifted, ws: &[ParamRef]) -> JCall {
        self.cycles.add(self.m, lifted.graph);
        self.cells |= crate::cells::has_cells(self.m, lifted.graph);
        let jf = self.j_graph(lifted.graph);
        self.finish();
        let free_values = lifted
            .fvs
            .iter()
            .map(|key| match key {
                FvKey::Node(v) => *v,
                FvKey::Weight(w) => self.m.value(Const::Ref(ws[*w as usize].clone())),
            })
            .collect();
        JCall {
            graph: self.m.value(Const::Graph(jf)),
            free_values,
            k: lifted.fvs.len() as i64,
            known: Vec::new(),
        }
    }

    /// For each of the `arity` parameters of the function of grad call `n`, the constant
    /// holding functions (a `def`, a Cell, a tuple of them) that every call of the gradient
    /// function in `all` passes there, if they all pass the same one. A function that comes
    /// in as an argument is a primal value, which J(f) cannot call; a constant one can be
    /// differentiated with f (see [`Self::with_arguments`]).
    fn function_arguments(&self, all: &[GraphId], n: NodeId, arity: usize) -> Vec<Option<Const>> {
        let mut common: Option<Vec<Option<Const>>> = None;
        for &g in all {
            // Kept or passed on, the gradient function may be called with other functions.
            if self.m.graph(g).output == Some(n) {
                return Vec::new();
            }
            for site in self.m.graph_nodes(g) {
                let inputs = self.m.inputs(site);
                if inputs.iter().skip(1).any(|&x| x == n) {
                    return Vec::new();
                }
                if inputs.first() != Some(&n) {
                    continue;
                }
                let args = (0..arity).map(|i| {
                    let c = inputs.get(i + 1).and_then(|&a| self.m.constant(a))?;
                    c.holds_graph().then(|| c.clone())
                });
                common = Some(match common {
                    None => args.collect(),
                    Some(seen) => (seen.into_iter().zip(args))
                        .map(|(a, b)| a.filter(|a| b.as_ref().is_some_and(|b| a.same_as(b))))
                        .collect(),
                });
            }
        }
        common.unwrap_or_default()
    }

    /// A function of `fg`'s signature that calls `fg` with the constants `known` in place of
    /// those arguments, so that their functions are differentiated with it (J(f) calls their
    /// J graphs) and the Parameters they read are found as weights.
    fn with_arguments(&mut self, fg: GraphId, known: &[Option<Const>], span: Span) -> GraphId {
        let f = self.m.graph(fg).clone();
        let g = self.m.add_graph(
            self.names.fresh(&f.name),
            f.function.clone(),
            GraphKind::Function,
            span,
        );
        self.m.graphs[g].signature = f.signature.clone();
        let params = self.copy_params(fg, g);
        let mut call = vec![self.m.value(Const::Graph(fg))];
        for (i, &p) in params.iter().enumerate() {
            call.push(match known.get(i).cloned().flatten() {
                Some(c) => self.m.value_at(c, span),
                None => p,
            });
        }
        let out = self.apply(g, call, span);
        self.m.set_output(g, out);
        g
    }

    /// `vjp(f, *primals)`: `(y, vjp_fn)` built in place of call `n` in `h`, where `vjp_fn(ct)`
    /// gives the primals' sensitivities.
    #[allow(clippy::too_many_arguments)]
    fn expand_vjp(
        &mut self,
        h: GraphId,
        n: NodeId,
        fg: GraphId,
        call: &JCall,
        primals: &[NodeId],
        all: &[GraphId],
        span: Span,
    ) {
        let mark = self.m.graph(h).order.len();
        let inputs = call.inputs(self.m, h, primals, span);
        let (y, bp) = self.call_j(h, inputs, span);
        let vg = self.vjp_function(fg, call.k, primals.len(), span);
        let mut pins = vec![self.m.value(Const::Graph(vg)), bp];
        pins.extend(primals);
        pins.push(y);
        let vjp_fn = self.prim(h, Prim::Partial, &pins, span);
        let result = self.prim(h, Prim::MakeTuple, &[y, vjp_fn], span);
        replace_call(self.m, h, n, mark, result, all);
    }

    /// `vjp_fn(bprop, primal..., out, cotangent)`: the sensitivities of the `n` primals of `f`,
    /// which start at item `k` of the backward closure's result.
    fn vjp_function(&mut self, fg: GraphId, k: i64, n: usize, span: Span) -> GraphId {
        let f = self.m.graph(fg);
        let (name, function) = (
            self.names.fresh(&format!("vjp_{}", f.name)),
            f.function.clone(),
        );
        let vg = self.m.add_graph(name, function, GraphKind::Lambda, span);
        let bprop = self.m.add_param(vg, "bprop", span);
        let primals: Vec<NodeId> = (0..n)
            .map(|i| self.m.add_param(vg, &format!("primal{i}"), span))
            .collect();
        let out = self.m.add_param(vg, "out", span);
        let ct = self.m.add_param(vg, "cotangent", span);
        let ct = self.prim(vg, Prim::SensCheck, &[ct, out], span);
        let ds = self.apply(vg, vec![bprop, ct], span);
        let outs: Vec<NodeId> = (primals.iter().enumerate())
            .map(|(i, &pi)| self.dense_item(vg, ds, k + i as i64, pi, span))
            .collect();
        let result = self.prim(vg, Prim::MakeTuple, &outs, span);
        self.m.set_output(vg, result);
        vg
    }

    /// `grad`/`value_and_grad`: a wrapper graph with f's signature (plus the sensitivity, with
    /// `sens_param`) returning the gradients asked for; the wrapper's value.
    fn grad_wrapper(
        &mut self,
        p: Prim,
        fg: GraphId,
        call: &JCall,
        lifted: &Lifted,
        options: &Options,
        span: Span,
    ) -> NodeId {
        let f = self.m.graph(fg).clone();
        let name = self.names.fresh(&format!("grad_{}", f.name));
        let wg = self
            .m
            .add_graph(name, f.function.clone(), GraphKind::Function, span);
        // With a sensitivity parameter the wrapper's signature is f's plus one positional
        // argument, which plain positional binding covers.
        if !options.sens {
            self.m.graphs[wg].signature = f.signature.clone();
        }
        let params = self.copy_params(fg, wg);
        let inputs = call.inputs(self.m, wg, &params, span);
        let (out, bp) = self.call_j(wg, inputs, span);
        // With has_aux, f's result is `(y, aux)`: y is differentiated, aux gets no sensitivity.
        let (y, aux) = if options.has_aux {
            let pair = self.prim(wg, Prim::AuxPair, &[out], span);
            let (zero, one) = (self.int(0), self.int(1));
            let y = self.prim(wg, Prim::TupleGetItem, &[pair, zero], span);
            (
                y,
                Some(self.prim(wg, Prim::TupleGetItem, &[pair, one], span)),
            )
        } else {
            (out, None)
        };
        let seed = if options.sens {
            let d = self.m.add_param(wg, "sens", span);
            self.prim(wg, Prim::SensCheck, &[d, y], span)
        } else {
            self.prim(wg, Prim::SensOnes, &[y], span)
        };
        let seed = match aux {
            Some(_) => {
                let none = self.m.value(Const::None);
                self.prim(wg, Prim::MakeTuple, &[seed, none], span)
            }
            None => seed,
        };
        let ds = self.apply(wg, vec![bp, seed], span);
        let input_grads: Vec<NodeId> = (options.argnums.iter())
            .map(|&i| self.dense_item(wg, ds, call.k + i as i64, params[i], span))
            .collect();
        let inputs = if options.single {
            input_grads[0]
        } else {
            self.prim(wg, Prim::MakeTuple, &input_grads, span)
        };
        let grads = match &options.weights {
            None => inputs,
            Some(ws) => {
                let wt = self.weight_grads(wg, ds, lifted, ws, span);
                if options.argnums.is_empty() {
                    wt
                } else {
                    self.prim(wg, Prim::MakeTuple, &[inputs, wt], span)
                }
            }
        };
        // JAX's results: `(value, grads)`, with aux `((value, aux), grads)` and `(grads, aux)`.
        let result = match (p == Prim::ValueAndGrad, aux) {
            (true, _) => self.prim(wg, Prim::MakeTuple, &[out, grads], span),
            (false, Some(aux)) => self.prim(wg, Prim::MakeTuple, &[grads, aux], span),
            (false, None) => grads,
        };
        self.m.set_output(wg, result);
        self.m.value_at(Const::Graph(wg), span)
    }

    /// The tuple of the sensitivities of the weights `ws`, in wrapper `wg` whose backward
    /// result is `ds` (zeros for a weight f never reads).
    fn weight_grads(
        &mut self,
        wg: GraphId,
        ds: NodeId,
        lifted: &Lifted,
        ws: &[ParamRef],
        span: Span,
    ) -> NodeId {
        let mut wgrads = Vec::new();
        for (j, w) in ws.iter().enumerate() {
            let wv = self.m.value(Const::Ref(w.clone()));
            let at = (lifted.fvs.iter()).position(|&f| f == FvKey::Weight(j as u32));
            wgrads.push(match at {
                Some(pos) => self.dense_item(wg, ds, pos as i64, wv, span),
                None => {
                    let none = self.m.value(Const::None);
                    self.prim(wg, Prim::FillZeros, &[none, wv], span)
                }
            });
        }
        self.prim(wg, Prim::MakeTuple, &wgrads, span)
    }
}

/// `weights`: a Parameter or a tuple of them.
fn weights_of(c: Const) -> Option<Vec<ParamRef>> {
    let items = match c {
        Const::Tuple(xs) => xs.to_vec(),
        c => vec![c],
    };
    (items.iter())
        .map(|c| match c {
            Const::Ref(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}
