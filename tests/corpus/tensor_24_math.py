# Math functions on tensors and on Python scalars.
# Transcendental results differ in the last bits between implementations, so
# only exactly-known values are printed at full precision; the others are
# quantized with q() (truncation after scaling) or checked against a tolerance.
from anfora import ops


def q(t):
    return (t * 1000).astype("int64")


def qs(v):
    return int(v * 1000000)


def main():
    x = ops.tensor([0.0, 0.5, 1.0, 2.0])
    print(q(ops.exp(x)), q(ops.log(x + 1)), q(ops.sqrt(x)), q(ops.tanh(x)))
    print(q(ops.sin(x)), q(ops.cos(x)), q(ops.sigmoid(x)), ops.relu(x - 1))
    print(ops.exp(x).dtype, ops.log(x).dtype, ops.sigmoid(x).dtype)
    z = ops.tensor([0.0, 1.0])
    print(ops.exp(z[:1]), ops.log(z[1:]), ops.sqrt(ops.tensor([4.0, 2.25])), ops.sin(z[:1]), ops.cos(z[:1]))
    print(ops.tanh(z[:1]), ops.sigmoid(z[:1]), ops.log(ops.tensor([0.0, -1.0])))
    i = ops.tensor([-2, 0, 3])
    print(ops.relu(i), ops.relu(i).dtype, q(ops.exp(i)), ops.exp(i).dtype, ops.sigmoid(i).dtype)
    print(ops.exp(0), ops.exp(1000), ops.log(0), ops.log(-1.0), ops.log(1), ops.sqrt(2), ops.sqrt(-1))
    print(qs(ops.exp(1)), qs(ops.tanh(0.5)), ops.sin(0), ops.cos(0), ops.sigmoid(0), ops.sigmoid(-1000))
    print(ops.relu(-3), ops.relu(3), ops.relu(-2.5), ops.relu(2.5), abs(ops.exp(True) - 2.718281828) < 1e-9)
    e = ops.exp(ops.tensor([1.0], dtype="float64"))
    print(abs(e - 2.718281828459045) < 1e-12, abs(ops.log(e) - 1.0) < 1e-12)
    return (ops.exp(0), ops.relu(-7), ops.sqrt(x), q(ops.exp(x)))
