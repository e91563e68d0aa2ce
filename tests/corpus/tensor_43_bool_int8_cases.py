# Bool operands whose numpy result is int8 give int64, and math of bools computes in float64
# (anfora has no int8, and numpy's float16 for them would lose precision).
from anfora import ops


def main():
    b = ops.tensor([True, False])
    t = ops.tensor([True, True])
    print(b % t, (b % t).dtype, b ** b, (b ** b).dtype)
    print(b << b, b >> t, t // t, (t // t).dtype)
    print(b ** True, True << b, (True << b).dtype)
    e = ops.exp(b)
    print(e.dtype, ops.sin(b).dtype, ops.sqrt(t))
    return repr(e)
