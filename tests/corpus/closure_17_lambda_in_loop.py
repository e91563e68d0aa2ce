# args: 5
# A lambda made in a loop reads the loop variable when it runs (late binding); it is called in
# the same iteration, before the variable changes.
def main(n):
    total = 0
    for i in range(n):
        g = lambda v: v + i
        total += g(1)
        print("i", i, "g(10)", g(10))
    return total
