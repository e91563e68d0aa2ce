# Numeric higher-order functions: derivative and Newton's method.
def derivative(f, h):
    def df(x):
        return (f(x + h) - f(x - h)) / (2 * h)
    return df


def newton(f, x0, steps):
    df = derivative(f, 1e-6)
    x = x0
    for i in range(steps):
        x = x - f(x) / df(x)
        print("  iter", i, x)
    return x


def main():
    cube = lambda x: x * x * x
    d = derivative(cube, 0.001)
    print(d(2.0), d(0.0))
    root = newton(lambda x: x * x - 2.0, 1.0, 6)
    print("sqrt2 ~", root, abs(root * root - 2.0) < 1e-12)
    return root
