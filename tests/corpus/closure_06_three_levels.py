# Nested closures three levels deep.
def level1(a):
    def level2(b):
        def level3(c):
            return a * 100 + b * 10 + c
        return level3
    return level2


def curry3(f):
    return lambda x: lambda y: lambda z: f(x, y, z)


def vol(x, y, z):
    return x * y * z


def main():
    l2 = level1(1)
    l3 = l2(2)
    print(l3(3), level1(4)(5)(6), l2(9)(9))
    cv = curry3(vol)
    print(cv(2)(3)(4), cv(1)(1)(1))
    return (l3(0), level1(7)(8)(9), cv(5)(5)(5))
