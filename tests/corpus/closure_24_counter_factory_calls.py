# args: 4
# A nested counter used only by name: each call sees and updates the enclosing count.
def main(n):
    count = 0
    log = ()

    def hit(tag):
        nonlocal count, log
        count += 1
        log = log + ((tag, count),)
        return count

    i = 0
    while i < n:
        if i % 2 == 0:
            hit("even")
        else:
            hit("odd")
        i += 1
    print(count, log)
    return hit("end")
