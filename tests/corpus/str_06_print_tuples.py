# Printing strings inside tuples and lists uses repr for the elements.
def main():
    t = ("a", 'b"c', "d'e", "it's \"quoted\"")
    print(t)
    print(("x",), ("", ""), ("tab\t",), ("nl\n",))
    l = ["p", "q", 1, 2.5]
    print(l, [], [""], [("nested", 1)])
    print("plain", t[1], t[2], sep=" | ")
    print(t, l, sep="\n")
    return t
