# ops.dropout where it draws nothing: not training or p == 0 give x itself, p == 1
# gives zeros of x's dtype (the random masks of 0 < p < 1 are not printed).
from anfora import ops


def layer(x, training):
    h = ops.relu(x)
    return ops.dropout(h, p=0.5, training=training)


def main():
    x = ops.tensor([[1.0, -2.0], [3.0, -4.0]])
    print(ops.dropout(x, 0.3, False), ops.dropout(x, p=0.0), ops.dropout(x, training=False).dtype)
    z = ops.dropout(ops.cast(x, "float64"), p=1.0)
    print(z, z.dtype, ops.dropout(x, 1, True).shape)
    print(layer(x, False), layer(x * 2, False).sum())
    acc = ops.zeros(2)
    for k in range(3):
        acc = acc + ops.dropout(x[k % 2], 0.9, training=False)
    print(acc)
    return ops.dropout(ops.tensor([0.5], dtype="float64"), 0.0, True)
