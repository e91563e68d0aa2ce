# if/elif/else chains.
def grade(score):
    if score >= 90:
        return "A"
    elif score >= 80:
        return "B"
    elif score >= 70:
        return "C"
    elif score >= 60:
        return "D"
    else:
        return "F"


def fizz(n):
    if n % 15 == 0:
        s = "FizzBuzz"
    elif n % 3 == 0:
        s = "Fizz"
    elif n % 5 == 0:
        s = "Buzz"
    else:
        s = str(n)
    return s


def main():
    for sc in (95, 85, 75, 65, 55, 90, 89.5):
        print(sc, grade(sc))
    out = ""
    for n in range(1, 16):
        out = out + fizz(n) + " "
    print(out)
    return (grade(72), fizz(30), fizz(9), fizz(10), fizz(7))
