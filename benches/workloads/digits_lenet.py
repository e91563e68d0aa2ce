# The digits LeNet of examples/train_digits.py as a plain function of module-level Parameters
# (conv 1->8 and 8->16, 3x3 "same", each with ReLU and 2x2 max pooling, then dense 64->64
# with ReLU and 64->10), for the model-file benchmarks.
import anfora
from anfora import ops

c1 = anfora.Parameter(ops.normal((8, 1, 3, 3)) * 0.3, name="c1")
c2 = anfora.Parameter(ops.normal((16, 8, 3, 3)) * 0.1, name="c2")
w1 = anfora.Parameter(ops.normal((64, 64)) * 0.1, name="w1")
b1 = anfora.Parameter(ops.zeros((64,)), name="b1")
w2 = anfora.Parameter(ops.normal((64, 10)) * 0.1, name="w2")
b2 = anfora.Parameter(ops.zeros((10,)), name="b2")


def lenet(x):
    y = ops.max_pool2d(ops.relu(ops.conv2d(x, c1, 1, "same")), 2)
    y = ops.max_pool2d(ops.relu(ops.conv2d(y, c2, 1, "same")), 2)
    y = ops.reshape(y, (y.shape[0], -1))
    y = ops.relu(y @ w1 + b1)
    return y @ w2 + b2
