# ops.argmax / ops.argmin (int64, first occurrence, NaN counts as the extreme,
# axis None flattens, keepdims) and ops.one_hot (float32 by default; indices out
# of [0, depth) give a row of zeros).
import anfora
from anfora import ops


def classify(logits, labels):
    pred = ops.argmax(logits, axis=1)
    hits = 0
    for i in range(pred.shape[0]):
        if pred[i] == labels[i]:
            hits = hits + 1
    return pred, hits


def main():
    x = ops.tensor([[3.0, 1.0, 3.0], [0.0, -2.0, 5.0], [-1.0, -1.0, -1.0]])
    print(ops.argmax(x), ops.argmin(x), ops.argmax(x).dtype, ops.argmax(x).shape)
    print(ops.argmax(x, axis=0), ops.argmax(x, 1), ops.argmin(x, axis=-1), ops.argmin(x, 0))
    print(ops.argmax(x, axis=1, keepdims=True), ops.argmin(x, keepdims=True), ops.argmax(x, None, True).shape)
    n = ops.tensor([1.0, float("nan"), 7.0, float("nan")], dtype="float64")
    print(ops.argmax(n), ops.argmin(n), ops.argmax(ops.tensor([-float("inf"), 2.0, float("inf")])))
    i = ops.tensor([[4, 9, 9], [2, 2, 1]], dtype="int32")
    print(ops.argmax(i, 1), ops.argmin(i, 1), ops.argmax(i), ops.argmax(ops.tensor([False, True, True])))
    print(ops.argmax(ops.tensor(3.5)), ops.argmin(ops.zeros((0, 2)), axis=1), ops.argmax(ops.zeros((0, 2)), 1).shape)
    h = ops.one_hot(ops.tensor([0, 2, 1, 3, -1]), 3)
    print(h, h.dtype, h.shape)
    print(ops.one_hot(ops.tensor([[1, 0]], dtype="int32"), depth=2, dtype="int64"))
    print(ops.one_hot(ops.tensor([1, 0]), 2, anfora.bool_), ops.one_hot(ops.tensor(2), 4), ops.one_hot(ops.tensor([1, 1]), 0).shape)
    logits = ops.tensor([[0.1, 2.0, -1.0], [3.0, 0.5, 0.5], [0.0, 0.2, 0.1], [1.0, 1.0, 0.0]])
    labels = ops.tensor([1, 0, 2, 0])
    pred, hits = classify(logits, labels)
    print("pred", pred, "hits", hits)
    target = ops.one_hot(labels, 3)
    print(target, (target * logits).sum(axis=1))
    back = ops.argmax(ops.one_hot(pred, 3), axis=-1)
    print(back, (back == pred).sum())
    counts = ops.one_hot(pred, 3).sum(axis=0)
    print(counts, ops.argmax(counts), ops.argmin(counts))
    return (ops.argmax(logits, 0), ops.one_hot(ops.tensor([2, 5]), 3, "float64"))
