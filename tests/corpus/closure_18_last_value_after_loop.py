# args: 4
# A function defined in a loop and called after it sees the loop variable's last value.
def main(n):
    for k in range(n):
        def scaled(x):
            return x * k
        print("during", scaled(2))
    print("after", scaled(3))
    j = 0
    while j < n:
        def offset(x):
            return x + j
        j += 2
    print("while", offset(100), j)
    return scaled(1) + offset(0)
