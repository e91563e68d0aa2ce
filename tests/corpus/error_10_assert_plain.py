# AssertionError without a message, from a nested call.
def check_sorted(t):
    for i in range(len(t) - 1):
        assert t[i] <= t[i + 1]
    print("sorted:", t)
    return True


def main():
    check_sorted((1, 2, 3))
    check_sorted(())
    check_sorted((1, 3, 2))
    return False
