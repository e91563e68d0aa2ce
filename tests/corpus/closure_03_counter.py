# A functional "counter": each step returns the next state and a new closure.
def make_counter(start, step):
    def next_value():
        return start + step
    def advance():
        return make_counter(start + step, step)
    return next_value, advance


def main():
    nv, adv = make_counter(0, 3)
    seen = ()
    for i in range(5):
        v = nv()
        print("step", i, "value", v)
        seen = seen + (v,)
        nv, adv = adv()
    return seen
