# String concatenation and repetition.
def banner(text, width):
    line = "=" * width
    return line + "\n" + text + "\n" + line


def main():
    s = "ab" + "cd"
    print(s, s * 3, 3 * "xy", "z" * 0, "q" * -2)
    print(banner("hello", 7))
    acc = ""
    for i in range(5):
        acc = acc + str(i) + ","
    print(acc)
    return (s * 2, acc, "" + "")
