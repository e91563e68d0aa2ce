# args: 5
# Functions made in loops and called after them see the loop variables' last values; a
# function made before a variable's last assignment, called later, sees the last value.
def main(n):
    for a in range(n):
        def get_a():
            return a
    for b in ("x", "y", "z"):
        show = lambda: b * 2
    c = 0
    def get_c():
        return c
    c = n * 100
    print(get_a(), show(), get_c())
    return get_a() + get_c()
