# Indexing and slicing strings, with negative indices and steps.
def main():
    s = "abcdefghij"
    print(s[0], s[3], s[-1], s[-10], len(s))
    print(s[2:5], s[:3], s[7:], s[-3:], s[:-3])
    print(s[::2], s[1::3], s[::-1], s[8:2:-2], s[-1:-4:-1])
    print(repr(s[5:2]), repr(s[100:]), s[-100:2], s[3:100])
    n = len(s)
    half = n // 2
    print(s[:half], s[half:], s[half - 2:half + 2])
    word = "racecar"
    print(word == word[::-1], "python" == "python"[::-1])
    return (s[1:4], s[::-3], s[-2:], word[::-1])
