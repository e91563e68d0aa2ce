//! Functions compiled from their source text with a host resolver (the Python package's
//! path): positions in the real file, bound `self`, attributes folded through the resolver,
//! calls of objects, and refusals.

use anfora_front::{Frontend, HostFunction, Resolved, Resolver, ScopeId};
use anfora_ir::diag::Diagnostic;
use anfora_ir::{Const, GraphId};

/// Object 0 is `self`, with `w` = 2.0, a method `double` and a sub-object `layer` (object 1)
/// whose `__call__` is `scale`; `LOCK` is a value compiled code cannot use.
struct Host;

const FILE: &str = "/src/model.py";

const METHOD: &str =
    "    def forward(self, x):\n        return self.double(x) * self.w + self.layer(x)\n";
const DOUBLE: &str = "    def double(self, x):\n        return x + x\n";
const SCALE: &str = "    def scale(self, x):\n        return x * 3\n";

fn method(source: &str, line: u32, name: &str, obj: u64, key: u64) -> HostFunction {
    HostFunction {
        key: (key, obj),
        file: FILE.into(),
        source: source.into(),
        first_line: line,
        line_before: "class Net:".into(),
        scope: ScopeId(0),
        qualname: format!("Net.{name}"),
        bound_self: Some(obj),
        lambda_body: None,
    }
}

impl Resolver for Host {
    fn resolve_global(&mut self, _scope: ScopeId, name: &str) -> Resolved {
        match name {
            "LOCK" => Resolved::Refused {
                message: "global 'LOCK' is a 'lock' object".into(),
                hint: "pass it in".into(),
            },
            _ => Resolved::Unknown,
        }
    }

    fn resolve_attr(&mut self, obj: u64, attr: &str) -> Resolved {
        match (obj, attr) {
            (0, "w") => Resolved::Value(Const::Float(2.0)),
            (0, "double") => Resolved::Source(Box::new(method(DOUBLE, 20, "double", 0, 2))),
            (0, "layer") => Resolved::Object(1),
            (1, "__call__") => Resolved::Source(Box::new(method(SCALE, 30, "scale", 1, 3))),
            _ => Resolved::Unknown,
        }
    }

    fn object_type(&mut self, obj: u64) -> String {
        ["Net", "Layer"][obj as usize].into()
    }
}

fn compile(fe: &mut Frontend, h: &HostFunction) -> Option<GraphId> {
    let f = fe.host_function(h)?;
    Some(fe.compile_function(f, &mut Host))
}

fn location(fe: &Frontend, d: &Diagnostic) -> String {
    let (file, at) = fe.module.sources.location(d.span).expect("a located span");
    format!("{}:{}:{}", file.name, at.line, at.col)
}

#[test]
fn bound_methods_fold_self_attributes_and_calls_of_objects() {
    let mut fe = Frontend::new();
    let g = compile(&mut fe, &method(METHOD, 10, "forward", 0, 1)).unwrap();
    assert!(fe.diagnostics().is_empty(), "{:?}", fe.diagnostics());
    anfora_ir::verify::assert_valid(&fe.module, &[g], "test");
    // `self` is bound: the graph takes only `x`.
    assert_eq!(fe.module.graph(g).params.len(), 1);
    let sig = fe.module.graph(g).signature.as_ref().unwrap();
    assert_eq!(sig.params.len(), 1);
    assert_eq!(&*sig.params[0].name, "x");
    // double(x) * 2.0 + scale(x): the methods are graphs of their own, called directly.
    let text = anfora_ir::print::print_module(&fe.module, g);
    assert!(
        !text.contains("GetAttr"),
        "every attribute is folded:\n{text}"
    );
    assert!(text.contains("Mul(%0, F64(2.0))"), "{text}");
    assert!(text.contains("Add(%para2_x, %para2_x)") && text.contains("Mul(%para3_x, I64(3))"));
    for name in ["@forward", "@double", "@scale"] {
        assert!(
            text.contains(&format!("subgraph {name}(")),
            "{name}:\n{text}"
        );
    }
    assert!(text.contains("/src/model.py:11:"), "{text}");
}

#[test]
fn positions_are_those_of_the_real_file_for_indented_functions() {
    let mut fe = Frontend::new();
    let src = "    def forward(self, x):\n        try:\n            pass\n        finally:\n            pass\n        return self.missing + LOCK\n";
    assert!(compile(&mut fe, &method(src, 40, "forward", 0, 9)).is_some());
    let diags = fe.diagnostics().to_vec();
    let found: Vec<(String, String)> = diags
        .iter()
        .map(|d| (d.code.to_string(), location(&fe, d)))
        .collect();
    assert!(
        found.contains(&("E0101".into(), "/src/model.py:41:9".into())),
        "{found:?}"
    );
    let mut fe = Frontend::new();
    let src = "    def forward(self, x):\n        return self.missing + LOCK\n";
    compile(&mut fe, &method(src, 40, "forward", 0, 9));
    let found: Vec<(String, String, String)> = fe
        .diagnostics()
        .iter()
        .map(|d| (d.code.to_string(), location(&fe, d), d.message.clone()))
        .collect();
    assert_eq!(
        found,
        vec![
            (
                "E0209".into(),
                "/src/model.py:41:31".into(),
                "global 'LOCK' is a 'lock' object".into()
            ),
            (
                "E0206".into(),
                "/src/model.py:41:16".into(),
                "'Net' object has no attribute 'missing'".into()
            ),
        ]
    );
}

#[test]
fn objects_used_as_values_become_graphs_with_their_attributes() {
    // `self` (a Net, which has no `__call__`) in a tuple and captured by a nested function;
    // `self.layer` (a Layer, whose `__call__` is `scale`) passed to a function reading `w`.
    let mut fe = Frontend::new();
    let src = "def f(self, x):\n    def use(o, x):\n        return o(x) + o.w + o.other\n    def g():\n        return (x, self)\n    return use(self.layer, x), g()\n";
    let h = method(src, 5, "f", 0, 12);
    let g = compile(&mut fe, &h).unwrap();
    assert!(fe.diagnostics().is_empty(), "{:?}", fe.diagnostics());
    anfora_ir::verify::assert_valid(&fe.module, &[g], "test");
    let mut objects: Vec<(&str, Vec<(&str, bool)>)> = (fe.module.objects.values())
        .map(|o| {
            let mut attrs: Vec<(&str, bool)> =
                o.attrs.iter().map(|(k, v)| (&**k, v.is_ok())).collect();
            attrs.sort();
            (&*o.type_name, attrs)
        })
        .collect();
    objects.sort();
    // Every name read through a value is looked up on every object; `other` exists on none.
    assert_eq!(objects, vec![("Layer", vec![]), ("Net", vec![("w", true)])]);
    let text = anfora_ir::print::print_module(&fe.module, g);
    assert!(
        text.contains("Raise(\"TypeError\", \"'Net' object is not callable\")"),
        "{text}"
    );
    assert!(text.contains("subgraph @scale("), "{text}");
}

#[test]
fn a_source_without_a_def_is_an_error_and_parsed_once() {
    let mut fe = Frontend::new();
    let h = HostFunction {
        key: (7, u64::MAX),
        file: FILE.into(),
        source: "f = jit(lambda x: x)\n".into(),
        first_line: 3,
        line_before: String::new(),
        scope: ScopeId(0),
        qualname: "<lambda>".into(),
        bound_self: None,
        lambda_body: None,
    };
    assert!(fe.host_function(&h).is_none());
    assert!(
        fe.diagnostics()[0]
            .message
            .contains("only functions defined with `def`")
    );
    let n = fe.diagnostics().len();
    assert!(fe.host_function(&h).is_none());
    assert_eq!(fe.diagnostics().len(), n, "parsed once");
}
