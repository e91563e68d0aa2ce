# Recursive algorithms on tuple slices: merge sort and binary search.
def merge(a, b):
    out = ()
    i = 0
    j = 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out = out + (a[i],)
            i += 1
        else:
            out = out + (b[j],)
            j += 1
    return out + a[i:] + b[j:]


def msort(t):
    if len(t) <= 1:
        return t
    mid = len(t) // 2
    return merge(msort(t[:mid]), msort(t[mid:]))


def bsearch(t, x):
    lo = 0
    hi = len(t)
    while lo < hi:
        mid = (lo + hi) // 2
        if t[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def main():
    data = (38, 27, 43, 3, 9, 82, 10, 3, -5)
    s = msort(data)
    print("sorted:", s)
    for x in (3, 10, 100, -10):
        print("bsearch", x, "->", bsearch(s, x))
    return s
