# Annotated assignments with values.
def area(w, h=2.0):
    result: float = w * h
    return result


def count(n):
    total: int = 0
    for i in range(n):
        total += i
    return total


def main():
    a: int = 3
    b: str = "x"
    print(area(3.0), area(2, 5), count(10), a, b)
    return (area(1.5), count(5))
