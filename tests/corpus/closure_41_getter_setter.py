# A getter and a setter share one variable of the function that made them.
def make_box(v):
    def get():
        return v

    def put(new):
        nonlocal v
        old = v
        v = new
        return old

    return get, put


def main():
    get, put = make_box(1.5)
    print(get())
    print(put(2.5), get())
    get2, put2 = make_box(-1.0)
    put2(7.0)
    print(get(), get2())
    return get() + get2()
