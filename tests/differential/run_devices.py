#!/usr/bin/env python3
"""Run the corpus's programs on two devices with the `anfora` command and compare.

Usage:  run_devices.py ANFORA DEVICE FILE_OR_DIR [...]

Each program runs as `ANFORA run FILE ARGS` (on the CPU) and `ANFORA run --device DEVICE FILE
ARGS`, its arguments from the `# args:` comment within its first 5 lines, as run_cpython.py
reads them. The two runs must agree: the same exit status and the same output, where numbers
may differ by 1e-5 relative (float32 sums in another order). Prints one line per program that
does not agree and a summary; exits 1 if any does. The GPU machine runs it with DEVICE
cuda:0 (scripts/gpu-bench.sh).
"""

import ast
import os
import re
import subprocess
import sys

NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+(?:e[-+]?\d+)?|nan|-?inf")


def arguments(path):
    with open(path) as f:
        for line in f.readlines()[:5]:
            if line.startswith("# args:"):
                args = ast.literal_eval("(" + line[len("# args:"):].strip() + ",)")
                return [repr(a) for a in args]
    return []


def run(anfora, path, args, device=None):
    cmd = [anfora, "run"] + (["--device", device] if device else []) + [path, "--entry", "main"] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return (None, "timeout")
    return (p.returncode, p.stdout + p.stderr)


def agree(a, b):
    if a == b:
        return True
    if a[0] != b[0]:
        return False
    ta, tb = NUMBER.split(a[1]), NUMBER.split(b[1])
    na, nb = NUMBER.findall(a[1]), NUMBER.findall(b[1])
    if ta != tb or len(na) != len(nb):
        return False
    for x, y in zip(na, nb):
        fx, fy = float(x), float(y)
        if fx != fy and not (fx != fx and fy != fy) and abs(fx - fy) > 1e-5 * max(abs(fx), abs(fy)):
            return False
    return True


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    anfora, device, paths = argv[1], argv[2], argv[3:]
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".py"))
        else:
            files.append(p)
    bad = 0
    for path in files:
        args = arguments(path)
        cpu, dev = run(anfora, path, args), run(anfora, path, args, device)
        if not agree(cpu, dev):
            bad += 1
            print(f"DIFFERS {path}: cpu exit {cpu[0]}, {device} exit {dev[0]}")
            print("  cpu:   " + cpu[1].strip().replace("\n", "\n         ")[:600])
            print(f"  {device}: " + dev[1].strip().replace("\n", "\n         ")[:600])
    print(f"{len(files) - bad} of {len(files)} programs agree on cpu and {device}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
