# Nested ifs.
def classify(x, y):
    if x > 0:
        if y > 0:
            q = "I"
        else:
            if y < 0:
                q = "IV"
            else:
                q = "+x axis"
    else:
        if x < 0:
            if y > 0:
                q = "II"
            elif y < 0:
                q = "III"
            else:
                q = "-x axis"
        else:
            q = "origin" if y == 0 else "y axis"
    return q


def main():
    pts = ((1, 1), (-1, 1), (-1, -1), (1, -1), (0, 0), (0, 5), (3, 0), (-2, 0))
    res = ()
    for x, y in pts:
        q = classify(x, y)
        print((x, y), "->", q)
        res = res + (q,)
    return res
