# args: 7
# nonlocal through two levels, each declared in its own function, and a nested function that
# assigns a variable before the enclosing function ever does.
def main(x):
    total = 0

    def outer(v):
        nonlocal total
        seen = 0

        def inner(w):
            nonlocal seen, total
            seen += 1
            total += w
        inner(v)
        inner(v * 2)
        return seen

    def init():
        nonlocal late
        late = x * 3

    print(outer(1), outer(10), total)
    init()
    late = late + 1
    print("late", late)
    return total + late
