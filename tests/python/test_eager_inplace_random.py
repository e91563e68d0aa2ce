"""Random sequences of in-place updates through names, basic-index views and transposes, run
on numpy arrays and on anfora's eager Tensors: after every step, every live name must hold
the same values in both (issue 27's object model, `crates/anfora-py/src/array.rs`)."""

import random

import numpy as np
import pytest

import anfora

INDEXES = [
    (0,), (1,), (-1,), (slice(None), 0), (slice(1, None),), (slice(None, None, 2),),
    (slice(None), slice(None, None, -1)), (Ellipsis, 1), (1, slice(0, 2)), (None, 0),
    (slice(None), None, 1), ((0, 1),),
]
OPS = ["+=", "-=", "*=", "="]


def _key(index):
    return index[0] if len(index) == 1 else index


def _program(seed, steps=12):
    """A list of steps: ("view", src, index, dst), ("T", src, dst), ("update", name, index or
    None, op, value)."""
    r = random.Random(seed)
    names = ["x"]
    prog = []
    for _ in range(steps):
        kind = r.random()
        src = r.choice(names)
        if kind < 0.35 and len(names) < 6:
            dst = "v%d" % len(names)
            prog.append(("view", src, r.choice(INDEXES), dst))
            names.append(dst)
        elif kind < 0.45 and len(names) < 6:
            dst = "v%d" % len(names)
            prog.append(("T", src, dst))
            names.append(dst)
        else:
            index = r.choice([None] + INDEXES)
            prog.append(("update", src, index, r.choice(OPS), r.choice([1.0, -2.0, 0.5])))
    return prog, names


def _run(prog, make):
    env = {"x": make(np.arange(12.0).reshape(3, 4))}
    states = []
    for step in prog:
        try:
            if step[0] == "view":
                _, src, index, dst = step
                env[dst] = env[src][_key(index)]
            elif step[0] == "T":
                _, src, dst = step
                env[dst] = env[src].T
            else:
                _, name, index, op, v = step
                target = env[name]
                if index is None:
                    if op == "=":
                        target[...] = v
                    elif op == "+=":
                        target += v
                    elif op == "-=":
                        target -= v
                    else:
                        target *= v
                    env[name] = target
                else:
                    k = _key(index)
                    if op == "=":
                        target[k] = v
                    elif op == "+=":
                        target[k] += v
                    elif op == "-=":
                        target[k] -= v
                    else:
                        target[k] *= v
        except (IndexError, KeyError, TypeError, ValueError) as e:
            states.append(type(e).__name__)
            continue
        states.append({n: np.array(np.asarray(v), dtype=np.float64) for n, v in env.items()})
    return states


@pytest.mark.parametrize("seed", range(300))
def test_random_updates_through_views_match_numpy(seed):
    prog, _ = _program(seed)
    want = _run(prog, lambda a: a.copy())
    got = _run(prog, lambda a: anfora.tensor(a))
    assert len(want) == len(got)
    for i, (w, g) in enumerate(zip(want, got)):
        where = f"seed {seed}, step {i}: {prog[i]}"
        if isinstance(w, str) or isinstance(g, str):
            assert w == g, f"{where}: numpy {w if isinstance(w, str) else 'ok'}, anfora {g if isinstance(g, str) else 'ok'}"
            continue
        assert w.keys() == g.keys()
        for n in w:
            np.testing.assert_array_equal(g[n], w[n], err_msg=f"{where}: name {n}")
