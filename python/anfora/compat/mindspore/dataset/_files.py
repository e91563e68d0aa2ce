"""`mindspore.dataset`'s file sources for the two datasets of its tutorials: `MnistDataset`
(the IDX files of MNIST) and `Cifar10Dataset` (CIFAR-10's binary batches). Both read the files
whole when the dataset is made, checking every header and size (a malformed file is a
ValueError naming it), and give MindSpore's columns: `image` as `uint8` (H, W, C) and `label`
as `uint32`."""

import os

import numpy as np

_MNIST = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
          "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
_CIFAR10 = {"train": [f"data_batch_{i}.bin" for i in range(1, 6)], "test": ["test_batch.bin"]}


def _usages(what, usage):
    usage = "all" if usage is None else usage
    if usage not in ("train", "test", "all"):
        raise ValueError(f"{what}: usage must be 'train', 'test' or 'all', not {usage!r}")
    return ["train", "test"] if usage == "all" else [usage]


def _directory(what, dataset_dir):
    path = os.fspath(dataset_dir)
    if not os.path.isdir(path):
        raise ValueError(f"{what}: the dataset directory {path} does not exist")
    return path


def read_idx(path, ndim):
    """The array of an IDX file of unsigned bytes with `ndim` dimensions (MNIST's format: a
    big-endian header `0, 0, 0x08, ndim`, then `ndim` big-endian 32-bit sizes, then the bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(f"{path}: {len(data)} bytes, too short for an IDX header")
    if data[:4] != bytes([0, 0, 0x08, ndim]):
        raise ValueError(f"{path}: not an IDX file of {ndim}-dimensional unsigned bytes "
                         f"(magic {data[:4].hex()}, expected 000008{ndim:02x})")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    size = 1
    for d in dims:
        size *= d
    if len(data) != header + size:
        raise ValueError(f"{path}: dimensions {dims} need {header + size} bytes, the file has {len(data)}")
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(dims)


def mnist(dataset_dir, usage):
    """`(images (N, 28, 28, 1) uint8, labels (N,) uint32)` of the usages asked for."""
    what = "MnistDataset"
    root = _directory(what, dataset_dir)
    images, labels = [], []
    for u in _usages(what, usage):
        image_file, label_file = (os.path.join(root, name) for name in _MNIST[u])
        for path in (image_file, label_file):
            if not os.path.isfile(path):
                raise ValueError(f"{what}: {path} does not exist")
        x, y = read_idx(image_file, 3), read_idx(label_file, 1)
        if len(x) != len(y):
            raise ValueError(f"{what}: {len(x)} images in {image_file} but {len(y)} labels in {label_file}")
        images.append(x[..., None])
        labels.append(y.astype(np.uint32))
    return np.concatenate(images), np.concatenate(labels)


def cifar10(dataset_dir, usage):
    """`(images (N, 32, 32, 3) uint8 HWC, labels (N,) uint32)`: each record of a batch file is a
    label byte and the image's 3,072 bytes, channel by channel."""
    what = "Cifar10Dataset"
    root = _directory(what, dataset_dir)
    record = 1 + 3 * 32 * 32
    images, labels = [], []
    for u in _usages(what, usage):
        for name in _CIFAR10[u]:
            path = os.path.join(root, name)
            if not os.path.isfile(path):
                raise ValueError(f"{what}: {path} does not exist")
            with open(path, "rb") as f:
                data = f.read()
            if len(data) % record:
                raise ValueError(f"{what}: {path} has {len(data)} bytes, not a whole number of "
                                 f"{record}-byte records")
            rows = np.frombuffer(data, dtype=np.uint8).reshape(-1, record)
            if rows.size and rows[:, 0].max() > 9:
                raise ValueError(f"{what}: {path} has a label {int(rows[:, 0].max())}, outside 0..9")
            labels.append(rows[:, 0].astype(np.uint32))
            images.append(rows[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
    return np.ascontiguousarray(np.concatenate(images)), np.concatenate(labels)
