#!/usr/bin/env python3
"""Flag corpus programs whose output depends on the last bits of transcendental results.

numpy's float32 (and, with AVX-512, float64) exp/log/tanh/sin/cos/power kernels
are SIMD approximations that are not correctly rounded and differ between CPUs;
libm (which anfora's Rust side and CPython's `math` use) differs from them too.
A corpus program should therefore not print such results at full precision.

This script runs each program normally and then with every result of
`ops.exp/log/tanh/sin/cos/sigmoid`, of the special functions built on them or on
libm (`log1p/expm1/erf/gelu/silu/softplus`), of the softmax family
(`softmax/log_softmax/logsumexp`) and of float tensor `**` nudged by up to
2 ULPs (several random seeds; inf/nan/0 and short-mantissa values such as
exp(0) = 1 or 1.5 ** 2 = 2.25 are left alone). Programs whose JSON record
changes are listed.

Usage:  PYTHONPATH=tests/oracle check_stability.py FILE_OR_DIR [...]
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_cpython as R  # noqa: E402  (puts tests/oracle on sys.path)

import anfora  # noqa: E402
from anfora import _core, ops  # noqa: E402

MATH = ("exp", "log", "tanh", "sin", "cos", "sigmoid",
        "log1p", "expm1", "erf", "gelu", "silu", "softplus",
        "softmax", "log_softmax", "logsumexp")
_state = {"rng": None}


def _exact_looking(v):
    """inf/nan/0 and values with a short mantissa (exp(0) = 1, sigmoid(0) = 0.5,
    2.0 ** 3 = 8, 1.5 ** 2 = 2.25): every implementation gets these exactly."""
    if not np.isfinite(v) or v == 0:
        return True
    mantissa = np.frexp(np.float64(v))[0]
    return float(mantissa * 2.0 ** 16).is_integer()


def _nudge_array(a):
    a = np.array(a, copy=True)
    if a.dtype.kind != "f" or a.size == 0:
        return a
    steps = _state["rng"].integers(-2, 3, size=a.shape)
    flat, st = a.reshape(-1), steps.reshape(-1)
    for i in range(flat.size):
        if _exact_looking(flat[i]):
            continue
        for _ in range(abs(int(st[i]))):
            flat[i] = np.nextafter(flat[i], np.inf if st[i] > 0 else -np.inf)
    return flat.reshape(a.shape)


def _nudge(result):
    if _state["rng"] is None:
        return result
    if isinstance(result, _core.Tensor):
        return _core.wrap(_nudge_array(result._a))
    if type(result) is float:
        return float(_nudge_array(np.float64(result)))
    return result


def _wrap(fn):
    def g(*args, **kw):
        return _nudge(fn(*args, **kw))
    return g


for _name in MATH:
    setattr(ops, _name, _wrap(getattr(ops, _name)))
_core.Tensor.__pow__ = _wrap(_core.Tensor.__pow__)
_core.Tensor.__rpow__ = _wrap(_core.Tensor.__rpow__)


def main(argv):
    unstable = []
    files = R.collect(argv)
    for path in files:
        _state["rng"] = None
        base = R.run_file(path)
        for seed in range(6):
            _state["rng"] = np.random.default_rng(seed)
            if R.run_file(path) != base:
                unstable.append(path)
                break
    _state["rng"] = None
    for p in unstable:
        print(p)
    print("%d files, %d sensitive to last-ULP changes" % (len(files), len(unstable)),
          file=sys.stderr)
    return 1 if unstable else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
