"""PyTorch DistributedDataParallel (gloo backend, CPU) training throughput on the digits LeNet,
the peer for anfora's own data-parallel training over MPI.

The model, data and optimizer are those of examples/train_digits.py (sklearn digits /16 as
(N,1,8,8) float32, the same seeded permutation and 20 % test split, LeNet, mean cross entropy,
Adam lr 3e-3). Each step takes one global batch of G rows from a per-epoch permutation of the
training set (the last partial batch dropped); each of the W ranks trains on its contiguous
shard of G/W rows, and DDP averages the gradients. Every rank is a process started with
torch.multiprocessing.spawn, with one intra-op and one inter-op thread. Configurations:
plain (W=1 without DDP or a process group) and DDP for each W in --world (W=1 included).

After --warmup steps, --steps steps are timed with time.perf_counter (between two
dist.barrier() calls under DDP); the whole measurement (fresh model, warmup, timed loop) runs
--repeats times and the median is reported. Prints one line per configuration, then one JSON
line with every figure and the throughput ratio of each W>1 to DDP W=1.

    /work/torch-venv/bin/python benches/python/dp_torch.py [--world 1,2] [--global-batch G]
        [--warmup N] [--steps N] [--repeats N] [--seed S]

The torch environment lives outside the repository and is made with:
    python3 -m venv /work/torch-venv && /work/torch-venv/bin/pip install -q torch numpy scikit-learn
"""

import argparse
import json
import os
import socket
import statistics
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def load_digits(seed):
    """Training and test sets exactly as examples/train_digits.py makes them (NCHW images)."""
    from sklearn.datasets import load_digits as sk_load_digits

    digits = sk_load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]  # (1797, 1, 8, 8) in [0, 1]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_test = len(x) // 5
    return (x[n_test:], y[n_test:]), (x[:n_test], y[:n_test])


def lenet():
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding="same"), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding="same"), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 2 * 2, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


def shards(x, y, global_batch, rank, world, seed):
    """Endless (images, labels) of this rank's shard of each global batch: a fresh permutation
    of the training set each epoch, as train_digits.train draws them."""
    rng = np.random.default_rng(seed)
    local = global_batch // world
    while True:
        order = rng.permutation(len(x))
        for i in range(len(x) // global_batch):
            idx = order[i * global_batch + rank * local:i * global_batch + (rank + 1) * local]
            yield torch.from_numpy(x[idx]), torch.from_numpy(y[idx])


def measure(rank, world, ddp, args, x, y):
    """One measurement: a fresh model and optimizer, warmup, then the timed loop. Returns the
    timed loop's seconds (as seen by this rank) and the last step's local loss."""
    torch.manual_seed(args.seed)  # the same initial weights in every rank (DDP broadcasts anyway)
    model = lenet()
    if ddp:
        model = DistributedDataParallel(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    batches = shards(x, y, args.global_batch, rank, world, args.seed)

    def step():
        images, labels = next(batches)
        loss = F.cross_entropy(model(images), labels)  # mean over the local shard
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # under DDP, gradients are all-reduced (averaged) here
        optimizer.step()
        return loss

    for _ in range(args.warmup):
        step()
    if ddp:
        dist.barrier()
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    if ddp:
        dist.barrier()
    return time.perf_counter() - start, loss.item()


def worker(rank, world, ddp, args, results):
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    (x, y), _ = load_digits(args.seed)
    if ddp:
        dist.init_process_group("gloo", rank=rank, world_size=world)
    runs = [measure(rank, world, ddp, args, x, y) for _ in range(args.repeats)]
    if ddp:
        dist.destroy_process_group()
    if rank == 0:
        results.put(runs)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_config(name, world, ddp, args):
    """Spawns the ranks of one configuration and summarizes rank 0's timings."""
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(free_port())
    results = mp.get_context("spawn").SimpleQueue()
    mp.spawn(worker, args=(world, ddp, args, results), nprocs=world, join=True)
    runs = results.get()
    seconds = statistics.median(s for s, _ in runs)
    steps_per_s = args.steps / seconds
    row = {
        "world": world, "ddp": ddp, "local_batch": args.global_batch // world,
        "steps_per_s": steps_per_s, "images_per_s": steps_per_s * args.global_batch,
        "ms_per_step": 1000 * seconds / args.steps,
        "steps_per_s_each_repeat": [args.steps / s for s, _ in runs],
        "last_loss": runs[-1][1],
    }
    print(f"{name:>8}: W={world} G={args.global_batch} ({row['local_batch']}/rank)  "
          f"{steps_per_s:8.1f} steps/s  {row['images_per_s']:9.0f} images/s  "
          f"{row['ms_per_step']:.3f} ms/step  (repeats: "
          + ", ".join(f"{v:.1f}" for v in row["steps_per_s_each_repeat"])
          + f" steps/s; last loss {row['last_loss']:.3f})", flush=True)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", default="1,2", help="comma-separated world sizes")
    parser.add_argument("--global-batch", type=int, default=256)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    worlds = [int(w) for w in args.world.split(",")]
    n_train = len(load_digits(args.seed)[0][0])
    if args.global_batch > n_train:
        parser.error(f"--global-batch must be at most the {n_train} training images")
    for w in worlds:
        if args.global_batch % w:
            parser.error(f"--global-batch {args.global_batch} is not divisible by world {w}")

    configs = {}
    for w in worlds:
        if w == 1:
            configs["plain_w1"] = run_config("plain", 1, False, args)
        configs[f"ddp_w{w}"] = run_config("ddp", w, True, args)
    base = configs.get("ddp_w1")
    ratios = {f"w{w}_over_ddp_w1": configs[f"ddp_w{w}"]["images_per_s"] / base["images_per_s"]
              for w in worlds if w > 1 and base}
    for key, value in ratios.items():
        print(f"throughput ratio {key}: {value:.3f}")
    print(json.dumps({
        "bench": "dp_torch", "torch": torch.__version__, "backend": "gloo",
        "cpus": os.cpu_count(), "global_batch": args.global_batch, "warmup": args.warmup,
        "steps": args.steps, "repeats": args.repeats, "configs": configs, "ratios": ratios,
    }))


if __name__ == "__main__":
    main()
