# A closure stored before its creator assigns the variable it reads raises NameError when it
# runs too early, as in Python.
def main():
    fs = [lambda: late + 1]
    print("before")
    r = fs[0]()
    late = 1
    return r
