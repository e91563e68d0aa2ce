# Basic indexing of tensors: ints (negative too), slices with steps, `None`, `...`, and an
# index known only at run time.
from anfora import ops


def index(x, n):
    return (
        x[0],
        x[:, 1:3],
        x[1, ::-1],
        x[n],
        x[-1, 2],
        x[None, :, -2:],
        x[..., 0],
        x[::-1, ::2] * 2.0,
    )
