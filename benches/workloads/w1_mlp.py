"""W1 (../shared/reference/bench): one training step of the 784-512-512-10 ReLU MLP, batch 128,
softmax cross-entropy on one-hot labels, value_and_grad over the six Parameters and SGD
(learning rate 0.01) on each, as one compiled call. The Rust benchmark (benches/benches/w1.rs)
and the Python one (benches/python/bench_anfora.py) run this same file."""

import anfora
from anfora import ops, value_and_grad

W1 = anfora.Parameter(ops.uniform((784, 512), -0.05, 0.05), name='W1')
b1 = anfora.Parameter(ops.zeros((512,)), name='b1')
W2 = anfora.Parameter(ops.uniform((512, 512), -0.05, 0.05), name='W2')
b2 = anfora.Parameter(ops.zeros((512,)), name='b2')
W3 = anfora.Parameter(ops.uniform((512, 10), -0.05, 0.05), name='W3')
b3 = anfora.Parameter(ops.zeros((10,)), name='b3')
PARAMS = (W1, b1, W2, b2, W3, b3)


def loss(x, y):
    h = ops.relu(x @ W1 + b1)
    h = ops.relu(h @ W2 + b2)
    logits = h @ W3 + b3
    z = logits - ops.stop_gradient(ops.max(logits, axis=1, keepdims=True))
    lse = ops.log(ops.sum(ops.exp(z), axis=1, keepdims=True))
    return -ops.mean(ops.sum((z - lse) * y, axis=1))


def grads(x, y):
    """The loss and its gradient with respect to the six Parameters."""
    return value_and_grad(loss, argnums=None, weights=PARAMS)(x, y)


def step(x, y):
    """One training step; returns the loss before the update."""
    l, g = value_and_grad(loss, argnums=None, weights=PARAMS)(x, y)
    for p, d in zip(PARAMS, g):
        ops.sgd(p, d, 0.01)
    return l
