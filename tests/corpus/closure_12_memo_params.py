# Closures returning closures with captured tuples and strings.
def make_formatter(prefix, suffix):
    def fmt(x):
        return prefix + str(x) + suffix
    return fmt


def make_lookup(keys, values):
    def get(k, default=None):
        for kk, v in zip(keys, values):
            if kk == k:
                return v
        return default
    return get


def main():
    brackets = make_formatter("[", "]")
    money = make_formatter("$", ".00")
    print(brackets(5), brackets("x"), money(12), brackets((1, 2)))
    get = make_lookup(("a", "b", "c"), (1, 2, 3))
    print(get("b"), get("z"), get("z", -1), get(k="c"))
    return (money(7), get("a"), get("q", 0))
