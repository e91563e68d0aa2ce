# A nested function keeps a nonlocal total; the enclosing function updates its own array
# in place between calls.
from anfora import ops


def main():
    seen = 0.0
    buf = ops.zeros(3)

    def take(v):
        nonlocal seen
        seen = seen + v

    for i in range(3):
        buf[i] = i + 0.5
        take(float(buf[i]))
        buf += 1.0
    print(buf, seen)
    return seen
