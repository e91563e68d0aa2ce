# The newer ops inside loops, branches, recursion and closures: a small
# attention-like step, an argmax-driven branch, clipping in a while loop and
# running log-sum-exp accumulation.
from anfora import ops


def q(t):
    return (t * 1000).astype("int64")


def attend(query, keys, values):
    scores = ops.matmul(keys, query)
    w = ops.softmax(scores)
    return ops.matmul(ops.expand_dims(w, 0), values)


def pick(x):
    k = ops.argmax(x)
    if k == 0:
        return ops.gelu(x)
    elif k == 1:
        return ops.silu(x)
    return ops.softplus(x)


def clamp_until(x, limit):
    steps = 0
    while ops.abs(x).max() > limit:
        x = ops.clip(x * 0.5, -100.0, 100.0)
        steps = steps + 1
    return x, steps


def running_lse(chunks):
    acc = ops.tensor([-float("inf")])
    for c in chunks:
        acc = ops.logsumexp(ops.concat([acc, c]), keepdims=True)
    return acc


def depth(x, n):
    if n == 0:
        return x
    return depth(ops.pad(x, 1, constant_values=n), n - 1)


def main():
    keys = ops.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    values = ops.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    out = attend(ops.tensor([2.0, -1.0]), keys, values)
    print(q(out), out.shape)
    for v in ((3.0, 1.0, 0.0), (0.0, 2.0, 1.0), (0.0, 0.0, 1.0)):
        print(q(pick(ops.tensor(v))))
    y, n = clamp_until(ops.tensor([300.0, -50.0, 7.0]), 10.0)
    print(y, n)
    chunks = (ops.tensor([0.0, 1.0]), ops.tensor([2.0]), ops.tensor([3.0, 4.0, 5.0]))
    lse = running_lse(chunks)
    print(q(lse), q(ops.logsumexp(ops.concat(chunks))), lse.shape)
    print(depth(ops.tensor([[0]]), 2))
    scale = 2.0

    def scaled_softmax(t):
        return ops.softmax(t * scale)

    probs = scaled_softmax(ops.tensor([0.0, 1.0, 2.0]))
    print(q(probs), ops.argmax(probs), ops.one_hot(ops.argmax(probs, keepdims=True), 3))
    parts = ops.split(ops.arange(8) * 1.0, 4)
    best = 0
    for i in range(len(parts)):
        if ops.sign(parts[i] - 3.5).sum() > 0:
            best = i
            break
    print("first positive part", best, parts[best])
    return (ops.clip(ops.tensor([5, -5]), -2, 2), n)
