"""Trains classifiers on scikit-learn's bundled digits dataset (1797 8x8 images, no download)
with anfora: an MLP and a LeNet-style CNN (convolutions and max pooling). Each
training step (forward, loss, gradient and optimizer update) is one compiled call.

    python examples/train_digits.py [--epochs N] [--model mlp|lenet|both] [--seed S] [--export DIR]
                                    [--device cpu|cuda:N] [--qat]

With --export, each trained model is also written as a model file (DIR/NAME.anfora, for
`anfora run-model`, `anfora.load` and the C runtime's examples/c/classify_digits), with the
test images and labels as .npy files beside it, and its quantized forms (NAME_int8.anfora,
calibrated on training images, and NAME_weight_int8.anfora), each evaluated. With --qat the
networks train quant-aware (FakeQuant cells) and NAME_int8.anfora is converted from their
ranges, without calibration data.
"""

import argparse
import sys
import time

import numpy as np

import anfora
from anfora import nn


def load_digits(seed):
    from sklearn.datasets import load_digits as sk_load_digits

    digits = sk_load_digits()
    x = (digits.images / 16.0).astype(np.float32)  # (1797, 8, 8) in [0, 1]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_test = len(x) // 5
    return (x[n_test:], y[n_test:]), (x[:n_test], y[:n_test])


def quant_aware(cells, qat):
    """With `qat`, a FakeQuant after the input and after each ReLU: training sees the int8
    model's rounding, and the converter takes each activation's range from it."""
    if not qat:
        return nn.SequentialCell(*cells)
    out = [nn.FakeQuant()]
    for c in cells:
        out.append(c)
        if isinstance(c, nn.ReLU):
            out.append(nn.FakeQuant())
    return nn.SequentialCell(*out)


def mlp(seed, qat=False, dtype="float32"):
    return quant_aware([
        nn.Flatten(),
        nn.Dense(64, 128, seed=seed, dtype=dtype),
        nn.ReLU(),
        nn.Dense(128, 10, seed=seed + 1, dtype=dtype),
    ], qat)


def lenet(seed, qat=False, dtype="float32"):
    return quant_aware([
        nn.Conv2d(1, 8, 3, pad_mode="same", seed=seed, dtype=dtype),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, pad_mode="same", seed=seed + 1, dtype=dtype),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Dense(16 * 2 * 2, 64, seed=seed + 2, dtype=dtype),
        nn.ReLU(),
        nn.Dense(64, 10, seed=seed + 3, dtype=dtype),
    ], qat)


def progress(epoch, epochs, done, total, loss, width=24):
    filled = width * done // total
    bar = "#" * filled + "." * (width - filled)
    sys.stdout.write(f"\r  epoch {epoch:2d}/{epochs} [{bar}] {done:3d}/{total} loss {loss:.4f}")
    sys.stdout.flush()


def accuracy(net, x, y):
    logits = np.asarray(net(anfora.tensor(x)))
    return float((logits.argmax(axis=1) == y).mean())


def train(name, net, data, epochs, batch, seed):
    (x_train, y_train), (x_test, y_test) = data
    loss_net = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    optimizer = nn.Adam(net.trainable_params(), learning_rate=3e-3)
    step = nn.TrainOneStepCell(loss_net, optimizer)
    rng = np.random.default_rng(seed)
    batches = len(x_train) // batch  # the last partial batch is dropped: one compiled shape
    print(f"{name}: {sum(p.size for p in net.trainable_params())} parameters, "
          f"{len(x_train)} training and {len(x_test)} test images, batch {batch}")
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        order = rng.permutation(len(x_train))
        total = 0.0
        for i in range(batches):
            idx = order[i * batch:(i + 1) * batch]
            loss = float(step(anfora.tensor(x_train[idx]), anfora.tensor(y_train[idx])))
            total += loss
            progress(epoch, epochs, i + 1, batches, total / (i + 1))
        seconds = time.perf_counter() - start
        sys.stdout.write(f"  {seconds * 1000:.0f} ms/epoch  test accuracy {accuracy(net, x_test, y_test):.3f}\n")
    acc = accuracy(net, x_test, y_test)
    print(f"{name}: test accuracy {acc:.3f}")
    return acc


def export(name, net, x_train, x_test, y_test, directory, qat=False):
    """Writes the model (taking the whole test set as one batch) and the test set, then its
    quantized forms: int8 (calibrated on training images) and weight-only int8, each with
    its test accuracy and size beside the float model's."""
    import os

    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{name}.anfora")
    size = anfora.export(net, anfora.TensorSpec(x_test.shape), file_name=path)
    np.save(os.path.join(directory, f"{name}_images.npy"), x_test)
    np.save(os.path.join(directory, f"{name}_labels.npy"), y_test)
    print(f"{name}: exported to {path} ({size} bytes)")
    rows = [("QAT float32" if qat else "float32", path)]
    if qat:
        # The quant-aware model's ranges come from its FakeQuant cells: no calibration data.
        net.set_train(False)
        out = os.path.join(directory, f"{name}_int8.anfora")
        anfora.export(net, anfora.TensorSpec(x_test.shape), file_name=path)
        anfora.convert(path, out, quantize="int8")
        rows.append(("QAT int8", out))
    for mode in () if qat else ("int8", "weight-int8"):
        out = os.path.join(directory, f"{name}_{mode.replace('-', '_')}.anfora")
        calibration = x_train[: 2 * len(x_test)] if mode == "int8" else None
        anfora.convert(path, out, quantize=mode, calibration=calibration)
        rows.append((mode, out))
    for mode, file in rows:
        model = anfora.load(file)
        acc = float(np.mean(np.argmax(model(x_test).asnumpy(), axis=1) == y_test))
        print(f"{name} {mode:>12}: test accuracy {acc:.3f}, {os.path.getsize(file)} bytes")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--model", choices=["mlp", "lenet", "both"], default="both")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-accuracy", type=float, default=0.95,
                        help="exit with status 1 if a model ends below this test accuracy")
    parser.add_argument("--export", metavar="DIR",
                        help="write each trained model and the test set to DIR")
    parser.add_argument("--qat", action="store_true",
                        help="quant-aware training: FakeQuant cells in the networks, and with "
                             "--export their int8 models converted without calibration data")
    parser.add_argument("--device", default="cpu",
                        help="where the steps run: cpu, or cuda:N (anfora.devices() lists them)")
    args = parser.parse_args(argv)
    # Compiled functions run on this device; the networks' Parameters move there on the
    # first step.
    anfora.set_context(device=args.device)
    data = load_digits(args.seed)
    models = ["mlp", "lenet"] if args.model == "both" else [args.model]
    x_train, x_test = data[0][0], data[1][0]
    ok = True
    for name in models:
        net = (mlp if name == "mlp" else lenet)(args.seed, qat=args.qat)
        if name == "lenet":  # NCHW images
            model_data = ((x_train[:, None], data[0][1]), (x_test[:, None], data[1][1]))
        else:
            model_data = data
        acc = train(name, net, model_data, args.epochs, args.batch, args.seed)
        ok &= acc >= args.min_accuracy
        if args.export:
            export(name, net, model_data[0][0], *model_data[1], args.export, qat=args.qat)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
