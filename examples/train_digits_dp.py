"""Data-parallel training of the digits LeNet over MPI (issue 30).

    mpirun -np N python examples/train_digits_dp.py [--epochs E] [--global-batch G]
        [--seed S] [--dtype float32|float64] [--steps K] [--losses FILE] [--export DIR]
    python examples/train_digits_dp.py --single ...      # the same training in one process

Every process builds the same LeNet, takes the same shuffled order of the training set
(same seed) and, for each global batch of G images, trains on its own contiguous G/N of
them; `TrainOneStepCell(..., data_parallel=True)` averages the gradients over the
processes, so every process applies the update of the whole global batch and the losses
are those of one process training on G images at a time. Rank 0 prints, writes the losses
(`--losses`) and exports the trained model (`--export`).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import anfora  # noqa: E402
from anfora import distributed as dist, nn  # noqa: E402
from train_digits import lenet, load_digits  # noqa: E402


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--global-batch", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--steps", type=int, default=0, help="stop after this many steps (0: all)")
    p.add_argument("--bucket-bytes", type=int, default=1 << 20,
                   help="gradient bytes per all-reduce (smaller: more buckets, more overlap)")
    p.add_argument("--losses", help="write the losses of every step to this JSON file")
    p.add_argument("--export", help="rank 0 exports the trained model into this directory")
    p.add_argument("--single", action="store_true",
                   help="one process, no MPI: the reference the data-parallel run must equal")
    return p.parse_args(argv)


def main(argv=None):
    args = parse(argv)
    if not args.single:
        dist.init()
    rank, size = dist.rank(), dist.size()
    if args.global_batch % size:
        raise SystemExit(f"--global-batch {args.global_batch} does not split over {size} processes")
    (x_train, y_train), (x_test, y_test) = load_digits(args.seed)
    x_train, x_test = x_train[:, None].astype(args.dtype), x_test[:, None].astype(args.dtype)
    net = lenet(args.seed, dtype=args.dtype)
    loss_net = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    optimizer = nn.Adam(net.trainable_params(), learning_rate=3e-3)
    step = nn.TrainOneStepCell(loss_net, optimizer, data_parallel=not args.single,
                               bucket_bytes=args.bucket_bytes)
    g, shard = args.global_batch, args.global_batch // size
    batches = len(x_train) // g
    rng = np.random.default_rng(args.seed)
    losses, steps = [], 0
    if rank == 0:
        print(f"lenet: {size} process(es), global batch {g} ({shard} per process), {args.dtype}")
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(x_train))
        start = time.perf_counter()
        for i in range(batches):
            idx = order[i * g:(i + 1) * g][rank * shard:(rank + 1) * shard]
            losses.append(float(step(anfora.tensor(x_train[idx]), anfora.tensor(y_train[idx]))))
            steps += 1
            if steps == args.steps:
                break
        seconds = time.perf_counter() - start
        if rank == 0:
            acc = float(np.mean(np.argmax(np.asarray(net(anfora.tensor(x_test))), axis=1) == y_test))
            print(f"  epoch {epoch}: mean loss {np.mean(losses[-batches:]):.4f}, "
                  f"test accuracy {acc:.3f}, {seconds * 1000:.0f} ms")
        if steps == args.steps:
            break
    if rank == 0:
        if args.losses:
            with open(args.losses, "w") as f:
                json.dump({"processes": size, "losses": losses}, f)
        if args.export:
            os.makedirs(args.export, exist_ok=True)
            path = os.path.join(args.export, "lenet_dp.anfora")
            anfora.export(net, anfora.TensorSpec(x_test.shape, args.dtype), file_name=path)
            print(f"  exported to {path}")


if __name__ == "__main__":
    main()
