# A 1-d convolution computed with slicing in a loop.
from anfora import ops


def conv1d(x, k):
    n = len(x) - len(k) + 1
    out = ops.zeros(n)
    for i in range(len(k)):
        out = out + x[i:i + n] * k[i]
    return out


def main():
    x = ops.arange(10).astype("float32")
    k = ops.tensor([1.0, -2.0, 1.0])
    y = conv1d(x, k)
    print(y, y.shape)
    smooth = conv1d(x * x, ops.tensor([0.25, 0.5, 0.25]))
    print(smooth)
    return smooth.sum()
