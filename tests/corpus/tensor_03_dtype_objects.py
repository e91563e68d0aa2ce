# DType objects: str, repr, equality with DTypes and names.
import anfora as af
from anfora import ops


def main():
    dts = (af.float32, af.float64, af.int32, af.int64, af.bool_)
    for dt in dts:
        print(dt, repr(dt), str(dt))
    x = ops.ones(2)
    print(x.dtype == af.float32, x.dtype == "float32", x.dtype == af.float64)
    print(x.dtype != af.int64, af.bool_ == "bool", af.bool_ == "bool_", af.int32 == "int64")
    y = x.astype(af.int32)
    z = x.astype("bool")
    print(y, y.dtype, z, z.dtype, repr(z.dtype))
    print((x.dtype, y.dtype, z.dtype))
    return (x.dtype, y.dtype, af.bool_)
