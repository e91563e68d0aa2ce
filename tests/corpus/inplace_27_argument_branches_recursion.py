# In-place updates of an argument in branches, loops and recursion: only the paths that run
# change the caller's array.
from anfora import ops


def clip_into(x, hi):
    for i in range(3):
        if x[i] > hi:
            x[i] = hi


def fill_from(buf, i, v):
    if i < buf.shape[0]:
        buf[i] = v
        fill_from(buf, i + 1, v * 2.0)


def maybe(x, flag):
    if flag:
        x += 100.0
    return flag


def main():
    a = ops.tensor([0.5, 3.0, 9.0])
    clip_into(a, 2.0)
    print(a)
    buf = ops.zeros(4)
    fill_from(buf, 1, 1.5)
    print(buf)
    c = ops.ones(2)
    print(maybe(c, False), c)
    print(maybe(c, True), c)
    return buf
