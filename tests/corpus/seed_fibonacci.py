def fibonacci(n):
    if n < 1:
        return 0
    if n == 1:
        return 1
    return fibonacci(n-1) + fibonacci(n-2)


def main():
    print("fibonacci(10) =", fibonacci(10))
    return fibonacci(10)
