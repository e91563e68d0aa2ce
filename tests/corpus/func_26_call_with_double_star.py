# args: 3
# `f(**d)` passes a dict's items as keyword arguments, mixed with positional, starred and
# explicit keyword arguments; a wrapper forwards `*args, **kwargs` unchanged.
def area(width, height, unit="m", scale=1):
    return str(width * height * scale) + unit


def forward(*args, **kwargs):
    print("forward", args, kwargs)
    return area(*args, **kwargs)


def main(k):
    size = {"width": k, "height": 4}
    print(area(**size))
    print(area(2, **{"height": k, "unit": "cm"}))
    extra = {"scale": 10}
    print(area(1, 2, unit="km", **extra))
    print(forward(k, k, scale=2))
    print(forward(**size, unit="mm"))
    both = (k, 5)
    return forward(*both, **extra)
