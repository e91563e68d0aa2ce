"""W2 (../shared/reference/bench): one training step of LeNet-5 on a batch of 64 28x28
images: conv 5x5 (1->6), ReLU, 2x2 max pool, conv 5x5 (6->16), ReLU, 2x2 max pool, dense
256-120-84-10 with ReLUs, softmax cross-entropy on one-hot labels, value_and_grad over the ten
Parameters and SGD (learning rate 0.01), as one compiled call. The Rust benchmark
(benches/benches/w2.rs) and the Python one (benches/python/bench_anfora.py) run this file."""

import anfora
from anfora import ops, value_and_grad


def _he(shape, fan_in):
    return anfora.Parameter(ops.normal(shape) * (2.0 / fan_in) ** 0.5)


C1 = _he((6, 1, 5, 5), 25)
c1 = anfora.Parameter(ops.zeros((6,)))
C2 = _he((16, 6, 5, 5), 150)
c2 = anfora.Parameter(ops.zeros((16,)))
F1 = _he((256, 120), 256)
f1 = anfora.Parameter(ops.zeros((120,)))
F2 = _he((120, 84), 120)
f2 = anfora.Parameter(ops.zeros((84,)))
F3 = _he((84, 10), 84)
f3 = anfora.Parameter(ops.zeros((10,)))
PARAMS = (C1, c1, C2, c2, F1, f1, F2, f2, F3, f3)


def logits(x):
    h = ops.max_pool2d(ops.relu(ops.conv2d(x, C1) + ops.reshape(c1, (1, 6, 1, 1))), 2)
    h = ops.max_pool2d(ops.relu(ops.conv2d(h, C2) + ops.reshape(c2, (1, 16, 1, 1))), 2)
    h = ops.reshape(h, (h.shape[0], 256))
    h = ops.relu(h @ F1 + f1)
    h = ops.relu(h @ F2 + f2)
    return h @ F3 + f3


def loss(x, y):
    return -ops.mean(ops.sum(ops.log_softmax(logits(x), 1) * y, axis=1))


def step(x, y):
    """One training step; returns the loss before the update."""
    l, g = value_and_grad(loss, argnums=None, weights=PARAMS)(x, y)
    for p, d in zip(PARAMS, g):
        ops.sgd(p, d, 0.01)
    return l
