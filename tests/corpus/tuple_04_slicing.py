# Tuple slicing: constants, computed bounds, negative steps.
T = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)


def window(t, start, size):
    return t[start:start + size]


def main():
    print(T[2:5], T[:3], T[7:], T[-3:], T[:-7])
    print(T[::3], T[1::2], T[::-1], T[8:1:-3], T[-1:-5:-1])
    print(T[5:2], T[20:], T[-20:2], T[3:-3])
    for s in range(0, 10, 4):
        print("window", s, window(T, s, 3))
    a = 2
    b = len(T) - a
    print(T[a:b], T[b:a:-1], T[a:b:a], T[-a::-a])
    return (T[1:3], T[::-4], window(T, 8, 5), T[9:0:-2])
