# String algorithms with indexing: palindromes and longest run.
def is_pal(s):
    i = 0
    j = len(s) - 1
    while i < j:
        if s[i] != s[j]:
            return False
        i += 1
        j -= 1
    return True


def longest_run(s):
    best = 0
    best_ch = ""
    run = 0
    prev = ""
    for ch in s:
        if ch == prev:
            run += 1
        else:
            run = 1
            prev = ch
        if run > best:
            best = run
            best_ch = ch
    return best_ch, best


def main():
    for w in ("level", "levels", "", "a", "abba", "abca"):
        print(repr(w), is_pal(w))
    print(longest_run("aabbbccccdd"), longest_run("xyz"), longest_run(""))
    return (is_pal("noon"), longest_run("mississippiii"))
