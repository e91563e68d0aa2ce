"""`mindspore.dataset`'s pipelines: `NumpySlicesDataset`, `GeneratorDataset`, and the files of
`MnistDataset` and `Cifar10Dataset` as sources; `shuffle`, `map`, `batch`, `repeat`, `take`, `skip`, `project` and `rename`
as steps; `create_tuple_iterator` and `create_dict_iterator` to read them. Sharding
(`num_shards`, `shard_id`) splits a source between the processes of a data-parallel job as
MindSpore's `DistributedSampler` does. Rows are tuples of numpy arrays, one per column.

Random order comes from `config.set_seed`'s generator (numpy's), not MindSpore's, so the
order differs from MindSpore's for the same seed (docs/mindspore.md)."""

import numpy as _np

from . import _files, config, transforms, vision  # noqa: F401

__all__ = ["NumpySlicesDataset", "GeneratorDataset", "MnistDataset", "Cifar10Dataset", "config",
           "transforms", "vision"]


class Dataset:
    """A pipeline step. Each pass over it (an epoch) calls `_rows()` again."""

    def __init__(self, parent=None):
        self._parent = parent

    # Steps.
    def shuffle(self, buffer_size):
        if int(buffer_size) < 2:
            raise ValueError(f"shuffle: buffer_size must be at least 2, not {buffer_size}")
        return _Shuffle(self, int(buffer_size))

    def map(self, operations, input_columns=None, output_columns=None, num_parallel_workers=None,
            **_ignored):
        ops = list(operations) if isinstance(operations, (list, tuple)) else [operations]
        return _Map(self, ops, _names(input_columns), _names(output_columns))

    def batch(self, batch_size, drop_remainder=False, num_parallel_workers=None, **_ignored):
        if int(batch_size) < 1:
            raise ValueError(f"batch: batch_size must be positive, not {batch_size}")
        return _Batch(self, int(batch_size), bool(drop_remainder))

    def repeat(self, count=None):
        if count is not None and int(count) < 1 and int(count) != -1:
            raise ValueError(f"repeat: count must be positive or -1, not {count}")
        return _Repeat(self, None if count in (None, -1) else int(count))

    def take(self, count=-1):
        return _Slice(self, 0, None if count == -1 else int(count))

    def skip(self, count):
        return _Slice(self, int(count), None)

    def project(self, columns):
        return _Project(self, _names(columns))

    def rename(self, input_columns, output_columns):
        return _Rename(self, _names(input_columns), _names(output_columns))

    # Reading.
    def get_col_names(self):
        return list(self._parent.get_col_names())

    def get_dataset_size(self):
        """The number of rows (batches, once batched) of one pass, without drawing from the
        random generator."""
        return self._parent.get_dataset_size()

    def get_batch_size(self):
        return self._parent.get_batch_size() if self._parent is not None else 1

    def create_tuple_iterator(self, columns=None, num_epochs=-1, output_numpy=False, do_copy=True):
        names = self.get_col_names()
        pick = [names.index(c) for c in _names(columns)] if columns else range(len(names))
        for row in self._rows():
            yield [_out(row[i], output_numpy) for i in pick]

    def create_dict_iterator(self, num_epochs=-1, output_numpy=False, do_copy=True):
        names = self.get_col_names()
        for row in self._rows():
            yield {n: _out(v, output_numpy) for n, v in zip(names, row)}

    def __iter__(self):
        return self.create_tuple_iterator()

    def output_shapes(self):
        row = next(iter(self._rows()))
        return [list(_np.shape(v)) for v in row]

    def output_types(self):
        row = next(iter(self._rows()))
        return [_np.asarray(v).dtype for v in row]

    def _rows(self):
        raise NotImplementedError


def _names(columns):
    if columns is None:
        return None
    return [columns] if isinstance(columns, str) else list(columns)


def _out(value, output_numpy):
    a = _np.asarray(value)
    if output_numpy:
        return a
    if a.dtype in (_np.uint16, _np.uint32, _np.uint64, _np.int16):
        raise TypeError(f"a column of {a.dtype} (MnistDataset's and Cifar10Dataset's labels are "
                        "uint32), which anfora's Tensor does not have: map "
                        "transforms.TypeCast(mstype.int32) on it, or iterate with output_numpy=True")
    from ..common import Tensor

    return Tensor(a)


class _Source(Dataset):
    """Rows `0..n` read by index, in order or shuffled each epoch, optionally one shard."""

    def __init__(self, n, column_names, shuffle, num_samples, num_shards, shard_id):
        super().__init__()
        if (num_shards is None) != (shard_id is None):
            raise ValueError("num_shards and shard_id must be given together")
        if num_shards is not None and int(shard_id) >= int(num_shards):
            raise ValueError("shard_id should be less than num_shards.")
        if num_shards is not None and int(shard_id) < 0:
            raise ValueError(f"shard_id {shard_id} is not in [0, {num_shards})")
        self._n = n
        self._columns = list(column_names)
        self._shuffle = True if shuffle is None else bool(shuffle)
        self._num_samples = num_samples
        self._shards = None if num_shards is None else (int(num_shards), int(shard_id))

    def get_col_names(self):
        return list(self._columns)

    def get_dataset_size(self):
        n = self._n
        if self._shards is not None:
            n = -(-n // self._shards[0])
        return n if self._num_samples is None else min(n, int(self._num_samples))

    def _order(self):
        order = config._generator().permutation(self._n) if self._shuffle else _np.arange(self._n)
        if self._shards is not None:
            # Every shard has ceil(n / shards) rows; the last ones wrap around to the start.
            shards, shard = self._shards
            per = -(-self._n // shards)
            order = _np.resize(order, per * shards)[shard::shards]
        if self._num_samples is not None:
            order = order[: int(self._num_samples)]
        return order


class NumpySlicesDataset(_Source):
    """Rows sliced along the first axis of `data`: an array, a list, a tuple of columns, or a
    dict of named columns."""

    def __init__(self, data, column_names=None, num_samples=None, num_parallel_workers=1,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None):
        if sampler is not None:
            raise NotImplementedError("NumpySlicesDataset: samplers are not supported; use shuffle and num_shards")
        if isinstance(data, dict):
            names, cols = list(data), [_np.asarray(v) for v in data.values()]
        elif isinstance(data, tuple):
            names, cols = None, [_np.asarray(v) for v in data]
        else:
            names, cols = None, [_np.asarray(data)]
        if column_names is not None:
            names = _names(column_names)
        names = names or [f"column_{i}" for i in range(len(cols))]
        if len(names) != len(cols):
            raise ValueError(f"{len(names)} column names for {len(cols)} columns")
        lengths = {len(c) for c in cols}
        if len(lengths) != 1:
            raise ValueError(f"the columns have different lengths: {sorted(lengths)}")
        self._cols = cols
        super().__init__(lengths.pop(), names, shuffle, num_samples, num_shards, shard_id)

    def _rows(self):
        for i in self._order():
            yield tuple(c[i] for c in self._cols)


class GeneratorDataset(_Source):
    """Rows from `source`: a random-access object (`__getitem__` and `__len__`, shuffled
    and sharded by index), or an iterable or a callable returning one (read in order)."""

    def __init__(self, source, column_names=None, column_types=None, schema=None,
                 num_samples=None, num_parallel_workers=1, shuffle=None, sampler=None,
                 num_shards=None, shard_id=None, **_ignored):
        if sampler is not None:
            raise NotImplementedError("GeneratorDataset: samplers are not supported; use shuffle and num_shards")
        if column_names is None:
            raise ValueError("GeneratorDataset needs column_names")
        self._source = source
        self._random_access = hasattr(source, "__getitem__") and hasattr(source, "__len__")
        if not self._random_access and (shuffle or num_shards is not None):
            raise ValueError("GeneratorDataset: shuffle and num_shards need a source with __getitem__ and __len__")
        n = len(source) if self._random_access else 0
        super().__init__(n, _names(column_names), shuffle if self._random_access else False,
                         num_samples, num_shards, shard_id)

    def get_dataset_size(self):
        if self._random_access:
            return super().get_dataset_size()
        return sum(1 for _ in self._rows())

    def _rows(self):
        if self._random_access:
            for i in self._order():
                yield _row(self._source[int(i)])
            return
        source = self._source() if callable(self._source) else self._source
        for k, item in enumerate(source):
            if self._num_samples is not None and k >= int(self._num_samples):
                return
            yield _row(item)


class _FileSource(_Source):
    """An image dataset read whole from its files: columns `image` and `label`."""

    def __init__(self, arrays, num_samples, shuffle, sampler, num_shards, shard_id, what):
        if sampler is not None:
            raise NotImplementedError(f"{what}: samplers are not supported; use shuffle and num_shards")
        self._images, self._labels = arrays
        super().__init__(len(self._labels), ["image", "label"], shuffle, num_samples, num_shards, shard_id)

    def _rows(self):
        for i in self._order():
            yield self._images[i], self._labels[i]


class MnistDataset(_FileSource):
    """MNIST from `dataset_dir` (`train-images-idx3-ubyte`, `train-labels-idx1-ubyte`,
    `t10k-images-idx3-ubyte`, `t10k-labels-idx1-ubyte`): `image` (28, 28, 1) uint8, `label`
    uint32; `usage` "train", "test" or "all" (both, train first)."""

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, sampler=None, num_shards=None, shard_id=None, cache=None):
        super().__init__(_files.mnist(dataset_dir, usage), num_samples, shuffle, sampler, num_shards,
                         shard_id, "MnistDataset")


class Cifar10Dataset(_FileSource):
    """CIFAR-10's binary version from `dataset_dir` (`data_batch_1.bin` .. `data_batch_5.bin`,
    `test_batch.bin`): `image` (32, 32, 3) uint8 (HWC), `label` uint32."""

    def __init__(self, dataset_dir, usage=None, num_samples=None, num_parallel_workers=None,
                 shuffle=None, decode=False, sampler=None, num_shards=None, shard_id=None, cache=None):
        super().__init__(_files.cifar10(dataset_dir, usage), num_samples, shuffle, sampler, num_shards,
                         shard_id, "Cifar10Dataset")


def _row(item):
    return tuple(item) if isinstance(item, (tuple, list)) else (item,)


class _Shuffle(Dataset):
    def __init__(self, parent, size):
        super().__init__(parent)
        self._size = size

    def _rows(self):
        # MindSpore's buffer shuffle: a random row of a buffer of `size` rows is emitted and
        # replaced by the next row.
        rng = config._generator()
        buffer = []
        for row in self._parent._rows():
            buffer.append(row)
            if len(buffer) == self._size:
                yield buffer.pop(int(rng.integers(len(buffer))))
        while buffer:
            yield buffer.pop(int(rng.integers(len(buffer))))


class _Map(Dataset):
    def __init__(self, parent, ops, inputs, outputs):
        super().__init__(parent)
        names = parent.get_col_names()
        self._inputs = inputs or names[:1]
        missing = [c for c in self._inputs if c not in names]
        if missing:
            raise ValueError(f"map: no column {missing[0]!r}; the columns are {names}")
        self._outputs = outputs or self._inputs
        self._ops = ops

    def get_col_names(self):
        names = self._parent.get_col_names()
        if self._outputs == self._inputs:
            return names
        kept = [n for n in names if n not in self._inputs]
        return self._outputs + kept

    def _rows(self):
        names = self._parent.get_col_names()
        idx = [names.index(c) for c in self._inputs]
        for row in self._parent._rows():
            values = tuple(row[i] for i in idx)
            for op in self._ops:
                values = op(*values)
                values = values if isinstance(values, tuple) else (values,)
            if len(values) != len(self._outputs):
                raise ValueError(f"map: the operations gave {len(values)} columns for {len(self._outputs)} names")
            if self._outputs == self._inputs:
                out = list(row)
                for i, v in zip(idx, values):
                    out[i] = v
                yield tuple(out)
            else:
                yield tuple(values) + tuple(v for i, v in enumerate(row) if i not in idx)


class _Batch(Dataset):
    def __init__(self, parent, size, drop_remainder):
        super().__init__(parent)
        self._size, self._drop = size, drop_remainder

    def get_batch_size(self):
        return self._size

    def get_dataset_size(self):
        n = self._parent.get_dataset_size()
        return n // self._size if self._drop else -(-n // self._size)

    def _rows(self):
        rows = []
        for row in self._parent._rows():
            rows.append(row)
            if len(rows) == self._size:
                yield _stack(rows)
                rows = []
        if rows and not self._drop:
            yield _stack(rows)


def _stack(rows):
    try:
        return tuple(_np.stack([_np.asarray(r[i]) for r in rows]) for i in range(len(rows[0])))
    except ValueError as e:
        raise ValueError(f"batch: the rows of a batch must have equal shapes ({e})") from None


class _Repeat(Dataset):
    def __init__(self, parent, count):
        super().__init__(parent)
        self._count = count

    def get_dataset_size(self):
        if self._count is None:
            raise ValueError("get_dataset_size: the dataset repeats without end")
        return self._count * self._parent.get_dataset_size()

    def _rows(self):
        k = 0
        while self._count is None or k < self._count:
            yield from self._parent._rows()
            k += 1


class _Slice(Dataset):
    def __init__(self, parent, start, count):
        super().__init__(parent)
        self._start, self._count = start, count

    def get_dataset_size(self):
        n = max(self._parent.get_dataset_size() - self._start, 0)
        return n if self._count is None else min(n, self._count)

    def _rows(self):
        for k, row in enumerate(self._parent._rows()):
            if k < self._start:
                continue
            if self._count is not None and k >= self._start + self._count:
                return
            yield row


class _Project(Dataset):
    def __init__(self, parent, columns):
        super().__init__(parent)
        names = parent.get_col_names()
        missing = [c for c in columns if c not in names]
        if missing:
            raise ValueError(f"project: no column {missing[0]!r}; the columns are {names}")
        self._idx = [names.index(c) for c in columns]
        self._columns = columns

    def get_col_names(self):
        return list(self._columns)

    def _rows(self):
        for row in self._parent._rows():
            yield tuple(row[i] for i in self._idx)


class _Rename(Dataset):
    def __init__(self, parent, inputs, outputs):
        super().__init__(parent)
        if len(inputs) != len(outputs):
            raise ValueError("rename: as many output names as input names")
        names = parent.get_col_names()
        missing = [c for c in inputs if c not in names]
        if missing:
            raise ValueError(f"rename: no column {missing[0]!r}; the columns are {names}")
        self._names = [outputs[inputs.index(n)] if n in inputs else n for n in names]

    def get_col_names(self):
        return list(self._names)

    def _rows(self):
        return self._parent._rows()
