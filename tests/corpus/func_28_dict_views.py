# args: 2.0
# A dict's items, keys and values walked by `for` loops and materialized by tuple()/list();
# each key is a constant in its iteration, so it can index the dict again.
def summarize(**opts):
    total = 0.0
    for name, value in opts.items():
        print(name, value, opts[name])
        total = total + value
    return total


def main(x):
    cfg = {"lr": x, "momentum": 0.5, "decay": 0.25}
    print(tuple(cfg.keys()), list(cfg.values()), list(cfg.items()))
    for k in cfg.keys():
        print(k, cfg[k] * 2)
    scaled = 0.0
    for v in cfg.values():
        scaled = scaled + v
    return summarize(**cfg) + scaled
