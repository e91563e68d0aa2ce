# Row normalization and standardization with broadcasting.
from anfora import ops


def standardize(x):
    mu = x.mean(axis=0, keepdims=True)
    d = x - mu
    var = (d * d).mean(axis=0, keepdims=True)
    return d / ops.sqrt(var + 1e-5)


def main():
    x = ops.tensor([[1.0, 10.0], [2.0, 20.0], [3.0, 30.0], [4.0, 40.0]])
    rows = x / x.sum(axis=1, keepdims=True)
    print(rows)
    s = standardize(x)
    print(s)
    print(abs(s.mean(axis=0)) < 1e-6, s.shape, s.dtype)
    return s.max(axis=0)
