# Nested tuples as records.
PEOPLE = (("ann", 31, (5, 6)), ("bob", 25, (6, 1)), ("cy", 40, (5, 10)))


def height_in(p):
    name, age, (ft, inch) = p
    return ft * 12 + inch


def main():
    tallest = PEOPLE[0]
    for p in PEOPLE:
        name, age, h = p
        print(name, age, h, height_in(p))
        if height_in(p) > height_in(tallest):
            tallest = p
    print("tallest:", tallest[0])
    ages = ()
    for name, age, h in PEOPLE:
        ages = ages + (age,)
    print("ages:", ages, sum(ages))
    return (tallest, ages)
