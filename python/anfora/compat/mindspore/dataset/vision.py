"""`mindspore.dataset.vision`: the image operations of MindSpore's tutorials, on numpy
images (HWC unless said)."""

import numpy as _np


class Rescale:
    """`x * rescale + shift`, as float32."""

    def __init__(self, rescale, shift):
        self._scale, self._shift = float(rescale), float(shift)

    def __call__(self, x):
        return (_np.asarray(x, dtype=_np.float32) * self._scale + self._shift).astype(_np.float32)


class Normalize:
    """`(x - mean) / std` per channel (the last axis when `is_hwc`, else the first)."""

    def __init__(self, mean, std, is_hwc=True):
        self._mean = _np.asarray(mean, dtype=_np.float32)
        self._std = _np.asarray(std, dtype=_np.float32)
        if (self._std == 0).any():
            raise ValueError("Normalize: std must not be zero")
        self._hwc = bool(is_hwc)

    def __call__(self, x):
        x = _np.asarray(x, dtype=_np.float32)
        shape = (-1,) if self._hwc else (-1, 1, 1)
        return ((x - self._mean.reshape(shape)) / self._std.reshape(shape)).astype(_np.float32)


class HWC2CHW:
    """An (H, W, C) image as (C, H, W); an (H, W) image gains a channel axis."""

    def __call__(self, x):
        x = _np.asarray(x)
        if x.ndim == 2:
            return x[None]
        if x.ndim != 3:
            raise ValueError(f"HWC2CHW takes an image of 2 or 3 dimensions, not {x.ndim}")
        return _np.ascontiguousarray(x.transpose(2, 0, 1))
