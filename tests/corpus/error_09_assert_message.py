# AssertionError with a message, from a nested call.
def withdraw(balance, amount):
    assert amount <= balance, "insufficient funds"
    return balance - amount


def main():
    b = 100
    for amt in (30, 50, 40):
        b = withdraw(b, amt)
        print("balance:", b)
    return b
