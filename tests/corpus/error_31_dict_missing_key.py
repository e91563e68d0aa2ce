# Reading a key a dict does not hold raises KeyError with the key's repr, as in Python.
def main():
    d = {"alpha": 1}
    print(d.get("beta", "none"))
    return d["beta"]
