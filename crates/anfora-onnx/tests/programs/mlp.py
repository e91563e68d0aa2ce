# The digits MLP (examples/train_digits.py: Flatten, Dense, ReLU, Dense) as a plain function
# of module-level Parameters, in float64, with the classifier's three readings of the logits.
import anfora
from anfora import ops


def init(shape, n, scale):
    return ops.reshape(ops.sin(ops.arange(n, dtype=anfora.float64) * 0.731 + 0.25), shape) * scale


w1 = anfora.Parameter(init((64, 32), 64 * 32, 0.125), name="w1")
b1 = anfora.Parameter(init((32,), 32, 0.1), name="b1")
w2 = anfora.Parameter(init((32, 10), 32 * 10, 0.177), name="w2")
b2 = anfora.Parameter(init((10,), 10, 0.1), name="b2")


def mlp(x):
    h = ops.reshape(x, (x.shape[0], -1))
    h = ops.relu(h @ w1 + b1)
    logits = h @ w2 + b2
    return ops.log_softmax(logits, -1), ops.softmax(logits, -1), ops.argmax(logits, -1)
