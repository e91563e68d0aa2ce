"""Data-parallel training throughput of the digits LeNet (issue 30): anfora with 2 processes
× 1 thread over MPI against 1 process × 1 thread, on the same global batch, side by side.

    .venv/bin/python benches/python/dp_scaling.py [--global-batch G] [--steps N] [--rounds R]
        [--bucket-bytes B]

Each round runs, one after the other: one process training on the whole global batch (no
MPI), then `mpirun -np 2`, each process training on its half with
`TrainOneStepCell(data_parallel=True)`. Both take the model, data and optimizer of
examples/train_digits.py in float32 and run with RAYON_NUM_THREADS=1. After --warmup steps
(the first compiles), --steps steps are timed between two barriers; rank 0 reports. Prints
each round's images/s and the ratio, then the medians as one JSON line. The PyTorch DDP
peer on the same model and batch is benches/python/dp_torch.py.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def worker(args):
    import numpy as np

    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import anfora
    from anfora import distributed as dist, nn
    from train_digits import lenet, load_digits

    if not args.single:
        dist.init()
    rank, size = dist.rank(), dist.size()
    (x, y), _ = load_digits(0)
    x = x[:, None]
    net = lenet(0)
    loss_net = nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    step = nn.TrainOneStepCell(loss_net, nn.Adam(net.trainable_params(), learning_rate=3e-3),
                               data_parallel=not args.single, bucket_bytes=args.bucket_bytes)
    g = args.global_batch
    shard = g // size
    batches = len(x) // g
    order = np.random.default_rng(0).permutation(len(x))
    # The tensors of every step, made before timing: the loop times the steps alone.
    data = []
    for i in range(batches):
        idx = order[i * g:(i + 1) * g][rank * shard:(rank + 1) * shard]
        data.append((anfora.tensor(x[idx]), anfora.tensor(y[idx])))
    for i in range(args.warmup):
        step(*data[i % batches])
    if not args.single:
        dist.barrier()
    start = time.perf_counter()
    for i in range(args.steps):
        step(*data[i % batches])
    if not args.single:
        dist.barrier()
    seconds = time.perf_counter() - start
    if rank == 0:
        print(json.dumps({"processes": size, "images_per_s": args.steps * g / seconds,
                          "ms_per_step": 1000 * seconds / args.steps}))


def measure(args, processes):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--global-batch",
           str(args.global_batch), "--steps", str(args.steps), "--warmup", str(args.warmup),
           "--bucket-bytes", str(args.bucket_bytes)]
    if processes == 1:
        cmd.append("--single")
    else:
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "core", "-np",
               str(processes)] + cmd
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--global-batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--bucket-bytes", type=int, default=1 << 20,
                   help="TrainOneStepCell's bucket_bytes (16000: the dense layers' gradients "
                        "overlap the convolutions' backward pass)")
    p.add_argument("--worker", action="store_true")
    p.add_argument("--single", action="store_true")
    args = p.parse_args()
    if args.worker:
        return worker(args)
    ratios, one, two = [], [], []
    for r in range(args.rounds):
        a = measure(args, 1)
        b = measure(args, 2)
        one.append(a["images_per_s"])
        two.append(b["images_per_s"])
        ratios.append(b["images_per_s"] / a["images_per_s"])
        print(f"round {r + 1}: 1 process {a['images_per_s']:.0f} images/s "
              f"({a['ms_per_step']:.3f} ms/step), 2 processes {b['images_per_s']:.0f} images/s "
              f"({b['ms_per_step']:.3f} ms/step): {ratios[-1]:.2f}x")
    print(json.dumps({"global_batch": args.global_batch, "one": statistics.median(one),
                      "two": statistics.median(two), "ratio": statistics.median(ratios),
                      "time": time.strftime("%H:%M UTC", time.gmtime())}))


if __name__ == "__main__":
    main()
