# UnboundLocalError: a variable assigned only in one branch, then read.
def describe(n):
    if n > 0:
        label = "positive"
    print("checking", n)
    return label


def main():
    print(describe(5))
    print(describe(-1))
    return "unreachable"
