# IndexError: string index out of range, from a nested call.
def char_at(s, i):
    return s[i]


def spell(s, n):
    out = ""
    for i in range(n):
        out = out + char_at(s, i) + "."
        print(out)
    return out


def main():
    spell("abc", 3)
    return spell("xy", 5)
