# String comparisons (lexicographic) and `in`.
def main():
    print("abc" < "abd", "abc" < "ab", "" < "a", "Z" < "a", "apple" > "apple pie")
    print("a" == "a", "a" != "b", "abc" <= "abc", "b" >= "abc")
    print("ell" in "hello", "z" in "hello", "" in "abc", "lo" not in "hello")
    words = ("pear", "apple", "fig", "banana")
    smallest = words[0]
    for w in words:
        if w < smallest:
            smallest = w
    print("smallest:", smallest, "largest:", max(words), "min:", min(words))
    count = 0
    for ch in "mississippi":
        if ch in "sp":
            count += 1
    print("s/p count:", count)
    return (smallest, count, "ss" in "mississippi")
