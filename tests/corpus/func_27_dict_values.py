# args: 1.5
# Dicts with string keys as values: displays, items by key, `get` with and without a default,
# `in`, `len`, truth, equality, printing, and the keys as a tuple.
def main(x):
    cfg = {"lr": x, "steps": 3, "name": "sgd", "nested": (1, 2)}
    print(cfg)
    print(cfg["lr"], cfg["steps"], cfg.get("name"), cfg.get("momentum"), cfg.get("momentum", 0.9))
    print("lr" in cfg, "beta" in cfg, "beta" not in cfg, len(cfg), bool(cfg), bool({}))
    print(tuple(cfg), list(cfg))
    same = {"steps": 3, "lr": x, "name": "sgd", "nested": (1, 2)}
    print(cfg == same, cfg != same, cfg == {"lr": x}, {} == {})
    dup = {"a": 1, "b": 2, "a": 3}
    print(dup, len(dup))
    total = 0.0
    for k in tuple(cfg):
        if k != "name" and k != "nested":
            total = total + cfg[k]
    return total
