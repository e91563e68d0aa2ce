#!/usr/bin/env python3
"""Random differential programs: a deterministic generator of programs in anfora's subset.

Generate:
    gen_programs.py --seed S --count N --out DIR [--per-file K]
writes ``DIR/gen_XXXX.py``, each holding K independent cases (``case_0 .. case_{K-1}``, default
K=50), the helper functions they use and a ``main()`` that prints ``case i <value>`` for each
case in order. N counts cases, so ``--count 2000`` gives 40 files. The same seed gives
byte-identical files.

Check:
    gen_programs.py --check --seed S --count N [--anfora BIN] [--jobs J] [--keep DIR]
generates into a temporary directory, runs the CPython side once over it (``run_cpython.py``
with the oracle in ``tests/oracle``), runs ``anfora run`` on every file with both engines and
compares stdout (with the result's repr appended) and the exception line exactly as
``crates/anfora-cli/tests/differential.rs`` does. It prints a summary and exits 1 on any
refusal (an anfora compile error) or mismatch; the failing files are kept.

Every case is built so that it never raises under CPython: ints are kept small (``% 1000``),
divisions are by nonzero literals, loops and recursion are bounded, a variable keeps one type,
and tensors updated in place are fresh arrays that nothing else holds.

A program anfora refuses or computes differently is a bug to fix in anfora, not a construct to
leave out here.
"""

import argparse
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
ORACLE = os.path.join(ROOT, "tests", "oracle")

# ---------------------------------------------------------------------------------------------
# Expressions


INT_LITS = list(range(-9, 30))
FLOAT_LITS = ["0.5", "1.25", "2.0", "3.5", "-1.5", "0.1", "0.3", "7.0", "-2.25", "10.0"]
MODS = [2, 3, 5, 7, 10, 13, 97, 1000]


class Env:
    """Variables in scope with their types ('int', 'float', 'bool', 'tuple', 'str')."""

    def __init__(self, names=None, ro=()):
        self.vars = dict(names or {})
        self.ro = set(ro)  # loop counters and loop variables: read, never assigned

    def of(self, ty):
        return sorted(n for n, t in self.vars.items() if t == ty)

    def writable(self, ty):
        return [n for n in self.of(ty) if n not in self.ro]

    def child(self, extra=None):
        e = Env(self.vars, self.ro)
        e.vars.update(extra or {})
        e.ro.update(extra or {})
        return e


class Expr:
    def __init__(self, rng):
        self.r = rng

    def lit_int(self):
        return str(self.r.choice(INT_LITS))

    def int_e(self, env, d=2):
        r = self.r
        vs = env.of("int")
        if d <= 0 or r.random() < 0.25:
            if vs and r.random() < 0.7:
                return r.choice(vs)
            v = self.lit_int()
            return "(%s)" % v if v.startswith("-") else v
        k = r.randrange(14)
        if k <= 2:
            op = r.choice(["+", "-", "*"])
            return "(%s %s %s)" % (self.int_e(env, d - 1), op, self.int_e(env, d - 1))
        if k == 3:
            return "(%s %% %d)" % (self.int_e(env, d - 1), r.choice(MODS))
        if k == 4:
            return "(%s // %d)" % (self.int_e(env, d - 1), r.choice([2, 3, 4, 7, -3]))
        if k == 5:
            return "abs(%s)" % self.int_e(env, d - 1)
        if k == 6:
            return "%s(%s, %s)" % (r.choice(["min", "max"]), self.int_e(env, d - 1),
                                   self.int_e(env, d - 1))
        if k == 7:
            return "(%s if %s else %s)" % (self.int_e(env, d - 1), self.bool_e(env, d - 1),
                                           self.int_e(env, d - 1))
        if k == 8:
            ts = env.of("tuple")
            if ts:
                t = r.choice(ts)
                return r.choice(["len(%s)" % t, "%s[%d]" % (t, r.choice([0, -1])),
                                 "sum(%s)" % t, "max(%s)" % t])
            return "int(%s)" % self.float_e(env, d - 1)
        if k == 9:
            return "(%s %% 5) ** %d" % (self.int_e(env, d - 1), r.choice([0, 1, 2, 3]))
        if k == 10:
            return "int(%s)" % self.float_e(env, d - 1)
        if k == 11:
            return "(-%s)" % self.int_e(env, d - 1)
        if k == 12:
            ss = env.of("str")
            if ss:
                return "len(%s)" % r.choice(ss)
            return "(%s & %d)" % (self.int_e(env, d - 1), r.choice([1, 3, 7, 255]))
        return "(%s %s %s)" % (self.int_e(env, d - 1), r.choice(["&", "|", "^"]),
                               self.int_e(env, d - 1))

    def float_e(self, env, d=2):
        r = self.r
        vs = env.of("float")
        if d <= 0 or r.random() < 0.25:
            if vs and r.random() < 0.7:
                return r.choice(vs)
            v = r.choice(FLOAT_LITS)
            return "(%s)" % v if v.startswith("-") else v
        k = r.randrange(11)
        if k <= 2:
            op = r.choice(["+", "-", "*"])
            return "(%s %s %s)" % (self.float_e(env, d - 1), op, self.float_e(env, d - 1))
        if k == 3:
            return "(%s / %s)" % (self.float_e(env, d - 1), r.choice(["2.0", "3.0", "0.5", "-4.0",
                                                                      "7"]))
        if k == 4:
            return "(%s %% %s)" % (self.float_e(env, d - 1), r.choice(["7.5", "2.0", "1000.0",
                                                                       "3"]))
        if k == 5:
            return "(%s // %s)" % (self.float_e(env, d - 1), r.choice(["2.0", "0.75", "-3.0"]))
        if k == 6:
            return "(%s * %s)" % (self.int_e(env, d - 1), self.float_e(env, d - 1))
        if k == 7:
            return "float(%s)" % self.int_e(env, d - 1)
        if k == 8:
            return "(%s / %d)" % (self.int_e(env, d - 1), r.choice([2, 3, 8, -5, 10]))
        if k == 9:
            return "%s(%s, %s)" % (r.choice(["min", "max"]), self.float_e(env, d - 1),
                                   self.float_e(env, d - 1))
        return "abs(%s)" % self.float_e(env, d - 1)

    def bool_e(self, env, d=2):
        r = self.r
        k = r.randrange(9)
        bs = env.of("bool")
        if k == 0 and bs:
            return r.choice(bs)
        if k <= 2:
            return "(%s %s %s)" % (self.int_e(env, d - 1), r.choice(["<", "<=", ">", ">=", "==",
                                                                     "!="]), self.int_e(env, d - 1))
        if k == 3:
            return "(%s %s %s)" % (self.float_e(env, d - 1), r.choice(["<", ">=", "!="]),
                                   self.float_e(env, d - 1))
        if k == 4:
            return "(%s %% 2 == %d)" % (self.int_e(env, d - 1), r.choice([0, 1]))
        if k == 5 and d > 0:
            return "(%s %s %s)" % (self.bool_e(env, d - 1), r.choice(["and", "or"]),
                                   self.bool_e(env, d - 1))
        if k == 6 and d > 0:
            return "(not %s)" % self.bool_e(env, d - 1)
        if k == 7:
            return "(%s < %s <= %s)" % (self.int_e(env, 0), self.int_e(env, 1), self.int_e(env, 0))
        return "(%s > %s)" % (self.int_e(env, d - 1), self.lit_int())


# ---------------------------------------------------------------------------------------------
# Cases


class Case:
    """One case: ``case_<i>`` plus module-level helpers (named ``h<i>_...``)."""

    def __init__(self, rng, idx):
        self.r = rng
        self.i = idx
        self.e = Expr(rng)
        self.helpers = []  # lists of lines, each a module-level def
        self.body = []  # lines of the case function (indented 4)

    def h(self, name):
        return "h%d_%s" % (self.i, name)

    def emit(self, line, ind=1):
        self.body.append("    " * ind + line)

    # -- classic: random statements over typed variables -------------------------------------

    def classic(self):
        r, e = self.r, self.e
        env = Env()
        for n in range(r.randint(1, 3)):
            env.vars["i%d" % n] = "int"
            self.emit("i%d = %s" % (n, e.lit_int()))
        for n in range(r.randint(0, 2)):
            env.vars["f%d" % n] = "float"
            self.emit("f%d = %s" % (n, r.choice(FLOAT_LITS)))
        if r.random() < 0.5:
            env.vars["b0"] = "bool"
            self.emit("b0 = %s" % r.choice(["True", "False"]))
        if r.random() < 0.4:
            env.vars["t0"] = "tuple"
            self.emit("t0 = %r" % (tuple(r.randint(-5, 20) for _ in range(r.randint(1, 4))),))
        self.stmts(env, 1, r.randint(3, 7), depth=0, loop=None)
        names = sorted(n for n, t in env.vars.items() if t in ("int", "float", "bool", "tuple"))
        if len(names) == 1:
            self.emit("return %s" % names[0])
        else:
            self.emit("return (%s)" % ", ".join(names))

    def assign(self, env, ind):
        self._assign(env, ind)

    def _assign(self, env, ind):
        r, e = self.r, self.e
        ints, floats, bools = env.writable("int"), env.writable("float"), env.writable("bool")
        k = r.randrange(10)
        if k <= 3 and ints:
            v = r.choice(ints)
            self.emit("%s = %s %% 1000" % (v, e.int_e(env)), ind)
        elif k == 4 and ints:
            v = r.choice(ints)
            self.emit("%s %s= %s" % (v, r.choice(["+", "-", "*"]), e.int_e(env, 1)), ind)
            self.emit("%s %%= 1000" % v, ind)
        elif k == 5 and floats:
            v = r.choice(floats)
            self.emit("%s = %s %% 1000.0" % (v, e.float_e(env)), ind)
        elif k == 6 and floats:
            v = r.choice(floats)
            self.emit("%s %s= %s" % (v, r.choice(["+", "-", "*"]), e.float_e(env, 1)), ind)
            self.emit("%s %%= 1000.0" % v, ind)
        elif k == 7 and bools:
            self.emit("%s = %s" % (r.choice(bools), e.bool_e(env)), ind)
        elif k == 8 and len(ints) >= 2:
            a, b = r.sample(ints, 2)
            self.emit("%s, %s = %s, %s" % (a, b, b, a), ind)
        elif k == 9 and env.writable("tuple"):
            t = r.choice(env.writable("tuple"))
            self.emit("%s = (%s + (%s %% 100,))[-4:]" % (t, t, e.int_e(env, 1)), ind)
        elif ints:
            self.emit("%s = %s %% 1000" % (r.choice(ints), e.int_e(env)), ind)
        else:
            self.emit("pass", ind)

    def stmts(self, env, ind, n, depth, loop):
        r, e = self.r, self.e
        for _ in range(n):
            k = r.randrange(12)
            if depth >= 2 or k <= 4:
                self.assign(env, ind)
            elif k == 5:
                self.emit("print(%s)" % ", ".join(r.sample(sorted(env.vars), min(2, len(env.vars)))),
                          ind)
            elif k == 6:
                self.emit("if %s:" % e.bool_e(env), ind)
                self.stmts(env, ind + 1, r.randint(1, 2), depth + 1, loop)
                if r.random() < 0.4:
                    self.emit("elif %s:" % e.bool_e(env), ind)
                    self.stmts(env, ind + 1, r.randint(1, 2), depth + 1, loop)
                if r.random() < 0.6:
                    self.emit("else:", ind)
                    self.stmts(env, ind + 1, r.randint(1, 2), depth + 1, loop)
            elif k == 7:
                lv = "k%d" % depth
                form = r.randrange(4)
                if form == 0:
                    hdr = "for %s in range(%d):" % (lv, r.randint(0, 5))
                elif form == 1:
                    hdr = "for %s in range(%d, %d, %d):" % (lv, r.randint(5, 9), r.randint(-3, 1),
                                                            -r.randint(1, 3))
                elif form == 2:
                    hdr = "for %s in (%s):" % (lv, ", ".join(str(r.randint(-5, 9))
                                                              for _ in range(r.randint(2, 4))))
                else:
                    hdr = "for %s in range(%d, %d):" % (lv, r.randint(-2, 2), r.randint(2, 6))
                self.emit(hdr, ind)
                sub = env.child({lv: "int"})
                self.stmts(sub, ind + 1, r.randint(1, 3), depth + 1, "for")
                self.loop_exit(sub, ind + 1)
            elif k == 8:
                c = "w%d" % depth
                self.emit("%s = 0" % c, ind)
                self.emit("while %s < %d:" % (c, r.randint(1, 6)), ind)
                self.emit("%s += 1" % c, ind + 1)
                sub = env.child({c: "int"})
                self.stmts(sub, ind + 1, r.randint(1, 3), depth + 1, "while")
                self.loop_exit(sub, ind + 1)
            elif k == 9 and env.of("tuple"):
                t = r.choice(env.of("tuple"))
                lv = "j%d" % depth
                if r.random() < 0.5:
                    self.emit("for %s, v%d in enumerate(%s):" % (lv, depth, t), ind)
                else:
                    self.emit("for %s, v%d in zip(%s, %s[::-1]):" % (lv, depth, t, t), ind)
                sub = env.child({lv: "int", "v%d" % depth: "int"})
                self.stmts(sub, ind + 1, r.randint(1, 2), depth + 1, "for")
            else:
                self.assign(env, ind)

    def loop_exit(self, env, ind):
        r, e = self.r, self.e
        if r.random() < 0.35:
            self.emit("if %s:" % e.bool_e(env, 1), ind)
            self.emit(r.choice(["break", "continue"]), ind + 1)
            self.assign(env, ind)

    # -- late-binding closures -----------------------------------------------------------------

    def closure_loop_lambda(self):
        r, e = self.r, self.e
        c = r.randint(1, 9)
        self.emit("c = %d" % c)
        self.emit("total = 0")
        n = r.randint(0, 6)
        form = r.randrange(3)
        if form == 0:
            self.emit("for i in range(%d):" % n)
        elif form == 1:
            self.emit("for i in (%s):" % ", ".join(str(r.randint(-4, 9)) for _ in range(3)))
        else:
            self.emit("i = 0")
            self.emit("while i < %d:" % n)
            self.emit("i += 1", 2)
        env = Env({"v": "int", "i": "int", "c": "int"})
        body = e.int_e(env, 2)
        if r.random() < 0.5:
            self.emit("g = lambda v: %s" % body, 2)
        else:
            self.emit("def g(v):", 2)
            self.emit("return %s" % body, 3)
        self.emit("total = (total + g(%d)) %% 1000" % r.randint(-5, 9), 2)
        if r.random() < 0.5:
            self.emit("print(\"i\", i, g(%d))" % r.randint(0, 9), 2)
        show = False
        if form == 2 and r.random() < 0.5:
            # the lambda is called after the variable changed in the same iteration
            show = True
            self.emit("show = lambda: i * %d + c" % r.randint(1, 5), 2)
            self.emit("i += %d" % r.randint(0, 1), 2)
            self.emit("total = (total + show()) % 1000", 2)
        if r.random() < 0.3:
            self.emit("c = (c + i) % 50", 2)
        self.emit("return total")

    def closure_def_after_loop(self):
        r, e = self.r, self.e
        n = r.randint(1, 5)
        m = r.randint(1, 7)
        self.emit("m = %d" % m)
        if r.random() < 0.5:
            self.emit("for k in range(%d):" % n)
            env = Env({"x": "int", "k": "int", "m": "int"})
            self.emit("def sc(x):", 2)
            self.emit("return %s" % e.int_e(env, 2), 3)
            if r.random() < 0.5:
                self.emit("print(\"during\", sc(%d))" % r.randint(0, 5), 2)
            self.emit("r = sc(%d)" % r.randint(0, 9))
        else:
            self.emit("j = 0")
            self.emit("while j < %d:" % n)
            env = Env({"x": "int", "j": "int", "m": "int"})
            self.emit("def sc(x):", 2)
            self.emit("return %s" % e.int_e(env, 2), 3)
            self.emit("j += %d" % r.randint(1, 2), 2)
            self.emit("r = sc(%d) + j" % r.randint(0, 9))
        self.emit("return r % 1000")

    def closure_reassign(self):
        r, e = self.r, self.e
        self.emit("step = %d" % r.randint(-3, 9))
        self.emit("scale = %s" % r.choice(FLOAT_LITS))
        env = Env({"x": "int", "step": "int"})
        if r.random() < 0.5:
            self.emit("def adv(x):")
            self.emit("return %s %% 1000" % e.int_e(env, 2), 2)
        else:
            self.emit("adv = lambda x: %s %% 1000" % e.int_e(env, 2))
        fenv = Env({"y": "float", "scale": "float", "step": "int"})
        self.emit("def fl(y):")
        self.emit("return %s" % e.float_e(fenv, 1), 2)
        self.emit("x = %d" % r.randint(0, 9))
        self.emit("x = adv(x)")
        for _ in range(r.randint(1, 4)):
            k = r.randrange(5)
            if k == 0:
                self.emit("step = %d" % r.randint(-5, 20))
                self.emit("x = adv(x)")
            elif k == 1:
                self.emit("if x %% 2 == %d:" % r.randint(0, 1))
                self.emit("step = step * 2 + 1", 2)
                self.emit("else:")
                self.emit("scale = scale + 1.5", 2)
                self.emit("x = adv(x)")
            elif k == 2:
                self.emit("for q in range(%d):" % r.randint(0, 4))
                self.emit("step = (step + q) % 100", 2)
                self.emit("x = adv(x)", 2)
            elif k == 3:
                self.emit("scale = scale * 2.0")
                self.emit("print(\"fl\", fl(%s))" % r.choice(FLOAT_LITS))
            else:
                self.emit("print(\"adv\", adv(%d), step)" % r.randint(0, 9))
        self.emit("return (x, fl(1.0), step)")

    def closure_factory(self):
        r, e = self.r, self.e
        name = self.h("make")
        env = Env({"k": "int", "x": "int"})
        if r.random() < 0.5:
            self.helpers.append([
                "def %s(k):" % name,
                "    def f(x):",
                "        return %s %% 1000" % e.int_e(env, 2),
                "    return f",
            ])
        else:
            self.helpers.append([
                "def %s(k):" % name,
                "    return lambda x: %s %% 1000" % e.int_e(env, 2),
            ])
        comp = self.h("compose")
        self.helpers.append([
            "def %s(f, g):" % comp,
            "    def both(x):",
            "        return f(g(x))",
            "    return both",
        ])
        self.emit("a = %s(%d)" % (name, r.randint(-3, 9)))
        self.emit("b = %s(%d)" % (name, r.randint(-3, 9)))
        self.emit("c = %s(a, b)" % comp)
        self.emit("fs = (a, b, c)")
        self.emit("acc = 0")
        self.emit("for f in fs:")
        self.emit("acc = (acc + f(%d)) %% 1000" % r.randint(0, 9), 2)
        self.emit("pick = a if acc %% 2 == %d else b" % r.randint(0, 1))
        self.emit("return (acc, pick(3), c(c(1)))")

    def closure_escaping(self):
        """Closures stored in a list or tuple (not only called by name), reading variables
        their creator assigns again: Python's late binding through cells."""
        r, e = self.r, self.e
        self.emit("c = %d" % r.randint(0, 9))
        self.emit("fs = %s" % r.choice(["[]", "()"]))
        wrap = (lambda f: "[%s]" % f) if self.body[-1].endswith("[]") else (lambda f: "(%s,)" % f)
        n = r.randint(0, 5)
        if r.random() < 0.6:
            self.emit("for i in range(%d):" % n)
        else:
            self.emit("i = 0")
            self.emit("while i < %d:" % n)
            self.emit("i += 1", 2)
        env = Env({"v": "int", "i": "int", "c": "int"})
        if r.random() < 0.5:
            self.emit("fs = fs + %s" % wrap("lambda v: %s %% 1000" % e.int_e(env, 2)), 2)
        else:
            self.emit("def g(v):", 2)
            self.emit("return %s %% 1000" % e.int_e(env, 2), 3)
            self.emit("fs = fs + %s" % wrap("g"), 2)
        if r.random() < 0.5:
            self.emit("print(\"during\", fs[-1](%d))" % r.randint(0, 9), 2)
        if r.random() < 0.5:
            self.emit("c = (c + i) %% %d" % r.randint(5, 50), 2)
        if r.random() < 0.4:
            self.emit("c = c * %d" % r.randint(2, 3))
        call = self.h("call_each")
        self.helpers.append([
            "def %s(fs, v):" % call,
            "    out = []",
            "    for f in fs:",
            "        out = out + [f(v)]",
            "    return out",
        ])
        self.emit("out = %s(fs, %d)" % (call, r.randint(-3, 9)))
        self.emit("print(len(fs), out)")
        self.emit("return (c, out)")

    def nonlocal_escaping(self):
        """`nonlocal` in closures that escape: returned from a factory, stored in a tuple,
        passed to another function; each factory call has a cell of its own."""
        r, e = self.r, self.e
        make = self.h("make")
        env = Env({"v": "int", "state": "int"})
        self.helpers.append([
            "def %s(state):" % make,
            "    def step(v):",
            "        nonlocal state",
            "        state = %s %% 1000" % e.int_e(env, 2),
            "        return state",
            "    def peek():",
            "        return state",
            "    return step, peek",
        ])
        drive = self.h("drive")
        self.helpers.append([
            "def %s(f, n):" % drive,
            "    last = 0",
            "    for k in range(n):",
            "        last = f(k)",
            "    return last",
        ])
        self.emit("a, pa = %s(%d)" % (make, r.randint(-3, 9)))
        self.emit("b, pb = %s(%d)" % (make, r.randint(-3, 9)))
        self.emit("r1 = %s(a, %d)" % (drive, r.randint(0, 4)))
        self.emit("pair = (b, a)")
        self.emit("for f in pair:")
        self.emit("f(%d)" % r.randint(-2, 6), 2)
        if r.random() < 0.5:
            self.emit("print(\"mid\", pa(), pb())")
        self.emit("r2 = %s(b, %d)" % (drive, r.randint(0, 3)))
        self.emit("return (r1, r2, pa(), pb())")

    def kwargs_calls(self):
        """`**kwargs` parameters, `f(**d)` and dict displays with string keys: binding to
        named, keyword-only and collected parameters, in Python's order."""
        r, e = self.r, self.e
        target = self.h("target")
        env = Env({"a": "int", "b": "int", "k": "int"})
        self.helpers.append([
            "def %s(a, b=%d, *, k=%d, **rest):" % (target, r.randint(-3, 9), r.randint(0, 5)),
            "    print(\"got\", a, b, k, rest, len(rest))",
            "    for name, val in rest.items():",
            "        k = k + val * len(name)",
            "    for name in rest:",
            "        k = k - rest[name] % 3",
            "    return %s %% 1000" % e.int_e(env, 2),
        ])
        wrap = self.h("wrap")
        self.helpers.append([
            "def %s(*args, **kwargs):" % wrap,
            "    return %s(*args, **kwargs)" % target,
        ])
        keys = r.sample(["x", "y", "lr", "tag", "b", "k"], r.randint(0, 3))
        items = ", ".join('"%s": %d' % (key, r.randint(-5, 9)) for key in keys)
        self.emit("d = {%s}" % items)
        k = r.randrange(3)
        if k == 1:
            self.emit('d = {**d, "tag": %d}' % r.randint(0, 9))
        elif k == 2:
            self.emit('d = dict(d, y=%d)' % r.randint(0, 9))
        self.emit("print(d, len(d), %s in d)" % repr(r.choice(["x", "b", "z"])))
        if r.random() < 0.5:
            # A loop over the dict walks its keys (with enumerate: their positions too).
            self.emit("for i, key in enumerate(d):" if r.random() < 0.5 else "for key in d:")
            self.emit("print(key, d[key])", 2)
        forms = [
            "%s(%d, **d)" % (target, r.randint(0, 9)),
            "%s(%d, extra=%d, **d)" % (wrap, r.randint(0, 9), r.randint(0, 9)),
            "%s(a=%d, **d)" % (target, r.randint(0, 9)),
            # One positional: `b` may come from the dict.
            "%s(*(%d,), **d)" % (wrap, r.randint(0, 9)),
        ]
        self.emit("r1 = %s" % r.choice(forms))
        self.emit("r2 = %s" % r.choice(forms))
        self.emit("v = d.get(%s, %d)" % (repr(r.choice(keys + ["z"])), r.randint(0, 9)))
        self.emit("return (r1, r2, v)")

    # -- nonlocal --------------------------------------------------------------------------

    def nonlocal_counter(self):
        r, e = self.r, self.e
        self.emit("count = 0")
        self.emit("acc = %s" % r.choice(["0", "0.0", "()"]))
        acc_ty = self.body[-1].split(" = ")[1]
        self.emit("scale = %d" % r.randint(1, 5))
        self.emit("def tick(v):")
        self.emit("nonlocal count, acc", 2)
        self.emit("count += %d" % r.randint(1, 3), 2)
        env = Env({"v": "int", "scale": "int", "count": "int"})
        if acc_ty == "0":
            upd = "acc = (acc + %s) %% 1000" % e.int_e(env, 1)
        elif acc_ty == "0.0":
            upd = "acc = (acc + %s * 0.5) %% 1000.0" % e.int_e(env, 1)
        else:
            upd = "acc = (acc + (v,))[-5:]"
        if r.random() < 0.5:
            self.emit("if %s:" % e.bool_e(env, 1), 2)
            self.emit(upd, 3)
            self.emit("return True", 3)
            self.emit("return False", 2)
        else:
            self.emit(upd, 2)
            self.emit("return count", 2)
        if r.random() < 0.5:
            self.emit("for v in range(%d):" % r.randint(0, 7))
        else:
            self.emit("for v in (%s):" % ", ".join(str(r.randint(-3, 9)) for _ in range(4)))
        k = r.randrange(3)
        if k == 0:
            self.emit("tick(v)", 2)
        elif k == 1:
            self.emit("if tick(v):", 2)
            self.emit("print(\"hit\", v, count, acc)", 3)
        else:
            self.emit("if v %% 2 == %d:" % r.randint(0, 1), 2)
            self.emit("tick(v)", 3)
            self.emit("scale = scale + 1", 3)
            self.emit("else:", 2)
            self.emit("tick(v * 2)", 3)
        if r.random() < 0.5:
            self.emit("r = tick(%d)" % r.randint(0, 5))
            self.emit("print(\"last\", r)")
        self.emit("return (count, acc, scale)")

    def nonlocal_nested(self):
        r, e = self.r, self.e
        self.emit("total = 0")
        self.emit("def outer(v):")
        self.emit("nonlocal total", 2)
        self.emit("seen = 0", 2)
        self.emit("def inner(w):", 2)
        self.emit("nonlocal seen, total", 3)
        self.emit("seen += 1", 3)
        env = Env({"w": "int", "seen": "int", "total": "int"})
        self.emit("total = (total + %s) %% 1000" % e.int_e(env, 1), 3)
        self.emit("inner(v)", 2)
        if r.random() < 0.6:
            self.emit("if v > %d:" % r.randint(0, 5), 2)
            self.emit("inner(v * 2)", 3)
        if r.random() < 0.5:
            self.emit("for u in range(%d):" % r.randint(0, 3), 2)
            self.emit("inner(u)", 3)
        self.emit("total = total + seen", 2)
        self.emit("return seen", 2)
        self.emit("s = 0")
        self.emit("for v in range(%d):" % r.randint(0, 5))
        self.emit("s += outer(v)", 2)
        if r.random() < 0.5:
            self.emit("print(\"mid\", s, total)", 2)
        self.emit("return (s, total)")

    # -- in-place updates ------------------------------------------------------------------

    def _fresh_tensor(self):
        """A fresh tensor expression and (kind, shape)."""
        r = self.r
        n = r.randint(3, 6)
        k = r.randrange(7)
        if k == 0:
            return "ops.zeros(%d)" % n, ("f", (n,))
        if k == 1:
            return "ops.ones(%d)" % n, ("f", (n,))
        if k == 2:
            return "ops.arange(%d) * 1" % n, ("i", (n,))
        if k == 3:
            vals = [str(r.randint(-5, 9)) for _ in range(n)]
            return "ops.tensor([%s]) * 1" % ", ".join(vals), ("i", (n,))
        if k == 4:
            vals = [str(r.randint(-8, 8) / 2) for _ in range(n)]
            return "ops.tensor([%s]) * 1.0" % ", ".join(vals), ("f", (n,))
        if k == 5:
            m = r.randint(2, 3)
            return "ops.zeros((%d, %d))" % (m, n), ("f", (m, n))
        return "(ops.arange(%d) + ops.arange(%d) * 2) %% 5" % (n, n), ("i", (n,))

    def _scalar(self, kind):
        r = self.r
        if kind == "i":
            return str(r.randint(-4, 9))
        return r.choice(["0.5", "1.5", "-2.0", "3.0", "0.25", "4.0"])

    def _vec(self, kind, n):
        r = self.r
        if kind == "i":
            return "ops.tensor([%s])" % ", ".join(str(r.randint(-4, 9)) for _ in range(n))
        return "ops.tensor([%s])" % ", ".join(str(r.randint(-8, 8) / 4) for _ in range(n))

    def inplace_tensor(self):
        r = self.r
        expr, (kind, shape) = self._fresh_tensor()
        self.emit("x = %s" % expr)
        n = shape[-1]
        two_d = len(shape) == 2
        for _ in range(r.randint(2, 6)):
            k = r.randrange(13)
            if k == 0:
                self.emit("x += %s" % self._scalar(kind))
            elif k == 1:
                self.emit("x -= %s" % self._vec(kind, n))
            elif k == 2:
                self.emit("x *= %s" % r.choice(["2", "-1", "3"] if kind == "i" else
                                                ["2.0", "-0.5", "1.5"]))
            elif k == 3:
                i = r.randint(-n, n - 1) if not two_d else r.randint(0, shape[0] - 1)
                self.emit("x[%d] = %s" % (i, self._scalar(kind) if not two_d or r.random() < 0.5
                                          else self._vec(kind, n)))
            elif k == 4:
                i = r.randint(0, (shape[0] if two_d else n) - 1)
                self.emit("x[%d] += %s" % (i, self._scalar(kind)))
            elif k == 5:
                a = r.randint(0, n - 1)
                b = r.randint(a, n)
                if two_d:
                    self.emit("x[:, %d:%d] = %s" % (a, b, self._scalar(kind)))
                elif r.random() < 0.5:
                    self.emit("x[%d:%d] = %s" % (a, b, self._vec(kind, b - a)))
                else:
                    self.emit("x[%d:%d] = %s" % (a, b, self._scalar(kind)))
            elif k == 6:
                if two_d:
                    self.emit("x[::2] = %s" % self._vec(kind, n))
                else:
                    self.emit("x[::2] = %s" % self._scalar(kind))
            elif k == 7:
                self.emit("x[x > %s] = %s" % (self._scalar(kind), self._scalar(kind)))
            elif k == 8:
                if two_d:
                    self.emit("x[ops.tensor([0, %d])] = %s" % (shape[0] - 1, self._scalar(kind)))
                else:
                    self.emit("x[ops.tensor([0, 2])] = %s" % self._vec(kind, 2))
            elif k == 9:
                if kind == "i":
                    # a float into an int array truncates
                    self.emit("x[%d] = %s" % (r.randint(0, (shape[0] if two_d else n) - 1),
                                              r.choice(["2.9", "-1.7", "0.5", "7.25"])))
                else:
                    self.emit("x /= %s" % r.choice(["2.0", "4.0", "-2.0"]))
            elif k == 10:
                # broadcasting a row over a 2-D array, or a 0-d value
                if two_d:
                    self.emit("x += %s" % self._vec(kind, n))
                else:
                    self.emit("x[1:] -= %s" % self._scalar(kind))
            elif k == 11:
                self.emit("for i in range(%d):" % (shape[0] if two_d else n))
                self.emit("if i %% 2 == %d:" % r.randint(0, 1), 2)
                self.emit("x[i] = i * %s" % self._scalar(kind), 3)
                self.emit("else:", 2)
                self.emit("x[i] += 1", 3)
            else:
                self.emit("if x.sum() > %s:" % self._scalar(kind))
                self.emit("x[0] = %s" % self._scalar(kind), 2)
                self.emit("else:")
                self.emit("x -= 1", 2)
        if r.random() < 0.5:
            self.emit("print(x)")
        self.emit("return (x, x.sum(), x.shape)")

    def inplace_list(self):
        r = self.r
        n = r.randint(3, 7)
        if r.random() < 0.5:
            self.emit("xs = [%s]" % ", ".join(str(r.randint(-5, 9)) for _ in range(n)))
        else:
            self.emit("xs = list(range(%d))" % n)
        for _ in range(r.randint(2, 5)):
            k = r.randrange(6)
            if k == 0:
                self.emit("xs[%d] = %d" % (r.randint(-n, n - 1), r.randint(-5, 9)))
            elif k == 1:
                self.emit("xs[%d] += %d" % (r.randint(-n, n - 1), r.randint(-5, 9)))
            elif k == 2:
                a = r.randint(0, n)
                b = r.randint(a, n)
                m = r.randint(0, 3)
                self.emit("xs[%d:%d] = [%s]" % (a, b, ", ".join(str(r.randint(0, 9))
                                                                 for _ in range(m))))
                n = n - (b - a) + m
            elif k == 3:
                cnt = (n + 1) // 2
                self.emit("xs[::2] = [%s]" % ", ".join(str(r.randint(0, 9)) for _ in range(cnt)))
            elif k == 4 and n > 0:
                self.emit("for i in range(len(xs)):")
                self.emit("if xs[i] %% 2 == %d:" % r.randint(0, 1), 2)
                self.emit("xs[i] = xs[i] * 2 % 100", 3)
            else:
                self.emit("xs = xs + [%d]" % r.randint(0, 9))
                n += 1
            if n == 0:
                self.emit("xs = xs + [1]")
                n = 1
        self.emit("return (xs, len(xs), xs[::-1])")

    # -- *args -------------------------------------------------------------------------------

    def varargs(self):
        r, e = self.r, self.e
        f = self.h("va")
        kw = r.randint(1, 3)
        env = Env({"s": "int", "k": "int"})
        lines = ["def %s(a, *args, k=%d):" % (f, kw), "    s = a"]
        form = r.randrange(3)
        if form == 0:
            lines += ["    for v in args:", "        s = (s + v * k) % 1000"]
        elif form == 1:
            lines += ["    i = 0", "    while i < len(args):",
                      "        s = (s * 2 + args[i]) % 1000", "        i += 1"]
        else:
            lines += ["    if len(args) > 1:", "        s = s + args[1] - args[-1]",
                      "    for i, v in enumerate(args):", "        s = (s + i * v) % 1000"]
        lines.append("    return (%s %% 1000, len(args))" % e.int_e(env, 1))
        self.helpers.append(lines)
        ap = self.h("apply")
        self.helpers.append(["def %s(g, *args):" % ap, "    return g(*args)"])
        cnt = self.h("count")
        self.helpers.append(["def %s(*args):" % cnt, "    return len(args)"])
        t = tuple(r.randint(-3, 9) for _ in range(r.randint(1, 4)))
        self.emit("t = %r" % (t,))
        calls = [
            "%s(%d)" % (f, r.randint(0, 9)),
            "%s(%d, %d, %d)" % (f, r.randint(0, 9), r.randint(0, 9), r.randint(0, 9)),
            "%s(*t)" % f,
            "%s(%d, *t, k=%d)" % (f, r.randint(0, 9), r.randint(1, 4)),
            "%s(*t, k=%d)" % (f, r.randint(1, 4)),
            "%s(%s, *t)" % (ap, f),
            "%s(%s, %d, %d)" % (ap, f, r.randint(0, 9), r.randint(0, 9)),
            "%s(*t) + %s()" % (cnt, cnt),
            "%s(*[%d, %d])" % (f, r.randint(0, 9), r.randint(0, 9)),
            "%s(*range(%d))" % (cnt, r.randint(0, 5)),
            "g(*t)",
        ]
        self.emit("g = %s" % f)
        chosen = r.sample(calls, r.randint(2, 5))
        self.emit("r = (%s,)" % ", ".join(chosen))
        if r.random() < 0.5:
            self.emit("print(r)")
        self.emit("return r")

    # -- tuples, strings, recursion, tensors ---------------------------------------------------

    def tuples_strings(self):
        r = self.r
        t = tuple(r.randint(-5, 9) for _ in range(r.randint(3, 5)))
        s = "".join(r.choice("abcxyz") for _ in range(r.randint(2, 5)))
        self.emit("t = %r" % (t,))
        self.emit("s = %r" % s)
        self.emit("a, b = t[0], t[1]")
        ops_ = [
            "t[%d:%d]" % (r.randint(0, 2), r.randint(1, 5)),
            "t[::-1]",
            "t[::2]",
            "t + (a * b,)",
            "len(t) * 2",
            "%d in t" % r.randint(0, 5),
            "s + %r" % r.choice(["q", "", "zz"]),
            "s[1:]",
            "s[::-1]",
            "s * 2",
            "len(s)",
            "repr(s)",
            "str(a) + s",
            "s < %r" % r.choice(["b", "xyz", "a"]),
            "%r in s" % r.choice(["a", "x", "bc"]),
            "(a, (b, s))",
            "min(t)",
            "max(t) - min(t)",
            "sum(t)",
            "tuple(zip(t, t[1:]))",
            "tuple(enumerate(s))",
            "t * 2",
            "t < (a, b)",
            "(*t, a)",
            "[*s, *t[:2]]",
            "(*range(%d), *s[::-1])" % r.randint(0, 3),
        ]
        self.emit("out = ()")
        for x in r.sample(ops_, r.randint(3, 6)):
            self.emit("out = out + (%s,)" % x)
        self.emit("x, (y, z) = a, (b, s)")
        star = r.choice(["h, *rest = t", "*rest, h = s", "h, *rest, last = t", "(h, *rest), last = t, s"])
        self.emit(star)
        self.emit("out = out + (h, rest)")
        self.emit("for ch in s:")
        self.emit("if ch == %r:" % r.choice("abcxyz"), 2)
        self.emit("x = x + 1", 3)
        self.emit("return (out, x, y, z)")

    def recursion(self):
        r, e = self.r, self.e
        f = self.h("rec")
        env = Env({"n": "int", "acc": "int"})
        form = r.randrange(3)
        if form == 0:
            env = Env({"n": "int"})
            self.helpers.append([
                "def %s(n):" % f,
                "    if n <= 0:",
                "        return %d" % r.randint(0, 5),
                "    return (%s(n - 1) + %s) %% 1000" % (f, e.int_e(env, 1)),
            ])
            self.emit("return (%s(%d), %s(0))" % (f, r.randint(0, 12), f))
        elif form == 1:
            ev, od = self.h("even"), self.h("odd")
            self.helpers.append(["def %s(n):" % ev, "    if n == 0:", "        return True",
                                 "    return %s(n - 1)" % od])
            self.helpers.append(["def %s(n):" % od, "    if n == 0:", "        return False",
                                 "    return %s(n - 1)" % ev])
            self.emit("return (%s(%d), %s(%d))" % (ev, r.randint(0, 15), od, r.randint(0, 15)))
        else:
            self.helpers.append([
                "def %s(n, acc):" % f,
                "    if n == 0:",
                "        return acc",
                "    return %s(n - 1, %s %% 1000)" % (f, e.int_e(env, 1)),
            ])
            self.emit("def fib(n):")
            self.emit("if n < 2:", 2)
            self.emit("return n", 3)
            self.emit("return fib(n - 1) + fib(n - 2)", 2)
            self.emit("return (%s(%d, %d), fib(%d))" % (f, r.randint(0, 20), r.randint(0, 9),
                                                      r.randint(0, 10)))

    def tensors(self):
        r = self.r
        n = r.randint(2, 5)
        self.emit("a = %s" % self._vec("f", n))
        self.emit("b = %s" % self._vec("i", n))
        exprs = [
            "a + b", "a * 2.0 - b", "(b * 3) // 2", "b % 4", "a * a", "-a", "abs(a - 1.0)",
            "a / 4.0", "a > 0.5", "(b > 2) & (b < 7)", "ops.maximum(a, b)",
            "ops.where(b > 3, a, 0.0)", "a.sum()", "b.sum()", "a.shape", "b[%d]" % (n - 1),
            "a[1:]", "a[::-1]", "b.max()", "a.min()", "(a + b).reshape((%d, 1))" % n,
            "len(b)", "float(a.sum())", "int(b.sum())", "b.dtype", "a.mean()",
            "ops.arange(%d) * b" % n, "ops.ones((2, %d)) + a" % n, "b.astype(anfora.float32)",
            "a @ a", "(a * 2.0).astype('int64')",
        ]
        self.emit("out = ()")
        for x in r.sample(exprs, r.randint(3, 6)):
            if r.random() < 0.3:
                self.emit("print(%s)" % x)
            self.emit("out = out + (%s,)" % x)
        self.emit("acc = ops.zeros(%d)" % n)
        self.emit("for i in range(%d):" % r.randint(0, 4))
        self.emit("acc = acc + a * i", 2)
        self.emit("return (out, acc)")


    # -- combinations: nonlocal + in-place + late binding + *args of tensors ------------------

    def mixed(self):
        r, e = self.r, self.e
        n = r.randint(2, 5)
        self.emit("count = 0")
        self.emit("scale = %s" % r.choice(["1.5", "2.0", "-0.5"]))
        self.emit("w = %s" % self._vec("f", n))
        self.emit("acc = ops.zeros(%d)" % n)
        self.emit("def fill(m):")
        self.emit("nonlocal count, acc", 2)
        self.emit("buf = ops.zeros(%d)" % n, 2)
        self.emit("for j in range(%d):" % n, 2)
        self.emit("if j %% 2 == %d:" % r.randint(0, 1), 3)
        self.emit("buf[j] = j * scale + m", 4)
        self.emit("else:", 3)
        self.emit("buf[j] += m", 4)
        self.emit("count += 1", 3)
        self.emit("buf *= %s" % r.choice(["2.0", "-1.0", "0.5"]), 2)
        self.emit("acc = acc + buf * w", 2)
        self.emit("return buf.sum()", 2)
        self.emit("def peek():")
        self.emit("return w.sum() + scale", 2)
        self.emit("total = 0.0")
        k = r.randrange(3)
        if k == 0:
            self.emit("for m in range(%d):" % r.randint(0, 4))
            self.emit("total = total + float(fill(float(m)))", 2)
            self.emit("if count > %d:" % r.randint(2, 8), 2)
            self.emit("scale = scale * 2.0", 3)
        elif k == 1:
            self.emit("m = 0")
            self.emit("while True:")
            self.emit("m += 1", 2)
            self.emit("total = total + float(fill(m * 0.5))", 2)
            self.emit("if m >= %d or count > %d:" % (r.randint(1, 4), r.randint(3, 12)), 2)
            self.emit("break", 3)
        else:
            self.emit("if %s:" % e.bool_e(Env({"count": "int"}), 1))
            self.emit("total = float(fill(1.0))", 2)
            self.emit("else:")
            self.emit("total = float(fill(-1.0)) + float(fill(2.0))", 2)
        self.emit("print(\"peek\", peek())")
        self.emit("w = w * 10.0")
        self.emit("scale = %s" % r.choice(["0.25", "3.0"]))
        self.emit("total = total + float(peek())")
        self.emit("fill(0.5)")
        self.emit("return (count, total, acc)")

    def varargs_tensors(self):
        r = self.r
        n = r.randint(2, 4)
        f = self.h("vt")
        self.helpers.append([
            "def %s(base, *xs, k=1.0):" % f,
            "    out = ops.zeros(%d) + base" % n,
            "    for x in xs:",
            "        out += x * k",
            "    if len(xs) > 0:",
            "        out[0] = xs[-1][0]",
            "    return out",
        ])
        fw = self.h("fwd")
        self.helpers.append(["def %s(*xs):" % fw, "    return %s(*xs) * 2.0" % f])
        self.emit("a = %s" % self._vec("f", n))
        self.emit("b = %s" % self._vec("f", n))
        self.emit("pair = (a, b)")
        calls = ["%s(1.0)" % f, "%s(0.5, a)" % f, "%s(0.0, *pair)" % f,
                 "%s(2.0, *pair, k=%s)" % (f, r.choice(["2.0", "-1.0"])), "%s(1.0, a, b, a)" % fw,
                 "%s(*(3.0, b))" % fw]
        for c in r.sample(calls, r.randint(2, 4)):
            self.emit("print(%s)" % c)
        self.emit("return %s(0.0, *pair).sum()" % fw)

    def inplace_loops(self):
        r = self.r
        rows, n = r.randint(2, 4), r.randint(2, 4)
        kind = r.choice(["f", "i"])
        if kind == "f":
            self.emit("g = ops.zeros((%d, %d))" % (rows, n))
        else:
            self.emit("g = ops.zeros((%d, %d), dtype=anfora.int64) * 1" % (rows, n))
        self.emit("i = 0")
        self.emit("while i < %d:" % rows)
        self.emit("for j in range(%d):" % n, 2)
        self.emit("if (i + j) %% %d == 0:" % r.randint(2, 3), 3)
        self.emit("continue", 4)
        item = r.choice(["g[i, j]", "g[i][j]"])
        self.emit("%s = i * %d + j" % (item, r.randint(1, 5)), 3)
        self.emit("if i == %d:" % r.randint(0, rows), 2)
        self.emit("g[i] -= %s" % ("1.5" if kind == "f" else "2"), 3)
        self.emit("i += 1", 2)
        col = r.randint(0, n - 1)
        self.emit("%s += %s" % (r.choice(["g[:, %d]" % col, "g[0][%d]" % col]),
                                "0.5" if kind == "f" else "3"))
        if kind == "i":
            self.emit("g //= %d" % r.choice([2, 3, -2]))
            self.emit("g %%= %d" % r.choice([5, 7]))
        else:
            self.emit("g[g < %s] = %s" % (r.choice(["1.0", "3.0"]), r.choice(["-1.0", "0.0"])))
        self.emit("m = ops.tensor([True, False, True]) | False")
        self.emit("m ^= %s" % r.choice(["True", "False"]))
        self.emit("print(g)")
        self.emit("return (g.sum(), m, g.shape)")

    def argument_updates(self):
        """Functions that update the array, list or number they are passed, called by name:
        the caller's variable and its other names see the change, a number only rebinds."""
        r = self.r
        n = r.randint(2, 4)
        upd, fill, chain, grow, num = (self.h(k) for k in ("upd", "fill", "chain", "grow", "num"))
        op = r.choice(["+=", "-=", "*="])
        self.helpers.append([
            "def %s(x, v):" % upd,
            "    if v > %s:" % r.choice(["0.0", "1.0"]),
            "        x %s v" % op,
            "    return v * 2.0",
        ])
        self.helpers.append([
            "def %s(buf, i, v):" % fill,
            "    buf[i] = v",
            "    buf[%d] += 1.0" % r.randint(0, n - 1),
        ])
        self.helpers.append([
            "def %s(x, k):" % chain,
            "    for i in range(k):",
            "        %s(x, i * 0.5)" % upd,
            "    %s(x, k %% %d, -1.0)" % (fill, n),
        ])
        self.helpers.append(["def %s(xs, v):" % grow, "    xs += [v]", "    xs[0] = len(xs)"])
        self.helpers.append(["def %s(k):" % num, "    k += 1", "    return k"])
        self.emit("a = ops.zeros(%d) + %s" % (n, self._vec("f", n)))
        self.emit("b = a")
        self.emit("print(%s(a, %s))" % (upd, r.choice(["0.5", "1.5", "-2.0"])))
        self.emit("%s(b, %d, %s)" % (fill, r.randint(0, n - 1), r.choice(["3.0", "-0.25"])))
        self.emit("%s(a, %d)" % (chain, r.randint(0, 3)))
        self.emit("xs = [%d]" % r.randint(0, 5))
        self.emit("ys = xs")
        self.emit("%s(ys, %d)" % (grow, r.randint(0, 9)))
        self.emit("k = %d" % r.randint(0, 5))
        self.emit("print(%s(k), k, %s(a * 1.0, 2.0))" % (num, upd))
        self.emit("print(a, b, xs, ys)")
        self.emit("return (a.sum(), len(xs))")

    FAMILIES = [
        ("classic", 6), ("closure_loop_lambda", 3), ("closure_def_after_loop", 2),
        ("closure_reassign", 3), ("closure_factory", 1), ("nonlocal_counter", 3),
        ("nonlocal_nested", 2), ("inplace_tensor", 4), ("inplace_list", 2), ("varargs", 3),
        ("tuples_strings", 2), ("recursion", 1), ("tensors", 2), ("mixed", 3),
        ("varargs_tensors", 1), ("inplace_loops", 2), ("argument_updates", 2),
        ("closure_escaping", 3), ("nonlocal_escaping", 2), ("kwargs_calls", 2),
    ]

    def build(self):
        names = [n for n, w in self.FAMILIES for _ in range(w)]
        fam = self.r.choice(names)
        getattr(self, fam)()
        return fam


def gen_file(seed, file_idx, first_case, k):
    helpers, cases = [], []
    for j in range(k):
        case_no = first_case + j
        rng = random.Random("%d:%d" % (seed, case_no))
        c = Case(rng, j)
        fam = c.build()
        for h in c.helpers:
            helpers.append("\n".join(h))
        cases.append("def case_%d():  # %s (case %d of seed %d)\n%s" % (
            j, fam, case_no, seed, "\n".join(c.body)))
    out = ["# Generated by tests/differential/gen_programs.py (seed %d, file %d)." % (seed, file_idx),
           "import anfora", "from anfora import ops", ""]
    for h in helpers:
        out += ["", h, ""]
    for c in cases:
        out += ["", c, ""]
    out += ["", "def main():"]
    for j in range(k):
        out.append("    print(\"case\", %d, case_%d())" % (j, j))
    out.append("    return %d" % k)
    return "\n".join(out) + "\n"


def generate(seed, count, out_dir, per_file=50):
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    idx = 0
    first = 0
    while first < count:
        k = min(per_file, count - first)
        path = os.path.join(out_dir, "gen_%04d.py" % idx)
        with open(path, "w", encoding="utf-8") as f:
            f.write(gen_file(seed, idx, first, k))
        paths.append(path)
        first += k
        idx += 1
    return paths


# ---------------------------------------------------------------------------------------------
# Checker


def run_anfora(binary, path, engine):
    """stdout and the exception line, as differential.rs computes them; refused: a compile error."""
    p = subprocess.run([binary, "run", "--engine", engine, path], capture_output=True, text=True,
                       errors="replace", timeout=120)
    stdout, stderr = p.stdout, p.stderr
    refused = False
    if p.returncode == 0:
        exc = None
    elif p.returncode == 1 and stderr.startswith("Traceback"):
        lines = stderr.splitlines()
        exc = lines[-2] if len(lines) >= 2 else stderr
    else:
        exc = "anfora failed (%s):\n%s" % (p.returncode, stderr)
        refused = True
    return stdout, exc, refused, stderr


def diff_lines(want, got, limit=6):
    a, b = want.splitlines(), got.splitlines()
    out = []
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "<missing>"
        y = b[i] if i < len(b) else "<missing>"
        if x != y:
            out.append("  line %d:\n    cpython: %s\n    anfora:  %s" % (i + 1, x, y))
            if len(out) >= limit:
                break
    return "\n".join(out)


def check(args):
    t0 = time.time()
    tmp = args.keep or tempfile.mkdtemp(prefix="anfora-gen-")
    if args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    files = generate(args.seed, args.count, tmp, args.per_file)
    t_gen = time.time() - t0
    env = dict(os.environ)
    env["PYTHONPATH"] = ORACLE + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    runner = os.path.join(HERE, "run_cpython.py")
    t1 = time.time()

    def cpython(chunk):
        p = subprocess.run([sys.executable, runner] + chunk, capture_output=True, text=True,
                           env=env, timeout=600)
        if p.returncode != 0:
            raise SystemExit("the CPython runner failed:\n" + p.stderr)
        return json.loads(p.stdout)

    expected = {}
    chunks = [files[i::args.jobs] for i in range(args.jobs)]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for part in pool.map(cpython, [c for c in chunks if c]):
            expected.update(part)
    t_cpy = time.time() - t1
    t2 = time.time()
    jobs = [(f, eng) for f in files for eng in ("compiled", "reference")]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda j: run_anfora(args.anfora, j[0], j[1]), jobs))
    t_af = time.time() - t2
    refusals, mismatches, cpy_errors = [], [], []
    bad_files = set()
    for (path, eng), (stdout, exc, refused, stderr) in zip(jobs, results):
        rec = expected[path]
        want = rec["stdout"] + (rec["result"] + "\n" if rec["result"] is not None else "")
        want_exc = rec["error"]
        if want_exc is not None and eng == "compiled":
            cpy_errors.append("%s: CPython raised %s" % (path, want_exc))
            bad_files.add(path)
        if refused:
            refusals.append("%s (%s):\n%s" % (path, eng, "\n".join(stderr.splitlines()[:8])))
            bad_files.add(path)
        elif stdout != want or exc != want_exc:
            msg = "%s (%s):" % (path, eng)
            if exc != want_exc:
                msg += "\n  exception: cpython %r, anfora %r" % (want_exc, exc)
            d = diff_lines(want, stdout)
            if d:
                msg += "\n" + d
            mismatches.append(msg)
            bad_files.add(path)
    total = time.time() - t0
    print("random programs: seed %d, %d cases in %d files (%d per file)" % (
        args.seed, args.count, len(files), args.per_file))
    print("time: %.1fs (generate %.1fs, CPython %.1fs, anfora both engines %.1fs, jobs %d)" % (
        total, t_gen, t_cpy, t_af, args.jobs))
    print("CPython errors: %d" % len(cpy_errors))
    for m in cpy_errors[:10]:
        print("  " + m)
    print("refusals: %d" % len(refusals))
    for m in refusals[:10]:
        print("== " + m)
    print("mismatches: %d" % len(mismatches))
    for m in mismatches[:20]:
        print("== " + m)
    ok = not (refusals or mismatches or cpy_errors)
    if ok and not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    elif not ok:
        print("files kept in %s" % tmp)
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--out")
    ap.add_argument("--per-file", type=int, default=50)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--anfora", default=os.environ.get("ANFORA_BIN", "anfora"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", help="generate into this directory and keep it (--check)")
    args = ap.parse_args(argv)
    if args.check:
        return check(args)
    if not args.out:
        ap.error("--out DIR is required without --check")
    generate(args.seed, args.count, args.out, args.per_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
