# ValueError: too many values to unpack, from a nested call.
def split_pair(t):
    a, b = t
    return a, b


def main():
    print(split_pair((1, 2)))
    print(split_pair("xy"))
    return split_pair((1, 2, 3))
