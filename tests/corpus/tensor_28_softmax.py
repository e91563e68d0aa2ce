# Softmax along the last axis with keepdims, and log-sum-exp.
from anfora import ops


def softmax(x):
    m = x.max(axis=-1, keepdims=True)
    e = ops.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True)


def logsumexp(x):
    m = x.max()
    return m + ops.log(ops.exp(x - m).sum())


def main():
    x = ops.tensor([[1.0, 2.0, 3.0], [1000.0, 1000.0, 1000.0]])
    # exp/log differ in the last bits between implementations: print quantized values
    p = softmax(x)
    print((p * 100000).astype("int64"))
    print(abs(p.sum(axis=1) - 1) < 1e-6, p.dtype)
    a = logsumexp(ops.tensor([0.0, 0.0]))
    b = logsumexp(ops.tensor([1e3, 1e3], dtype="float64"))
    print(int(a * 1000000), int(b * 1000000), a.dtype, b.dtype)
    s = softmax(ops.tensor([0.0, 1.0], dtype="float64"))
    return ((s * 1000000).astype("int64"), s.shape)
