//! Stable diagnostic codes of every stage. `docs/errors.md` documents each one; a test keeps
//! the two in step.

/// (code, one-line description)
pub const CODES: &[(&str, &str)] = &[
    (SYNTAX, "Python syntax error"),
    (SYNTAX_VERSION, "syntax newer than Python 3.11"),
    (TRY, "try/except/finally"),
    (CLASS, "class definition"),
    (GENERATOR, "generator (yield, yield from)"),
    (GLOBAL, "global/nonlocal declaration"),
    (LOOP_ELSE, "else clause on a for or while loop"),
    (ASYNC, "async/await"),
    (WITH, "with statement"),
    (MATCH, "match statement"),
    (
        STAR,
        "star-arguments, *args/**kwargs parameters, starred expressions",
    ),
    (COMPREHENSION, "comprehension or generator expression"),
    (DICT_SET, "dict or set display"),
    (DEL, "del statement"),
    (RAISE, "raise statement"),
    (
        IMPORT,
        "import inside a function, or of a module other than anfora",
    ),
    (DECORATOR, "decorator"),
    (WALRUS, "assignment expression (:=)"),
    (FSTRING, "f-string or t-string"),
    (ITEM_ASSIGN, "assignment to a subscript or attribute"),
    (MODULE_STMT, "statement not allowed at module level"),
    (
        LITERAL,
        "unsupported literal (bytes, complex, integer beyond 64 bits, ...)",
    ),
    (
        IS,
        "`is` comparison with something other than None, True or False",
    ),
    (OUTSIDE_LOOP, "break/continue outside a loop"),
    (
        UNSUPPORTED_BUILTIN,
        "a Python builtin, or a form of its call, that compiled code does not support",
    ),
    (UNDEFINED, "undefined name"),
    (
        LATE_BINDING,
        "closure would see a different value than Python's late binding",
    ),
    (BAD_CALL, "wrong arguments for a known function"),
    (
        ITERATOR,
        "enumerate/zip used outside a for loop header or tuple()/list()",
    ),
    (DEFAULT, "default parameter value that is not a literal"),
    (
        NO_ATTRIBUTE,
        "no such attribute in the anfora namespace or on a Python object",
    ),
    (MODULE_VALUE, "a module used as a value"),
    (
        MODULE_INIT,
        "module-level value that cannot be a compile-time constant",
    ),
    (
        HOST_VALUE,
        "a Python value compiled code cannot use (global, closure cell or attribute)",
    ),
    (
        OBJECT_VALUE,
        "a Python object (such as a method's `self`) used as a value",
    ),
    (SHAPE, "tensor operation whose shapes or dtypes do not fit"),
    (
        JOIN,
        "paths (branches, loop iterations) giving different types or shapes",
    ),
    (NO_FIXPOINT, "type inference did not converge"),
    (
        NOT_CONSTANT,
        "an argument that must be known at compile time (ops.pad's mode) is not",
    ),
    (
        UNBOUNDED,
        "a recursive function whose result or argument nests tuples or lists without bound",
    ),
    (
        SHARED_UPDATE,
        "in-place update of an array or list that something else may hold",
    ),
    (
        EFFECT_KW_CALL,
        "keyword call of an effectful function known only at run time",
    ),
    (
        GRAD_UNKNOWN_FUNCTION,
        "grad of a function not known at compile time",
    ),
    (NO_BACKWARD_RULE, "primitive without a backward rule"),
    (GRAD_ARGUMENT, "bad argnums, weights or jvp primals"),
    (EXPORT, "a program a model file cannot hold"),
    (ONNX_EXPORT, "a construct ONNX export cannot express"),
];

pub const SYNTAX: &str = "E0001";
pub const SYNTAX_VERSION: &str = "E0002";
pub const TRY: &str = "E0101";
pub const CLASS: &str = "E0102";
pub const GENERATOR: &str = "E0103";
pub const GLOBAL: &str = "E0104";
pub const LOOP_ELSE: &str = "E0105";
pub const ASYNC: &str = "E0106";
pub const WITH: &str = "E0107";
pub const MATCH: &str = "E0108";
pub const STAR: &str = "E0109";
pub const COMPREHENSION: &str = "E0110";
pub const DICT_SET: &str = "E0111";
pub const DEL: &str = "E0112";
pub const RAISE: &str = "E0113";
pub const IMPORT: &str = "E0114";
pub const DECORATOR: &str = "E0115";
pub const WALRUS: &str = "E0116";
pub const FSTRING: &str = "E0117";
pub const ITEM_ASSIGN: &str = "E0118";
pub const MODULE_STMT: &str = "E0119";
pub const LITERAL: &str = "E0120";
pub const IS: &str = "E0121";
pub const OUTSIDE_LOOP: &str = "E0123";
pub const UNSUPPORTED_BUILTIN: &str = "E0124";
pub const UNDEFINED: &str = "E0201";
pub const LATE_BINDING: &str = "E0202";
pub const BAD_CALL: &str = "E0203";
pub const ITERATOR: &str = "E0204";
pub const DEFAULT: &str = "E0205";
pub const NO_ATTRIBUTE: &str = "E0206";
pub const MODULE_VALUE: &str = "E0207";
pub const MODULE_INIT: &str = "E0208";
pub const HOST_VALUE: &str = "E0209";
pub const OBJECT_VALUE: &str = "E0210";
// Inference (anfora-infer).
pub const SHAPE: &str = "E0301";
pub const JOIN: &str = "E0302";
pub const NO_FIXPOINT: &str = "E0303";
pub const NOT_CONSTANT: &str = "E0304";
pub const UNBOUNDED: &str = "E0305";
/// Also written in `Prim::SharedUpdate`'s declaration (anfora-ops is below this crate).
pub const SHARED_UPDATE: &str = "E0306";
// Auto-monad (anfora-monad).
pub const EFFECT_KW_CALL: &str = "E0401";
// Automatic differentiation (anfora-ad).
pub const GRAD_UNKNOWN_FUNCTION: &str = "E0501";
pub const NO_BACKWARD_RULE: &str = "E0502";
pub const GRAD_ARGUMENT: &str = "E0503";
// Export to a model file (anfora-model).
pub const EXPORT: &str = "E0601";
// ONNX export (anfora-onnx).
pub const ONNX_EXPORT: &str = "E0602";
