# Assertions that pass, with and without messages.
def checked_div(a, b):
    assert b != 0, "divisor must be nonzero"
    return a / b


def main():
    assert True
    assert 1 + 1 == 2
    assert len((1,)) == 1, "one-element tuple"
    x = checked_div(10, 4)
    print("x:", x)
    for i in range(1, 5):
        assert i > 0, "positive"
        print(i, checked_div(i, i * 2))
    assert "abc" < "abd" and not ()
    return x
