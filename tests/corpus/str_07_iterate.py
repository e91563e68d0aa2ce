# Iterating over strings, building new strings.
VOWELS = "aeiou"


def count_vowels(s):
    n = 0
    for ch in s:
        if ch in VOWELS:
            n += 1
    return n


def reverse(s):
    out = ""
    for ch in s:
        out = ch + out
    return out


def main():
    s = "programming language"
    print(count_vowels(s), reverse(s))
    spaced = ""
    for i, ch in enumerate("abc"):
        if i > 0:
            spaced = spaced + "-"
        spaced = spaced + ch
    print(spaced)
    caesar = ""
    for ch in "hello":
        caesar = caesar + ch + ch
    print(caesar, len(caesar))
    return (count_vowels(s), reverse("stressed"), spaced)
