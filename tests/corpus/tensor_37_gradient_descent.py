# Linear regression by gradient descent with float64 tensors.
from anfora import ops

LR = 0.1
STEPS = 200


def loss_and_grad(w, b, x, y):
    pred = x * w + b
    err = pred - y
    loss = (err * err).mean()
    gw = (2 * err * x).mean()
    gb = (2 * err).mean()
    return loss, gw, gb


def main():
    x = ops.arange(0.0, 1.0, 0.1).astype("float64")
    y = x * 3.0 + 0.5
    w = ops.tensor(0.0, dtype="float64")
    b = ops.tensor(0.0, dtype="float64")
    for step in range(STEPS):
        loss, gw, gb = loss_and_grad(w, b, x, y)
        w = w - LR * gw
        b = b - LR * gb
        if step % 50 == 0:
            print("step", step, "loss", loss)
    print("w", w, "b", b)
    return (float(w) > 2.5, float(b) < 1.0, w.dtype)
