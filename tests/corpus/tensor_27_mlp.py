# A tiny two-layer MLP forward pass in float32.
from anfora import ops

W1 = ((0.5, -0.25, 0.125), (0.75, 0.5, -1.0))
B1 = (0.1, 0.0, -0.1)
W2 = ((1.0,), (-1.0,), (0.5,))


def dense(x, w, b):
    return x @ w + b


def forward(x):
    h = ops.relu(dense(x, ops.tensor(W1), ops.tensor(B1)))
    print("hidden:", h)
    out = ops.sigmoid(h @ ops.tensor(W2))
    return out


def main():
    x = ops.tensor([[1.0, 2.0], [-1.0, 0.5], [0.0, 0.0]])
    y = forward(x)
    # sigmoid's last bits are implementation-specific: print 4 decimals (truncated)
    print("out x 1e4:", (y * 10000).astype("int32"), y.dtype, y.shape)
    print("classes:", y > 0.5)
    return (y * 10000).astype("int32")
