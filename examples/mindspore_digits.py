"""The digits MLP of train_digits.py written as a MindSpore 2.x graph-mode script: only the
import line names anfora (`import anfora.compat.mindspore as ms` where MindSpore's script has
`import mindspore as ms`). Trains on scikit-learn's bundled digits and prints the test
accuracy.

    python examples/mindspore_digits.py [--epochs N] [--device CPU|GPU]
"""

import argparse
import sys

import numpy as np

import anfora.compat.mindspore as ms
from anfora.compat.mindspore import Tensor, context, nn
from anfora.compat.mindspore import dataset as ds
from anfora.compat.mindspore.ops import operations as P


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(64, 128, activation="relu")
        self.fc2 = nn.Dense(128, 10)

    def construct(self, x):
        return self.fc2(self.fc1(self.flatten(x)))


class Accuracy(nn.Cell):
    """The fraction of argmax predictions equal to the labels, computed in graph mode."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.equal = P.Equal()
        self.cast = P.Cast()
        self.mean = P.ReduceMean()

    def construct(self, x, y):
        predicted = ms.ops.argmax(self.net(x), 1)
        return self.mean(self.cast(self.equal(predicted, y), ms.float32))


def load(seed):
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_test = len(x) // 5
    return (x[n_test:], y[n_test:]), (x[:n_test], y[:n_test])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--device", default="CPU")
    parser.add_argument("--min-accuracy", type=float, default=0.95)
    args = parser.parse_args(argv)
    context.set_context(mode=context.GRAPH_MODE, device_target=args.device)
    ms.set_seed(0)
    (x_train, y_train), (x_test, y_test) = load(0)
    net = MLP()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Adam(net.trainable_params(), learning_rate=3e-3)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), optimizer)
    accuracy = Accuracy(net)
    # Shuffled anew each epoch; the last partial batch is dropped (one compiled shape).
    train_set = ds.NumpySlicesDataset((x_train, y_train), column_names=["image", "label"],
                                      shuffle=True).batch(args.batch, drop_remainder=True)
    batches = train_set.get_dataset_size()
    for epoch in range(1, args.epochs + 1):
        total = 0.0
        for image, label in train_set.create_tuple_iterator():
            total += float(step(image, label).asnumpy())
        acc = float(accuracy(Tensor(x_test), Tensor(y_test)).asnumpy())
        print(f"epoch {epoch:2d}: loss {total / batches:.4f}  test accuracy {acc:.3f}")
    print(f"test accuracy {acc:.3f}")
    return 0 if acc >= args.min_accuracy else 1


if __name__ == "__main__":
    sys.exit(main())
