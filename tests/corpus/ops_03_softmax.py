# ops.softmax, ops.log_softmax (axis=-1 by default) and ops.logsumexp (axis None,
# int or tuple, keepdims): large values, infinities, NaN and empty tensors.
# exp/log differ in the last bits between implementations, so values are printed
# quantized (q) or compared with a tolerance; inf/nan/0/1 come out exactly.
from anfora import ops


def q(t):
    return (t * 100000).astype("int64")


def q2(t):
    # for values near 1000: float32's last bits there are worth 6e-5
    return (t * 100).astype("int64")


def main():
    x = ops.tensor([[1.0, 2.0, 3.0], [1000.0, 1000.0, 999.0]])
    x64 = ops.cast(x, "float64")
    for t in (x, x64):
        p = ops.softmax(t)
        print(t.dtype, q(p), p.dtype, abs(p.sum(axis=-1) - 1) < 1e-6)
        print(" axis0", q(ops.softmax(t, axis=0)), q(ops.softmax(t, 0).sum(axis=0) + 0.000001))
        print(" log", q(ops.log_softmax(t)), q(ops.log_softmax(t, axis=0)))
        print(" lse", q2(ops.logsumexp(t)), q2(ops.logsumexp(t, 1)), q2(ops.logsumexp(t, axis=0)))
        print(" keep", q2(ops.logsumexp(t, axis=(0, 1), keepdims=True)), ops.logsumexp(t, -1, True).shape)
    print(ops.softmax(ops.tensor([0.0, 0.0, 0.0, 0.0])), ops.softmax(ops.tensor([5.0])), ops.log_softmax(ops.tensor([[7.0]])))
    inf = float("inf")
    e = ops.tensor([[1.0, inf], [-inf, -inf], [0.0, -inf], [float("nan"), 1.0]])
    print(ops.softmax(e), ops.log_softmax(e))
    print(ops.logsumexp(e, axis=1), ops.logsumexp(ops.tensor([-inf, -inf])), ops.logsumexp(ops.tensor([inf, -inf])))
    empty = ops.zeros((0, 3))
    print(ops.softmax(empty).shape, ops.log_softmax(empty, 0).shape, ops.logsumexp(empty, 0), ops.logsumexp(empty))
    print(ops.logsumexp(empty, 1).shape, ops.logsumexp(ops.zeros((2, 0)), axis=1, keepdims=True))
    b = ops.arange(24).reshape(2, 3, 4) * 0.5
    s = ops.softmax(b, axis=1)
    print(s.shape, q(s.sum(axis=1) + 0.000001).min(), q(ops.logsumexp(b, (0, 2))), ops.logsumexp(b, [-1, 0]).shape)
    lse = ops.logsumexp(x64, axis=1, keepdims=True)
    print(q(ops.exp(x64 - lse)), q(ops.log_softmax(x64) - (x64 - lse)) == 0)
    scores = ops.tensor([0.5, 0.25, 0.125], dtype="float64")
    k = 0
    while ops.softmax(scores).max() < 0.9:
        scores = scores * 2.0
        k = k + 1
    print("sharpened", k, "times", q(ops.softmax(scores)))
    return (q(ops.log_softmax(x)), ops.logsumexp(ops.tensor([0.0])), ops.softmax(ops.tensor([[2.0], [3.0]])))
