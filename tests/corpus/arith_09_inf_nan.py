# Infinities and NaN: arithmetic, comparisons and printing.
def main():
    inf = float('inf')
    nan = float('nan')
    ninf = float('-inf')
    print(inf, ninf, nan)
    print(inf + 1, inf - inf, inf * 0, -inf, 1 / inf)
    print(nan == nan, nan != nan, nan < 1, nan > 1, inf > 1e308)
    print(inf == inf, ninf < inf, max(1.0, inf), min(ninf, -1e300))
    print(repr(inf), str(nan), float("-inf") * -1)
    x = 1e308
    print(x * 10, -x * 10)
    return (inf, ninf, nan, inf - inf)
