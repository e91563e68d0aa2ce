# Activation and special functions: log1p, expm1, erf, gelu (both forms), silu,
# softplus and rsqrt on float32, float64, int and bool tensors and on Python
# numbers. Results that depend on the last bits of libm or of numpy's kernels are
# printed quantized by q()/qs(); exact values (0, inf, nan, 1/sqrt of powers of
# four) are printed as they are.
from anfora import ops


def q(t):
    return (t * 10000).astype("int64")


def qs(v):
    return int(v * 1000000)


def main():
    x = ops.tensor([-2.0, -0.5, 0.25, 1.0, 3.0])
    x64 = ops.tensor([-2.0, -0.5, 0.25, 1.0, 3.0], dtype="float64")
    for t in (x, x64):
        print(t.dtype, q(ops.log1p(t + 2.5)), q(ops.expm1(t)), q(ops.erf(t)))
        print(" gelu", q(ops.gelu(t)), q(ops.gelu(t, approximate=True)))
        print(" silu", q(ops.silu(t)), "softplus", q(ops.softplus(t)))
        print(" dtypes", ops.gelu(t).dtype, ops.gelu(t, True).dtype, ops.softplus(t).dtype)
    r = ops.rsqrt(ops.tensor([0.25, 1.0, 4.0, 16.0]))
    print(r, r.dtype, ops.rsqrt(ops.tensor([0.0, -1.0], dtype="float64")))
    i = ops.tensor([0, 1, 2], dtype="int32")
    b = ops.tensor([True, False])
    print(q(ops.log1p(i)), ops.log1p(i).dtype, q(ops.erf(b)), ops.erf(b).dtype)
    print(q(ops.softplus(ops.arange(3))), ops.silu(ops.arange(3)).dtype, ops.rsqrt(ops.tensor([1, 4])))
    z = ops.zeros(3)
    print(ops.log1p(z), ops.expm1(z), ops.erf(z), ops.gelu(z), ops.silu(z), ops.gelu(z, True))
    big = ops.tensor([-1000.0, 1000.0])
    print(ops.softplus(big), ops.silu(big), ops.gelu(big), ops.erf(big), ops.expm1(big))
    edge = ops.tensor([float("inf"), float("-inf"), float("nan")])
    print(ops.log1p(edge), ops.expm1(edge), ops.erf(edge), ops.softplus(edge))
    print(ops.log1p(ops.tensor([-1.0, -2.0])), ops.rsqrt(edge))
    print(ops.log1p(0), ops.expm1(0), ops.erf(0), ops.gelu(0), ops.silu(0), ops.rsqrt(4))
    print(qs(ops.log1p(1)), qs(ops.expm1(1)), qs(ops.erf(0.5)), qs(ops.gelu(1.5)))
    print(qs(ops.gelu(1.5, approximate=True)), qs(ops.silu(-2)), qs(ops.softplus(2.0)), qs(ops.softplus(True)))
    print(ops.softplus(-1000.0), ops.softplus(1000), ops.log1p(-1), ops.rsqrt(0.0), ops.erf(1e300))
    tiny = ops.softplus(ops.tensor([-40.0], dtype="float64"))
    print(abs(tiny / ops.exp(ops.tensor([-40.0], dtype="float64")) - 1) < 1e-12)
    e = ops.expm1(ops.tensor([1e-10], dtype="float64"))
    print(abs(e - 1e-10) < 1e-20, abs(ops.log1p(1e-12) - 1e-12) < 1e-24)
    return (q(ops.gelu(x)), ops.rsqrt(16), ops.erf(-0.0))
