import anfora
from anfora import ops


def init(shape, n, scale):
    return ops.reshape(ops.sin(ops.arange(n, dtype=anfora.float32) * 0.731 + 0.25), shape) * scale


c1 = anfora.Parameter(init((8, 1, 3, 3), 8 * 9, 0.33), name="c1")
c2 = anfora.Parameter(init((16, 8, 3, 3), 16 * 8 * 9, 0.12), name="c2")
d1 = anfora.Parameter(init((64, 32), 64 * 32, 0.125), name="d1")
e1 = anfora.Parameter(init((32,), 32, 0.1), name="e1")
d2 = anfora.Parameter(init((32, 10), 32 * 10, 0.177), name="d2")
e2 = anfora.Parameter(init((10,), 10, 0.1), name="e2")


def lenet(x):
    y = ops.conv2d(x, c1, (1, 1), "same", (1, 1), 1)
    y = ops.max_pool2d(ops.relu(y), (2, 2), (2, 2), (0, 0))
    y = ops.conv2d(y, c2, (2, 2), (1, 1), (1, 1), 1)
    y = ops.max_pool2d(ops.relu(y), (2, 2), (1, 1), (0, 0))
    y = ops.reshape(y, (y.shape[0], -1))
    y = ops.relu(y @ d1 + e1)
    return y @ d2 + e2
