# Lists are mutable too: a function that extends or assigns into the list it is passed
# changes the caller's list; a string or a tuple is only rebound.
def push(xs, v):
    xs += [v]
    return len(xs)


def set_first(xs, v):
    xs[0] = v


def suffix(s, t):
    s += "!"
    t += (1,)
    return s, t


def main():
    xs = [1, 2]
    ys = xs
    print(push(xs, 3), xs, ys)
    set_first(ys, 10)
    print(xs, ys)
    s = "hi"
    t = (0,)
    print(suffix(s, t), s, t)
    return xs
