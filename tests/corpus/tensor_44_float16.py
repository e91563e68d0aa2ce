# float16 tensors compute in float32 and round once to float16, as numpy's float16 loops do;
# promotion is numpy's (float16 with float32 is float32, with int32, int64 or float64 float64).
import anfora
from anfora import ops


def main():
    a = ops.tensor([0.1, 0.2, 1000.0, -3.5], anfora.float16)
    b = ops.cast(ops.tensor([0.3, 0.7, 0.001, 2.0]), anfora.float16)
    print(a, a.dtype, repr(a + b))
    print(a * b, a / 4, (a * 2.5).dtype, a - True)
    print(ops.sum(a), ops.mean(a), ops.max(a), ops.argmax(a))
    m = ops.reshape(a, (2, 2))
    print(repr(m @ m), ops.transpose(m))
    print((a + ops.tensor([1, 2, 3, 4], anfora.int32)).dtype, (a + ops.ones((4,), anfora.float32)).dtype)
    print(ops.cast(a, anfora.int32), ops.cast(a, anfora.float64), a < b)
    big = ops.tensor(65504.0, anfora.float16)
    print(big * 2, ops.exp(ops.tensor([0.5, 1.0], anfora.float16)), ops.tanh(a))
    print(ops.zeros((2,), anfora.float16), ops.where(a > 0, a, b))
    return repr(ops.concat([a, b]))
