# Elementwise, reduction, shape and pooling primitives, with numpy's promotion of mixed
# dtypes and Python scalars (x: float32 (2, 3), k: int32 (2, 3), m: a mutable int).
import anfora
from anfora import ops


def mixed(x, k, m):
    return (
        x * 2 + 1,
        k + 1.5,
        k // 2 + k % 3,
        x // 0.75 + x % 0.75,
        ops.where(x > 0.0, x, -x),
        ops.clip(x, -0.5, 0.5),
        ops.sum(x, axis=1),
        ops.mean(x, axis=0, keepdims=True),
        ops.max(x, axis=0),
        ops.min(x),
        ops.prod(x, axis=(0, 1)),
        ops.transpose(x) @ x,
        ops.gelu(x),
        ops.silu(x) + ops.sigmoid(x),
        ops.rsqrt(ops.abs(x) + 1.0) + ops.log1p(ops.abs(x)) + ops.expm1(x),
        ops.argmin(x, axis=1),
        ops.argmax(x),
        ops.cast(x * 3.0, anfora.int32),
        ops.broadcast_to(ops.reshape(ops.sum(x, axis=0), (1, 3)), (4, 3)),
        ops.squeeze(ops.expand_dims(x, 0), 0) * ops.expand_dims(x, 0),
        ops.logsumexp(x, axis=1),
        m * 3 + 1,
        x ** 2 + ops.maximum(x, 0.1),
        ops.minimum(x, k),
        k == 2,
        x != 0.25,
        k < 2.5,
        ops.avg_pool2d(ops.reshape(x, (1, 1, 2, 3)), (1, 2), (1, 1), (0, 1)),
        ops.max_pool2d(ops.reshape(x, (1, 2, 3)), (2, 2), 1, 1),
        ops.softmax(x, 0),
        ops.exp(x) / ops.sum(ops.exp(x)),
        ops.concat((x, ops.cast(k, anfora.float32)), 1),
        ops.stack((x, x * 2.0, -x), -1),
    )
