# args: 3
# Two nested functions share one nonlocal variable: each call sees the other's updates.
def main(n):
    level = 0

    def up(k):
        nonlocal level
        level += k
        return level

    def down():
        nonlocal level
        level -= 1
        return level

    for i in range(n):
        up(i + 1)
        down()
    print(level, up(0), down())
    return level
