# Strings do not support item assignment, lists of strings do.
def main():
    words = ["ab", "cd"]
    words[0] = "xy"
    print(words)
    s = words[1]
    s[0] = "z"
    return s
