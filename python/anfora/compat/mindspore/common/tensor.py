"""MindSpore's `Tensor`: `Tensor(input_data, dtype=None)` builds an anfora tensor (with
`asnumpy()`), `Tensor(shape=, dtype=, init=)` one filled by an initializer, and
`isinstance(x, Tensor)` holds for every anfora tensor."""

import anfora as _af


class _TensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, _af.Tensor)


class Tensor(metaclass=_TensorType):
    """`Tensor(input_data, dtype=None)`: an anfora tensor of the data (a numpy array, a Tensor,
    a number or nested lists). Without a dtype, Python floats give float32 and Python ints
    int64, as in MindSpore. Inside compiled code (`construct`) it is `anfora.ops.tensor`."""

    # Compiled code calls `anfora.ops.tensor` for it.
    __anfora_op__ = "tensor"

    def __new__(cls, input_data=None, dtype=None, shape=None, init=None, **_ignored):
        import numpy as np

        if init is not None:
            # MindSpore's lazily initialized tensor, drawn now (docs/mindspore.md).
            from .initializer import _numpy_dtype, values

            if input_data is not None:
                raise TypeError("Tensor(init=...) takes shape= and dtype=, not input_data")
            if shape is None or dtype is None:
                raise ValueError("init, dtype and shape must have values at the same time.")
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            return _af.tensor(values(init, shape, _numpy_dtype(dtype)), dtype=dtype)
        if input_data is None:
            raise TypeError("Tensor() needs input_data, or init= with shape= and dtype=")
        if isinstance(input_data, _af.Tensor):
            return input_data if dtype is None else _af.ops.cast(input_data, dtype)
        data = np.asarray(input_data)
        # numpy data keeps its dtype; Python numbers and lists take MindSpore's defaults.
        if dtype is None and not isinstance(input_data, (np.ndarray, np.generic)):
            if data.dtype == np.float64:
                data = data.astype(np.float32)
            elif data.dtype.kind == "i":
                data = data.astype(np.int64)
        return _af.tensor(data, dtype=dtype)


__all__ = ["Tensor"]
