#!/usr/bin/env python3
"""Static check that corpus programs stay inside anfora's Python subset.

Usage:  check_subset.py FILE_OR_DIR [...]     (exit status 1 on any violation)

It is a guard for corpus authors, not a full validator: it rejects the
constructs the subset excludes (classes, try, comprehensions, dicts other than
displays with string keys, f-strings, string/list methods, unsupported builtins,
...). Closures are anfora's business (late binding through cells), and the
differential test fails on any program it refuses.
"""

import ast
import os
import sys

BUILTINS = {
    "range", "len", "abs", "min", "max", "int", "float", "bool", "str", "repr",
    "tuple", "list", "print", "enumerate", "zip", "isinstance", "divmod", "sum",
    "any", "all", "dict",
}
TYPE_NAMES = {"int", "float", "bool", "str", "tuple", "list"}
TENSOR_METHODS = {"sum", "mean", "max", "min", "prod", "reshape", "transpose", "permute", "astype",
                  "item"}
# Methods of Parameters (the update primitives).
PARAMETER_METHODS = {"assign", "assign_add", "assign_sub"}
# Methods of dicts (string keys only).
DICT_METHODS = {"get", "items", "keys", "values"}
TENSOR_ATTRS = {"shape", "dtype", "ndim", "size", "T"}
ANFORA_ATTRS = {"ops", "Tensor", "float16", "float32", "float64", "int32", "int64", "bool_",
                "Parameter", "set_seed"}
FORBIDDEN = {
    ast.ClassDef: "class", ast.Try: "try", ast.Raise: "raise", ast.With: "with",
    ast.Yield: "yield", ast.YieldFrom: "yield from", ast.ListComp: "comprehension",
    ast.SetComp: "comprehension", ast.DictComp: "comprehension",
    ast.GeneratorExp: "generator expression", ast.Set: "set",
    ast.Global: "global", ast.AsyncFunctionDef: "async",
    ast.Await: "await", ast.NamedExpr: "walrus", ast.JoinedStr: "f-string",
    ast.Delete: "del", ast.Match: "match",
}


def _is_constant(node):
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _is_constant(node.operand)
    if isinstance(node, ast.Tuple):
        return all(_is_constant(e) for e in node.elts)
    return False


class Checker(ast.NodeVisitor):
    def __init__(self, path):
        self.path = path
        self.errors = []
        self.module_aliases = set()  # names bound to the anfora module / ops
        self.parents = {}

    def err(self, node, msg):
        self.errors.append("%s:%d: %s" % (self.path, getattr(node, "lineno", 0), msg))

    def run(self, tree):
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        for stmt in tree.body:
            self.check_module_stmt(stmt)
        self.visit(tree)
        return self.errors

    # -- module level ---------------------------------------------------------
    def check_module_stmt(self, stmt):
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if a.name != "anfora":
                    self.err(stmt, "import of " + a.name)
                self.module_aliases.add(a.asname or a.name)
        elif isinstance(stmt, ast.ImportFrom):
            if stmt.module != "anfora":
                self.err(stmt, "import from " + str(stmt.module))
            for a in stmt.names:
                self.module_aliases.add(a.asname or a.name)
        elif isinstance(stmt, (ast.FunctionDef, ast.Assign, ast.AnnAssign)):
            pass
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            pass  # docstring
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            pass  # runs when the module loads (anfora.set_seed(0))
        elif isinstance(stmt, ast.If) and "__name__" in ast.dump(stmt.test):
            pass
        else:
            self.err(stmt, "module-level " + type(stmt).__name__)

    # -- generic ----------------------------------------------------------------
    def generic_visit(self, node):
        for kind, name in FORBIDDEN.items():
            if isinstance(node, kind):
                self.err(node, "unsupported construct: " + name)
        super().generic_visit(node)

    def visit_FunctionDef(self, node):
        self.check_arguments(node, node.args)
        self.generic_visit(node)

    def visit_Lambda(self, node):
        if node.args.defaults or node.args.kw_defaults:
            self.err(node, "lambda with defaults")
        self.check_arguments(node, node.args)
        self.generic_visit(node)

    def check_arguments(self, node, args):
        if args.posonlyargs:
            self.err(node, "positional-only parameters")
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            if a.annotation is not None:
                self.err(node, "parameter annotation")
        if getattr(node, "returns", None) is not None:
            self.err(node, "return annotation")
        for d in args.defaults + [d for d in args.kw_defaults if d is not None]:
            if not _is_constant(d):
                self.err(node, "non-constant default value")

    def visit_For(self, node):
        if node.orelse:
            self.err(node, "for ... else")
        self.generic_visit(node)

    def visit_While(self, node):
        if node.orelse:
            self.err(node, "while ... else")
        self.generic_visit(node)

    def visit_Assign(self, node):
        for t in node.targets:
            self.check_target(t)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if not isinstance(node.target, (ast.Name, ast.Subscript)):
            self.err(node, "augmented assignment to " + type(node.target).__name__)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if node.value is None or not isinstance(node.target, ast.Name):
            self.err(node, "annotated assignment without value / to non-name")
        self.generic_visit(node)

    def check_target(self, t):
        if isinstance(t, (ast.Tuple, ast.List)):
            starred = [e for e in t.elts if isinstance(e, ast.Starred)]
            if len(starred) > 1:
                self.err(t, "more than one starred target in a tuple")
            for e in t.elts:
                # `*name` (checked by visit_Starred) takes the items the others leave.
                if not isinstance(e, ast.Starred):
                    self.check_target(e)
        elif isinstance(t, ast.Subscript):
            # `x[i] = v`, `self.w[i] = v`, and `x[i][j] = v` through the view `x[i]`.
            root = t.value
            while isinstance(root, ast.Subscript):
                root = root.value
            if not isinstance(root, (ast.Name, ast.Attribute)):
                self.err(t, "assignment to an item of something other than a variable")
        elif not isinstance(t, ast.Name):
            self.err(t, "assignment to " + type(t).__name__)

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.Mod) and isinstance(node.left, ast.Constant) \
                and isinstance(node.left.value, str):
            self.err(node, "%-formatting")
        self.generic_visit(node)

    def visit_Compare(self, node):
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Is, ast.IsNot)):
                if not (isinstance(right, ast.Constant)
                        and any(right.value is v for v in (None, True, False))):
                    self.err(node, "`is` against something other than None/True/False")
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if node.attr.startswith("__"):
            self.err(node, "dunder attribute " + node.attr)
        base = node.value
        is_module = isinstance(base, ast.Name) and base.id in self.module_aliases \
            and base.id != "ops"
        if is_module and node.attr not in ANFORA_ATTRS:
            self.err(node, "unknown anfora attribute " + node.attr)
        parent = self.parents.get(node)
        called = isinstance(parent, ast.Call) and parent.func is node
        if called and not self.is_ops_ref(base) and not is_module \
                and node.attr not in TENSOR_METHODS | PARAMETER_METHODS | DICT_METHODS:
            self.err(node, "method call ." + node.attr + "()")
        if not called and not is_module and not self.is_ops_ref(base) \
                and node.attr not in TENSOR_ATTRS and node.attr not in ANFORA_ATTRS:
            self.err(node, "attribute ." + node.attr)
        self.generic_visit(node)

    def is_ops_ref(self, node):
        if isinstance(node, ast.Name):
            return node.id == "ops" and "ops" in self.module_aliases
        return isinstance(node, ast.Attribute) and node.attr == "ops"

    def visit_Starred(self, node):
        parent = self.parents.get(node)
        in_call = isinstance(parent, ast.Call) and node in parent.args
        in_display = isinstance(parent, (ast.Tuple, ast.List))
        if isinstance(node.ctx, ast.Store):
            if not (in_display and isinstance(node.value, ast.Name)):
                self.err(node, "a starred target other than a name in a tuple")
        elif not (in_call or in_display):
            self.err(node, "star-unpacking outside a call's arguments or a display")
        self.generic_visit(node)

    def visit_Dict(self, node):
        for k in node.keys:
            if k is not None and not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                self.err(node, "a dict key other than a string literal")
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name):
            if f.id in ("enumerate", "zip"):
                parent = self.parents.get(node)
                ok = (isinstance(parent, ast.For) and parent.iter is node) or (
                    isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
                    and parent.func.id in ("tuple", "list"))
                if not ok:
                    self.err(node, f.id + "() outside a for header / tuple() / list()")
        self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in (
                "round", "sorted", "map", "filter", "type", "id", "hash", "open",
                "set", "iter", "next", "reversed", "getattr", "setattr",
                "eval", "exec", "globals", "locals", "vars", "input", "format", "chr",
                "ord", "pow", "callable", "hasattr", "object", "super", "property",
                "Exception", "ValueError", "TypeError"):
            self.err(node, "unsupported builtin " + node.id)
        self.generic_visit(node)


def check_file(path):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        tree = ast.parse(source, path)
    except SyntaxError as e:
        return ["%s: SyntaxError: %s" % (path, e)]
    errors = Checker(path).run(tree)
    if not any(isinstance(s, ast.FunctionDef) and s.name == "main" for s in tree.body):
        errors.append(path + ": no module-level main()")
    return errors


def main(argv):
    files = []
    for p in argv:
        if os.path.isdir(p):
            files.extend(os.path.join(p, e) for e in sorted(os.listdir(p)) if e.endswith(".py"))
        else:
            files.append(p)
    errors = []
    for f in files:
        errors.extend(check_file(f))
    for e in errors:
        print(e)
    print("%d files, %d problems" % (len(files), len(errors)), file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
