//! anfora's frontend: parses Python source (through ruff, behind [`py_ast`]) and lowers
//! functions to MindIR-style graphs by SSA construction (Braun et al., as MindSpore's parser):
//! each basic block is a graph, phis are block parameters, jumps are tail calls, `if` is a
//! `Switch` between branch graphs followed by a call of its result, and loops are tail-recursive
//! header graphs.
//!
//! Globals are resolved while lowering through a [`Resolver`]: the command line resolves a
//! file's module-level names, the Python package resolves a function's globals and closure
//! cells. Every problem becomes a [`Diagnostic`]; lowering continues so that all are reported
//! together.

pub mod ast;
mod flow;
mod ownership;
pub use anfora_ir::codes;
pub mod py_ast;
mod python_builtins;
mod resolve;
mod scope;
mod ssa;

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, FileId, GraphId, GraphKind, Module, Param, Prim, SourceFile};
use anfora_tensor::DType;

pub use ssa::const_eval;

/// The namespace (Python module) a function's globals are looked up in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScopeId(pub u32);

/// A user function known to the frontend, lowered on first use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FunctionRef(pub u32);

/// Namespaces of the anfora package visible to compiled code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Namespace {
    /// `import anfora`
    Anfora,
    /// `anfora.ops`
    Ops,
}

/// What a global name stands for.
#[derive(Clone, Debug)]
pub enum Resolved {
    /// A constant embedded in the graph (numbers, strings, tuples, tensors, dtypes, primitives).
    Value(Const),
    /// A user function, compiled on demand.
    Function(FunctionRef),
    /// `anfora` or `anfora.ops`, whose attributes resolve at compile time.
    Namespace(Namespace),
    /// A host object (a Cell, a method's `self`) whose attributes resolve at compile time
    /// through [`Resolver::resolve_attr`].
    Object(u64),
    /// A function compiled from its source text on first use (the Python package's
    /// functions and methods).
    Source(Box<HostFunction>),
    /// A host tuple or list holding functions (or other values that are not plain
    /// constants), each item resolved in turn; a constant tuple or list of them.
    Tuple(Vec<Resolved>),
    List(Vec<Resolved>),
    /// A value compiled code cannot use; becomes an error with this message and hint.
    Refused {
        message: String,
        hint: String,
    },
    /// Not a global: builtins are tried next.
    Unknown,
}

/// A function of the host language, compiled from its source text.
#[derive(Clone, Debug)]
pub struct HostFunction {
    /// Identifies the function and its bound `self`: the same key is parsed once.
    pub key: (u64, u64),
    /// The file it is defined in (diagnostics point there).
    pub file: String,
    /// Its source (`inspect.getsource`), indented as in the file.
    pub source: String,
    /// The line of the file its source starts on.
    pub first_line: u32,
    /// The file's line before the source (shown above a diagnostic on the first line; empty
    /// when unknown).
    pub line_before: String,
    /// Where its global names are looked up.
    pub scope: ScopeId,
    /// The name in messages and dumps (`Net.forward`).
    pub qualname: String,
    /// A bound method's `self` (a host object id).
    pub bound_self: Option<u64>,
    /// For a lambda: where its body starts (file line, byte column); `source` is then the
    /// whole statement holding it.
    pub lambda_body: Option<(u32, u32)>,
}

/// Supplies the values of global names, and of attributes of host objects.
pub trait Resolver {
    fn resolve_global(&mut self, scope: ScopeId, name: &str) -> Resolved;

    /// The attribute `attr` of host object `obj` (an id from [`Resolved::Object`] or a bound
    /// method's `self`). `Unknown` means there is no such attribute.
    fn resolve_attr(&mut self, obj: u64, attr: &str) -> Resolved {
        let _ = (obj, attr);
        Resolved::Unknown
    }

    /// The type name of a host object, for messages.
    fn object_type(&mut self, obj: u64) -> String {
        let _ = obj;
        "object".into()
    }
}

/// An attribute of an anfora namespace: `anfora.ops`, `anfora.float32`, `ops.add`.
pub fn namespace_attr(ns: Namespace, attr: &str) -> Option<Resolved> {
    match ns {
        Namespace::Anfora => {
            if attr == "ops" {
                return Some(Resolved::Namespace(Namespace::Ops));
            }
            if attr == "Tensor" {
                return Some(Resolved::Value(Const::Prim(Prim::TensorType)));
            }
            if let Some(p) = Prim::anfora_function(attr) {
                return Some(Resolved::Value(Const::Prim(p)));
            }
            DType::from_name(attr).map(|d| Resolved::Value(Const::DType(d)))
        }
        Namespace::Ops => Prim::op(attr).map(|p| Resolved::Value(Const::Prim(p))),
    }
}

/// Attribute names of a namespace, for "did you mean" hints.
pub fn namespace_names(ns: Namespace) -> Vec<&'static str> {
    match ns {
        Namespace::Anfora => ["ops", "Tensor", "bool_"]
            .into_iter()
            .chain(
                DType::ALL
                    .iter()
                    .filter(|d| **d != DType::Bool)
                    .map(|d| d.name()),
            )
            .chain(Prim::anfora_function_names())
            .collect(),
        Namespace::Ops => Prim::op_names().collect(),
    }
}

struct FunctionEntry {
    def: Rc<ast::FunctionDef>,
    scope: ScopeId,
    qualname: Arc<str>,
    graph: Option<GraphId>,
    /// A bound method's `self`: the first parameter is this constant, not an argument.
    bound_self: Option<Const>,
    /// The parameters whose objects this function writes back to its caller (its variant
    /// for calls by name, see `ssa/write_back.rs`); empty for the function as a value.
    write_back: Rc<[ast::Name]>,
}

/// Where a function looks up the functions it calls, for [`Frontend::write_back_variant`]:
/// its module scope, its `self` (parameter name and host object) and its parameters.
struct Callers<'a> {
    scope: ScopeId,
    this: Option<(ast::Name, u64)>,
    params: &'a [ast::Name],
}

/// The frontend session: the IR module being built, the known functions and the diagnostics.
#[derive(Default)]
pub struct Frontend {
    pub module: Module,
    functions: Vec<FunctionEntry>,
    /// Functions whose graph exists but whose body is not lowered yet.
    pending: Vec<FunctionRef>,
    diags: Vec<Diagnostic>,
    graph_names: HashMap<String, u32>,
    /// Graphs the resolve stage has processed.
    resolved: HashSet<GraphId>,
    /// Host functions parsed so far (None: their source did not parse).
    host_functions: HashMap<(u64, u64), Option<FunctionRef>>,
    /// The variant of each function that writes its arguments back, for calls by name, and
    /// which parameters it writes (None: it updates none of its parameters in place).
    write_back_variants: HashMap<FunctionRef, Option<(FunctionRef, Rc<ownership::Writes>)>>,
    /// The functions whose variant is being decided, with the parameters each updates
    /// itself (what a call back into one of them while that goes on counts).
    write_back_pending: HashMap<FunctionRef, Rc<ownership::Writes>>,
    /// Host objects used as values: the graph each stands for (None: its `__call__` did not
    /// parse; see `resolve::object_value`).
    object_values: HashMap<u64, Option<GraphId>>,
    /// The attribute names compiled code reads through values (`net.w` where `net` is a
    /// parameter), looked up on every object used as a value.
    attr_names: std::collections::BTreeSet<Arc<str>>,
    /// The (object graph, attribute name) pairs looked up so far.
    looked_up: HashSet<(GraphId, Arc<str>)>,
}

impl Frontend {
    pub fn new() -> Frontend {
        Frontend::default()
    }

    /// Adds a source file and parses it. Syntax errors and unsupported constructs are recorded
    /// as diagnostics; the returned module holds everything that could be converted.
    pub fn parse_file(&mut self, name: &str, text: &str) -> ast::Module {
        let file = self.module.sources.add(SourceFile::new(name, text, 0));
        py_ast::parse_module(text, file, self.sink())
    }

    /// Where conversion reports: the diagnostics, and the module's placement blocks.
    fn sink(&mut self) -> py_ast::Sink<'_> {
        py_ast::Sink {
            diags: &mut self.diags,
            placements: &mut self.module.placements,
        }
    }

    pub fn file_text(&self, file: FileId) -> Arc<str> {
        self.module.sources.file(file).text.clone()
    }

    /// Makes a function known; it is lowered when first used.
    pub fn register_function(&mut self, def: Rc<ast::FunctionDef>, scope: ScopeId) -> FunctionRef {
        let qualname = def.name.clone();
        self.register(def, scope, qualname, None)
    }

    fn register(
        &mut self,
        def: Rc<ast::FunctionDef>,
        scope: ScopeId,
        qualname: Arc<str>,
        bound_self: Option<Const>,
    ) -> FunctionRef {
        self.functions.push(FunctionEntry {
            def,
            scope,
            qualname,
            graph: None,
            bound_self,
            write_back: Rc::from([]),
        });
        FunctionRef(self.functions.len() as u32 - 1)
    }

    /// The function for host function `h`, parsed from its source on first request (`None`
    /// if that failed; the diagnostics say why).
    pub fn host_function(&mut self, h: &HostFunction) -> Option<FunctionRef> {
        if let Some(f) = self.host_functions.get(&h.key) {
            return *f;
        }
        let f = self.parse_host_source(h).map(|def| {
            let qualname = Arc::from(h.qualname.as_str());
            let bound = h.bound_self.map(Const::HostObject);
            self.register(def, h.scope, qualname, bound)
        });
        self.host_functions.insert(h.key, f);
        f
    }

    /// The variant of `f` that writes back to its caller the objects of the parameters it
    /// updates in place, for calls of `f` by name, and which those are (among the
    /// positional-or-keyword parameters but a bound `self`). `None` when it updates none.
    ///
    /// A function updates a parameter when it does so itself (`x += v`, `x[i] = v`) or passes
    /// it to a function called by name that updates the parameter it binds. A call back into a
    /// function whose answer is being found out (recursion) counts the parameters that one
    /// updates itself: passing a parameter on to itself changes nothing, and where functions
    /// that call each other pass an array around, a missed update is refused (E0306 at the
    /// call), never lost.
    pub(crate) fn write_back_variant(
        &mut self,
        f: FunctionRef,
        resolver: &mut dyn Resolver,
    ) -> Option<(GraphId, Rc<ownership::Writes>)> {
        let (v, writes) = self.variant(f, resolver)?;
        Some((self.function_graph(v), writes))
    }

    /// [`Frontend::write_back_variant`]'s function, decided once per function.
    fn variant(
        &mut self,
        f: FunctionRef,
        resolver: &mut dyn Resolver,
    ) -> Option<(FunctionRef, Rc<ownership::Writes>)> {
        if let Some(v) = self.write_back_variants.get(&f) {
            return v.clone();
        }
        let entry = &self.functions[f.0 as usize];
        let skip = usize::from(entry.bound_self.is_some());
        let params: Vec<ast::Name> = (entry.def.params.iter().skip(skip))
            .take_while(|p| {
                matches!(
                    p.kind,
                    ast::ParamKind::PositionalOnly | ast::ParamKind::Normal
                )
            })
            .map(|p| p.name.clone())
            .collect();
        let (def, scope, bound) = (entry.def.clone(), entry.scope, entry.bound_self.clone());
        let qualname = entry.qualname.clone();
        let mut written: Vec<bool> = params
            .iter()
            .map(|p| ownership::updates_parameter(&def, p))
            .collect();
        let direct = Rc::new(ownership::Writes {
            params: params.clone(),
            written: written.clone(),
        });
        self.write_back_pending.insert(f, direct);
        let this = match &bound {
            Some(Const::HostObject(id)) => def.params.first().map(|p| (p.name.clone(), *id)),
            _ => None,
        };
        let callers = Callers {
            scope,
            this,
            params: &params,
        };
        for i in self.passed_on(&def, &callers, resolver) {
            written[i] = true;
        }
        self.write_back_pending.remove(&f);
        let variant = written.contains(&true).then(|| {
            let writes = Rc::new(ownership::Writes { params, written });
            let v = self.register(def, scope, qualname, bound);
            self.functions[v.0 as usize].write_back = writes.names().into();
            (v, writes)
        });
        self.write_back_variants.insert(f, variant.clone());
        variant
    }

    /// For `f` called from outside compiled code with arrays its caller wants updated in
    /// place (numpy arrays from Python): its variant that returns the objects of the
    /// parameters it updates with its result (see `write_back_variant`), and their positions
    /// among its parameters (a bound `self` not counted). `None` when it updates none.
    pub fn entry_write_back(
        &mut self,
        f: FunctionRef,
        resolver: &mut dyn Resolver,
    ) -> Option<(FunctionRef, Vec<usize>)> {
        let (v, writes) = self.variant(f, resolver)?;
        let positions = (writes.written.iter().enumerate())
            .filter(|(_, w)| **w)
            .map(|(i, _)| i)
            .collect();
        Some((v, positions))
    }

    /// The function a call by name calls, where it is one: `func` a global name (not a local
    /// of the caller: the caller checks) or a method of the caller's `self` (`this`: its
    /// parameter's name and host object), looked up in module `scope`.
    pub(crate) fn called_function(
        &mut self,
        func: &ast::Expr,
        scope: ScopeId,
        this: Option<(&ast::Name, u64)>,
        resolver: &mut dyn Resolver,
    ) -> Option<FunctionRef> {
        let resolved = match (&func.kind, this) {
            (ast::ExprKind::Name(g), _) => resolver.resolve_global(scope, g),
            (ast::ExprKind::Attribute { value, attr }, Some((name, id))) => match &value.kind {
                ast::ExprKind::Name(base) if base == name => resolver.resolve_attr(id, attr),
                _ => return None,
            },
            _ => return None,
        };
        match resolved {
            Resolved::Function(f) => Some(f),
            Resolved::Source(h) => self.host_function(&h),
            _ => None,
        }
    }

    /// The parameters of `def` it passes to a function called by name (a global function, a
    /// method of its `self`) that updates the parameter they bind.
    fn passed_on(
        &mut self,
        def: &ast::FunctionDef,
        callers: &Callers,
        resolver: &mut dyn Resolver,
    ) -> Vec<usize> {
        let params = callers.params;
        let locals = scope::ScopeInfo::of(def).locals;
        let mut calls: Vec<(ast::Expr, Vec<ast::Expr>, Vec<ast::Keyword>)> = Vec::new();
        flow::calls(&def.body, &mut |func, args, keywords| {
            let passes = (args.iter().chain(keywords.iter().map(|k| &k.value)))
                .any(|a| matches!(&a.kind, ast::ExprKind::Name(n) if params.contains(n)));
            let local = matches!(&func.kind, ast::ExprKind::Name(g) if locals.contains(g));
            if passes && !local {
                calls.push((func.clone(), args.to_vec(), keywords.to_vec()));
            }
        });
        let this = callers.this.as_ref().map(|(n, id)| (n, *id));
        let mut out = Vec::new();
        for (func, args, keywords) in calls {
            let Some(h) = self.called_function(&func, callers.scope, this, resolver) else {
                continue;
            };
            let writes = match self.write_back_pending.get(&h) {
                Some(partial) => Some(partial.clone()),
                None => self.variant(h, resolver).map(|v| v.1),
            };
            let Some(writes) = writes else { continue };
            out.extend(
                (writes.bound(&args, &keywords).into_iter()).filter_map(|(_, e)| match &e.kind {
                    ast::ExprKind::Name(n) => params.iter().position(|p| p == n),
                    _ => None,
                }),
            );
        }
        out
    }

    /// A fresh function for host function `h`, not shared with other uses of `h`: the graph of
    /// a host object used as a value is its own, so that its attributes are read only through
    /// it (a bound method of the same `construct` is another value).
    pub(crate) fn object_function(&mut self, h: &HostFunction) -> Option<FunctionRef> {
        let def = self.parse_host_source(h)?;
        let qualname = Arc::from(h.qualname.as_str());
        let bound = h.bound_self.map(Const::HostObject);
        Some(self.register(def, h.scope, qualname, bound))
    }

    /// Parses the source of one function (Python's `inspect.getsource` of it, decorators
    /// included, indented as in its file) that starts on line `first_line` of file `name`.
    /// Diagnostics point into the real file; `line_before` is the file's line before the
    /// source, shown as context. The function's own decorators are not compiled: Python
    /// already applied them.
    pub fn parse_function_source(
        &mut self,
        name: &str,
        source: &str,
        first_line: u32,
        line_before: &str,
    ) -> Option<Rc<ast::FunctionDef>> {
        let (parsed, file, _) = self.add_host_source(name, source, first_line, line_before);
        py_ast::parse_function(&parsed, file, self.sink())
    }

    /// A host function's definition: its `def`, or the lambda its `lambda_body` points at.
    fn parse_host_source(&mut self, h: &HostFunction) -> Option<Rc<ast::FunctionDef>> {
        let Some((line, col)) = h.lambda_body else {
            return self.parse_function_source(&h.file, &h.source, h.first_line, &h.line_before);
        };
        let (parsed, file, offset) =
            self.add_host_source(&h.file, &h.source, h.first_line, &h.line_before);
        // The byte of `parsed` at the file's (line, col).
        let row = line.saturating_sub(offset + 1) as usize;
        let start: usize = parsed.split_inclusive('\n').take(row).map(str::len).sum();
        py_ast::parse_lambda(&parsed, file, start + col as usize, self.sink())
    }

    /// Registers a host source with the source map; returns the text to parse (an indented
    /// source becomes the body of an `if 1:` on the line before, so that columns stay those
    /// of the file), its file id and its line offset.
    fn add_host_source(
        &mut self,
        name: &str,
        source: &str,
        first_line: u32,
        line_before: &str,
    ) -> (String, FileId, u32) {
        // Diagnostics show the file's real line in place of the `if 1:`: both lines are
        // padded to one length, so that byte offsets agree.
        let indented = source.starts_with([' ', '\t']);
        let (parsed, shown, offset) = if indented {
            let header = "if 1:";
            let before = line_before.trim_end_matches(['\r', '\n']);
            let width = header.len().max(before.len());
            (
                format!("{header:<width$}\n{source}"),
                format!("{before:<width$}\n{source}"),
                first_line.saturating_sub(2),
            )
        } else {
            (
                source.to_string(),
                source.to_string(),
                first_line.saturating_sub(1),
            )
        };
        let file = self
            .module
            .sources
            .add(SourceFile::new(name, shown, offset));
        (parsed, file, offset)
    }

    /// Names of a function's parameters.
    pub fn function_params(&self, f: FunctionRef) -> Vec<String> {
        self.functions[f.0 as usize]
            .def
            .params
            .iter()
            .map(|p| p.name.to_string())
            .collect()
    }

    /// The graph of a function, created (with its signature) on first request; its body is
    /// lowered by the next [`Frontend::lower_pending`].
    pub fn function_graph(&mut self, f: FunctionRef) -> GraphId {
        if let Some(g) = self.functions[f.0 as usize].graph {
            return g;
        }
        let def = self.functions[f.0 as usize].def.clone();
        let qualname = self.functions[f.0 as usize].qualname.clone();
        let g = self.new_function_graph(&def, &qualname, GraphKind::Function);
        if self.functions[f.0 as usize].bound_self.is_some()
            && let Some(sig) = self.module.graphs[g].signature.as_mut()
            && !sig.params.is_empty()
        {
            // `self` is bound: callers pass the remaining arguments.
            sig.params.remove(0);
            sig.posonly = sig.posonly.saturating_sub(1);
        }
        self.functions[f.0 as usize].graph = Some(g);
        self.pending.push(f);
        g
    }

    /// Whether some function's graph exists but its body is not lowered yet.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Whether `g` is the graph of a function whose body is not lowered yet.
    fn is_unlowered(&self, g: GraphId) -> bool {
        self.pending
            .iter()
            .any(|f| self.functions[f.0 as usize].graph == Some(g))
    }

    /// Lowers every function whose graph was requested but not built yet.
    pub fn lower_pending(&mut self, resolver: &mut dyn Resolver) {
        while let Some(f) = self.pending.pop() {
            let entry = &self.functions[f.0 as usize];
            let (def, scope, qualname) = (entry.def.clone(), entry.scope, entry.qualname.clone());
            let bound_self = entry.bound_self.clone();
            let write_back = entry.write_back.clone();
            let graph = entry.graph.expect("pending functions have graphs");
            let lowered = ssa::Lowered {
                graph,
                qualname,
                bound_self,
                write_back,
            };
            ssa::build_function(self, resolver, def, scope, lowered);
        }
    }

    /// The parse stage for one function: its body (and its nested functions) as graphs whose
    /// global names are still `Symbol`s.
    pub fn parse_function(&mut self, f: FunctionRef, resolver: &mut dyn Resolver) -> GraphId {
        let g = self.function_graph(f);
        self.lower_pending(resolver);
        g
    }

    /// The resolve stage: binds the global names of every graph reachable from `roots`,
    /// parsing the functions they use on demand, and binds call arguments.
    pub fn resolve(&mut self, roots: &[GraphId], resolver: &mut dyn Resolver) {
        resolve::resolve(self, resolver, roots);
    }

    /// Parses and resolves a function and everything it reaches.
    pub fn compile_function(&mut self, f: FunctionRef, resolver: &mut dyn Resolver) -> GraphId {
        let g = self.parse_function(f, resolver);
        self.resolve(&[g], resolver);
        g
    }

    /// Compiles a module-level expression (the right side of `N = ...`) into a graph without
    /// parameters, for the loader to evaluate.
    pub fn compile_expr(
        &mut self,
        expr: &ast::Expr,
        scope: ScopeId,
        resolver: &mut dyn Resolver,
    ) -> GraphId {
        let def = Rc::new(ast::FunctionDef {
            name: Arc::from("<module>"),
            params: Vec::new(),
            body: vec![ast::Stmt {
                kind: ast::StmtKind::Return(Some(expr.clone())),
                span: expr.span,
            }],
            span: expr.span,
            head_span: expr.span,
            is_lambda: false,
        });
        let qualname: Arc<str> = Arc::from("<module>");
        let g = self.new_function_graph(&def, &qualname, GraphKind::ModuleInit);
        let lowered = ssa::Lowered {
            graph: g,
            qualname,
            bound_self: None,
            write_back: Rc::from([]),
        };
        ssa::build_function(self, resolver, def, scope, lowered);
        self.lower_pending(resolver);
        self.resolve(&[g], resolver);
        g
    }

    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diags
    }

    pub fn has_errors(&self) -> bool {
        !self.diags.is_empty()
    }

    pub fn take_diagnostics(&mut self) -> Vec<Diagnostic> {
        std::mem::take(&mut self.diags)
    }

    pub fn push_diagnostic(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// A graph name not used yet in the module (`f`, `f_1`, ...), so dumps are unambiguous.
    fn unique_name(&mut self, base: &str) -> String {
        let n = self.graph_names.entry(base.to_string()).or_insert(0);
        *n += 1;
        if *n == 1 {
            base.to_string()
        } else {
            format!("{base}_{}", *n - 1)
        }
    }

    fn new_function_graph(
        &mut self,
        def: &ast::FunctionDef,
        qualname: &Arc<str>,
        kind: GraphKind,
    ) -> GraphId {
        let name = self.unique_name(&def.name);
        let kind = if def.is_lambda {
            GraphKind::Lambda
        } else {
            kind
        };
        let g = self
            .module
            .add_graph(name, def.name.clone(), kind, def.span);
        let signature = self.signature(def, qualname);
        self.module.graphs[g].signature = Some(signature);
        g
    }

    fn signature(&mut self, def: &ast::FunctionDef, qualname: &str) -> anfora_ir::Signature {
        let mut params = Vec::new();
        let mut kwonly = Vec::new();
        let mut posonly = 0;
        let mut varargs = false;
        let mut packs_keywords = false;
        for p in &def.params {
            let default = p.default.as_ref().map(|d| match const_eval(d) {
                Some(c) => c,
                None => {
                    self.diags.push(
                        Diagnostic::error(
                            codes::DEFAULT,
                            format!("default value of parameter '{}' is not a literal", p.name),
                            d.span,
                        )
                        .with_label("not a literal")
                        .with_hint(
                            "defaults must be literals (numbers, strings, None, True/False or tuples of them); pass other values as arguments",
                        ),
                    );
                    Const::None
                }
            });
            let param = Param {
                name: p.name.clone(),
                default,
            };
            match p.kind {
                ast::ParamKind::PositionalOnly => {
                    posonly += 1;
                    params.push(param);
                }
                ast::ParamKind::Normal => params.push(param),
                ast::ParamKind::VarPositional => varargs = true,
                ast::ParamKind::KeywordOnly => kwonly.push(param),
                ast::ParamKind::VarKeyword => packs_keywords = true,
            }
        }
        let mut sig = anfora_ir::Signature::new(qualname, params, varargs, kwonly);
        sig.posonly = posonly;
        sig.packs = varargs;
        sig.packs_keywords = packs_keywords;
        sig
    }
}
