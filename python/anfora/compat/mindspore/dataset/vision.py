"""`mindspore.dataset.vision`: the image operations of MindSpore's tutorials, on numpy
images (HWC unless said): `Rescale`, `Normalize`, `HWC2CHW`, `Pad`, `RandomCrop`, `CenterCrop`,
`RandomHorizontalFlip`, `RandomVerticalFlip`. The random ones draw from `dataset.config`'s
generator."""

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


class Border:
    """How `Pad` and `RandomCrop` fill the border (numpy's pad modes)."""

    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


def _pair(size, what):
    """`(height, width)` of an int or a pair of positive ints."""
    pair = (size, size) if isinstance(size, int) else tuple(size)
    if len(pair) != 2 or not all(isinstance(v, int) and v > 0 for v in pair):
        raise ValueError(f"{what}: size must be a positive int or a pair of them, not {size!r}")
    return pair


def _padding(padding, what):
    """`(left, top, right, bottom)` of MindSpore's padding: an int, (left/right, top/bottom),
    or (left, top, right, bottom)."""
    if isinstance(padding, int):
        pads = (padding,) * 4
    else:
        pads = tuple(padding)
        if len(pads) == 2:
            pads = (pads[0], pads[1], pads[0], pads[1])
    if len(pads) != 4 or not all(isinstance(v, int) and v >= 0 for v in pads):
        raise ValueError(f"{what}: padding must be a non-negative int or 2 or 4 of them, not {padding!r}")
    return pads


def _image(x, what):
    x = _np.asarray(x)
    if x.ndim not in (2, 3):
        raise ValueError(f"{what} takes an (H, W) or (H, W, C) image, not {x.ndim} dimensions")
    return x


def _pad(x, pads, fill_value, padding_mode, what):
    left, top, right, bottom = pads
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (x.ndim - 2)
    if padding_mode not in (Border.CONSTANT, Border.EDGE, Border.REFLECT, Border.SYMMETRIC):
        raise ValueError(f"{what}: padding_mode must be a Border, not {padding_mode!r}")
    if padding_mode != Border.CONSTANT:
        return _np.pad(x, widths, mode=padding_mode)
    fill = _np.asarray(fill_value, dtype=x.dtype)
    if fill.ndim == 0:
        return _np.pad(x, widths, mode="constant", constant_values=fill)
    # One fill value per channel (an RGB triple).
    out = _np.empty((x.shape[0] + top + bottom, x.shape[1] + left + right) + x.shape[2:], x.dtype)
    out[...] = fill
    out[top:top + x.shape[0], left:left + x.shape[1]] = x
    return out


class Pad:
    """The image padded by `padding` ((left, top, right, bottom) as MindSpore orders it)."""

    def __init__(self, padding, fill_value=0, padding_mode=Border.CONSTANT):
        self._pads = _padding(padding, "Pad")
        self._fill, self._mode = fill_value, padding_mode

    def __call__(self, x):
        return _pad(_image(x, "Pad"), self._pads, self._fill, self._mode, "Pad")


class RandomCrop:
    """A `size` window at a random place of the image, padded first by `padding` (and, with
    `pad_if_needed`, up to `size`). The places come from `dataset.config`'s generator."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill_value=0,
                 padding_mode=Border.CONSTANT):
        self._size = _pair(size, "RandomCrop")
        self._pads = None if padding is None else _padding(padding, "RandomCrop")
        self._if_needed = bool(pad_if_needed)
        self._fill, self._mode = fill_value, padding_mode

    def __call__(self, x):
        from .config import _generator

        x = _image(x, "RandomCrop")
        if self._pads is not None:
            x = _pad(x, self._pads, self._fill, self._mode, "RandomCrop")
        h, w = self._size
        if self._if_needed and (x.shape[0] < h or x.shape[1] < w):
            dh, dw = max(h - x.shape[0], 0), max(w - x.shape[1], 0)
            x = _pad(x, (dw, dh, dw, dh), self._fill, self._mode, "RandomCrop")
        if x.shape[0] < h or x.shape[1] < w:
            raise ValueError(f"RandomCrop: a {h}×{w} crop of a {x.shape[0]}×{x.shape[1]} image "
                             "(pad it, or set pad_if_needed=True)")
        rng = _generator()
        top = int(rng.integers(0, x.shape[0] - h + 1))
        left = int(rng.integers(0, x.shape[1] - w + 1))
        return _np.ascontiguousarray(x[top:top + h, left:left + w])


class CenterCrop:
    """The `size` window at the center of the image (the extra row or column of an odd
    difference on the bottom and right)."""

    def __init__(self, size):
        self._size = _pair(size, "CenterCrop")

    def __call__(self, x):
        x = _image(x, "CenterCrop")
        h, w = self._size
        if x.shape[0] < h or x.shape[1] < w:
            raise ValueError(f"CenterCrop: a {h}×{w} crop of a {x.shape[0]}×{x.shape[1]} image")
        top, left = (x.shape[0] - h) // 2, (x.shape[1] - w) // 2
        return _np.ascontiguousarray(x[top:top + h, left:left + w])


class _RandomFlip:
    _axis = 1

    def __init__(self, prob=0.5):
        if not 0.0 <= float(prob) <= 1.0:
            raise ValueError(f"{type(self).__name__}: prob must be in [0, 1], not {prob!r}")
        self._prob = float(prob)

    def __call__(self, x):
        from .config import _generator

        x = _image(x, type(self).__name__)
        if _generator().random() < self._prob:
            return _np.ascontiguousarray(_np.flip(x, axis=self._axis))
        return x


class RandomHorizontalFlip(_RandomFlip):
    """The image mirrored left to right with probability `prob`."""

    _axis = 1


class RandomVerticalFlip(_RandomFlip):
    """The image mirrored top to bottom with probability `prob`."""

    _axis = 0
