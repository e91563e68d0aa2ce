# Nested functions using module constants and outer locals.
RATE = 0.25
LIMIT = 100


def make_taxer(threshold):
    base = threshold * RATE
    def tax(amount):
        if amount <= threshold:
            return 0.0
        over = amount - threshold
        if over > LIMIT:
            over = LIMIT
        return base + over * RATE
    return tax


def main():
    t = make_taxer(40)
    for amt in (10, 40, 41, 90, 140, 1000):
        print(amt, t(amt))
    return (t(50), make_taxer(0)(8))
