//! CPython's builtins, so that a builtin compiled code lacks is reported as not supported
//! rather than as an undefined name, and a call that CPython's builtin accepts but anfora's
//! does not is reported as not supported rather than as wrong.

/// The public names of CPython 3.11's `builtins` module.
#[rustfmt::skip]
const NAMES: &[&str] = &[
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException",
    "BaseExceptionGroup", "BlockingIOError", "BrokenPipeError", "BufferError",
    "BytesWarning", "ChildProcessError", "ConnectionAbortedError", "ConnectionError",
    "ConnectionRefusedError", "ConnectionResetError", "DeprecationWarning", "EOFError",
    "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception", "ExceptionGroup",
    "False", "FileExistsError", "FileNotFoundError", "FloatingPointError", "FutureWarning",
    "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError",
    "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
    "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "None",
    "NotADirectoryError", "NotImplemented", "NotImplementedError", "OSError",
    "OverflowError", "PendingDeprecationWarning", "PermissionError", "ProcessLookupError",
    "RecursionError", "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning",
    "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError",
    "SystemExit", "TabError", "TimeoutError", "True", "TypeError", "UnboundLocalError",
    "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError",
    "UnicodeWarning", "UserWarning", "ValueError", "Warning", "ZeroDivisionError", "abs",
    "aiter", "all", "anext", "any", "ascii", "bin", "bool", "breakpoint", "bytearray",
    "bytes", "callable", "chr", "classmethod", "compile", "complex", "copyright", "credits",
    "delattr", "dict", "dir", "divmod", "enumerate", "eval", "exec", "exit", "filter",
    "float", "format", "frozenset", "getattr", "globals", "hasattr", "hash", "help", "hex",
    "id", "input", "int", "isinstance", "issubclass", "iter", "len", "license", "list",
    "locals", "map", "max", "memoryview", "min", "next", "object", "oct", "open", "ord",
    "pow", "print", "property", "quit", "range", "repr", "reversed", "round", "set",
    "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "type",
    "vars", "zip",
];

/// Whether `name` is one of CPython's builtins.
pub fn is_python_builtin(name: &str) -> bool {
    NAMES.contains(&name)
}

/// CPython's own parameter lists of the builtins whose anfora version takes fewer parameters.
const WIDER: &[(&str, &str)] = &[
    ("pow", "(base, exp, mod=None)"),
    (
        "print",
        "(*values, sep=' ', end='\\n', file=None, flush=False)",
    ),
    ("min", "(*args, key=None, default=None)"),
    ("max", "(*args, key=None, default=None)"),
    ("sum", "(iterable, start=0)"),
    ("int", "(x=0, base=10)"),
    ("str", "(object='', encoding='utf-8', errors='strict')"),
    ("enumerate", "(iterable, start=0)"),
    ("zip", "(*iterables, strict=False)"),
];

/// Whether CPython's builtin `name` accepts a call with `positional` positional arguments and
/// the keyword arguments `keywords`.
pub fn cpython_accepts(name: &str, positional: usize, keywords: &[&str]) -> bool {
    let Some((_, params)) = WIDER.iter().find(|(n, _)| *n == name) else {
        return false;
    };
    anfora_ir::Signature::parse(name, params)
        .is_ok_and(|sig| sig.bind(positional, keywords).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wider_signatures_parse_and_bind() {
        assert!(cpython_accepts("pow", 3, &[]));
        assert!(cpython_accepts("print", 1, &["flush"]));
        assert!(!cpython_accepts("pow", 4, &[]));
        assert!(!cpython_accepts("len", 2, &[]));
        for (name, params) in WIDER {
            assert!(anfora_ir::Signature::parse(name, params).is_ok(), "{name}");
            assert!(is_python_builtin(name));
        }
        assert!(is_python_builtin("round") && is_python_builtin("ValueError"));
        assert!(!is_python_builtin("ops"));
    }
}
