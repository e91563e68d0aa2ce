# The digits LeNet (examples/train_digits.py) as a plain function of module-level Parameters:
# a "same" convolution, max pooling, a strided convolution with explicit padding, flatten and
# two dense layers. Weights are multiples of 1/8 and the tests' inputs multiples of 1/4, so
# every product and sum is exact in float32.
import anfora
from anfora import ops


def init(shape, n, scale):
    w = ops.sin(ops.arange(n, dtype=anfora.float32) * 0.731 + 0.25) * scale // 1.0 / 8.0
    return ops.reshape(w, shape)


c1 = anfora.Parameter(init((8, 1, 3, 3), 8 * 9, 4.0), name="c1")
c2 = anfora.Parameter(init((16, 8, 3, 3), 16 * 8 * 9, 2.0), name="c2")
d1 = anfora.Parameter(init((64, 32), 64 * 32, 2.0), name="d1")
e1 = anfora.Parameter(init((32,), 32, 2.0), name="e1")
d2 = anfora.Parameter(init((32, 10), 32 * 10, 2.0), name="d2")
e2 = anfora.Parameter(init((10,), 10, 2.0), name="e2")


def lenet(x):
    y = ops.conv2d(x, c1, 1, "same")
    y = ops.max_pool2d(ops.relu(y), 2)
    y = ops.conv2d(y, c2, (2, 2), (1, 1))
    y = ops.relu(y)
    y = ops.reshape(y, (y.shape[0], -1))
    y = ops.relu(y @ d1 + e1)
    return y @ d2 + e2
