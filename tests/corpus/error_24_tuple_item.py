# Tuples do not support item assignment.
def main():
    t = (1, 2, 3)
    print(t[0])
    t[0] = 5
    return t
