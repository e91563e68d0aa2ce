"""Trains the W1 MLP (784-512-512-10, ReLU, softmax cross-entropy, SGD) on synthetic data and
prints the loss falling, one progress line per epoch.

    anfora run examples/train_mlp.py            # compiled by the anfora CLI (20 epochs)
    anfora run examples/train_mlp.py 5          # 5 epochs
    python3 examples/train_mlp.py               # the same file with the Python package

The data are 512 random inputs labelled by a fixed random linear "teacher", so the network can
learn them; each epoch is four training steps of batch 128, each one compiled call (forward,
backward and the SGD updates of all six Parameters).
"""
import anfora
from anfora import ops, value_and_grad

anfora.set_seed(7)
W1 = anfora.Parameter(ops.normal((784, 512)) * 0.05, name="W1")
b1 = anfora.Parameter(ops.zeros((512,)), name="b1")
W2 = anfora.Parameter(ops.normal((512, 512)) * 0.0625, name="W2")
b2 = anfora.Parameter(ops.zeros((512,)), name="b2")
W3 = anfora.Parameter(ops.normal((512, 10)) * 0.0625, name="W3")
b3 = anfora.Parameter(ops.zeros((10,)), name="b3")
PARAMS = (W1, b1, W2, b2, W3, b3)
TEACHER = ops.normal((784, 10))
BAR = 20


def loss_fn(x, y):
    h = ops.relu(x @ W1 + b1)
    h = ops.relu(h @ W2 + b2)
    logits = h @ W3 + b3
    return -ops.mean(ops.sum(ops.log_softmax(logits, -1) * y, axis=-1))


def step(x, y, lr):
    loss, grads = value_and_grad(loss_fn, argnums=None, weights=PARAMS)(x, y)
    for p, g in zip(PARAMS, grads):
        ops.sgd(p, g, lr)
    return loss


def accuracy(x, labels):
    h = ops.relu(x @ W1 + b1)
    h = ops.relu(h @ W2 + b2)
    return ops.mean(ops.argmax(h @ W3 + b3, axis=-1) == labels)


def main(epochs=20):
    x = ops.normal((512, 784))
    labels = ops.argmax(x @ TEACHER, axis=-1)
    y = ops.one_hot(labels, 10)
    xs = ops.split(x, 4)
    ys = ops.split(y, 4)
    print("training the 784-512-512-10 MLP on 512 synthetic examples,", epochs, "epochs")
    first = None
    loss = None
    for epoch in range(epochs):
        total = ops.zeros(())
        for xb, yb in zip(xs, ys):
            total = total + step(xb, yb, 0.05)
        loss = total / 4
        if first is None:
            first = loss
        filled = (epoch + 1) * BAR // epochs
        print("epoch", epoch + 1, "[" + "#" * filled + "." * (BAR - filled) + "]", "loss", loss)
    print("loss", first, "->", loss, "; training accuracy", accuracy(x, labels))
    return bool(loss < first)


if __name__ == "__main__":
    # From Python, main runs as plain Python and each step is one compiled call (the anfora
    # CLI compiles main whole, loops included).
    step = anfora.jit(step)
    main()
