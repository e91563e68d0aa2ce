# In-place updates keep a 16-bit storage dtype.
import anfora
from anfora import ops


def main():
    h = ops.zeros(4, dtype=anfora.float16) + 1.0
    h *= 1.5
    h[0] = 3.14159
    h[1:3] += 0.001
    print(h, h.dtype)
    return h.sum()
