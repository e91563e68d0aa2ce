# Positional and keyword arguments.
def describe(name, age, city):
    return name + " (" + str(age) + ") from " + city


def sub(a, b):
    return a - b


def main():
    print(describe("ann", 30, "oslo"))
    print(describe(age=25, city="rome", name="bob"))
    print(describe("cy", city="lima", age=41))
    print(sub(10, 3), sub(b=10, a=3), sub(10, b=3))
    return (sub(b=1, a=100), describe("d", 1, city="x"))


if __name__ == "__main__":
    print("run as a script:", main())
