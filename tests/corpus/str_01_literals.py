# String literals with escapes and quotes; their repr.
def main():
    a = 'it\'s'
    b = "say \"hi\""
    c = 'both \' and "'
    d = "tab\there\nnewline"
    e = 'back\\slash'
    print(a, b, c)
    print(repr(a), repr(b), repr(c))
    print(repr(d), repr(e), len(d), len(e))
    print(d)
    print(repr(""), repr("'"), repr('"'), repr("\x00\x7f"))
    f = "caf\u00e9 \u03c0"
    print(f, repr(f), len(f))
    return (a, b, c, d)
