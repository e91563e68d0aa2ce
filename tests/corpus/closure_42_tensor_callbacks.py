# args: [1.0, 2.0, 3.0]
# A callback passed to a higher-order function accumulates tensors into its creator's
# variable through `nonlocal`; another closure reads the variable after every update.
import anfora


def apply_all(f, xs):
    for x in xs:
        f(x)
    return len(xs)


def main(x):
    total = x * 0.0

    def add(v):
        nonlocal total
        total = total + v

    peek = (lambda: total.sum(),)
    n = apply_all(add, (x, x * 2.0, x * 3.0))
    print(n, total, peek[0]())
    scale = 2.0
    scaled = [lambda: total * scale]
    scale = 3.0
    return scaled[0]()
