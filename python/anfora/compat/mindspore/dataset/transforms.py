"""`mindspore.dataset.transforms`: operations on a column's values, for `Dataset.map`."""

import numpy as _np


def _numpy_dtype(dtype):
    """A MindSpore (anfora) dtype or a numpy one, as numpy's; bfloat16 has none."""
    name = getattr(dtype, "name", None)
    if name == "bfloat16":
        raise TypeError("TypeCast: numpy has no bfloat16; cast in the network instead")
    return _np.dtype(name if isinstance(name, str) else dtype)


class TypeCast:
    """The value cast to `data_type` (a MindSpore dtype or a numpy one)."""

    def __init__(self, data_type):
        self._dtype = _numpy_dtype(data_type)

    def __call__(self, x):
        return _np.asarray(x).astype(self._dtype)


class OneHot:
    """An integer label as a one-hot vector of `num_classes`."""

    def __init__(self, num_classes, smoothing_rate=0.0):
        self._n, self._smooth = int(num_classes), float(smoothing_rate)

    def __call__(self, label):
        label = _np.asarray(label)
        if label.dtype.kind not in "iu" or (label < 0).any():
            raise ValueError(f"OneHot: labels must be integers in [0, {self._n})")
        if (label >= self._n).any():
            # MindSpore's pipeline raises a RuntimeError, with this message.
            raise RuntimeError(f"OneHot: index values should not bigger than num classes: "
                               f"{self._n}, but got: {int(label.max())}")
        out = _np.eye(self._n, dtype=_np.float32)[label]
        if self._smooth:
            out = out * (1 - self._smooth) + self._smooth / self._n
        return out.astype(label.dtype if not self._smooth else _np.float32)


class Compose:
    """The operations one after the other."""

    def __init__(self, transforms):
        self._ops = list(transforms)

    def __call__(self, *values):
        for op in self._ops:
            values = op(*values)
            values = values if isinstance(values, tuple) else (values,)
        return values if len(values) != 1 else values[0]
