# Matrices as tuples of tuples, multiplied with nested loops.
A = ((1, 2, 3), (4, 5, 6))
B = ((7, 8), (9, 10), (11, 12))


def matmul(a, b):
    rows = ()
    for i in range(len(a)):
        row = ()
        for j in range(len(b[0])):
            s = 0
            for k in range(len(b)):
                s += a[i][k] * b[k][j]
            row = row + (s,)
        rows = rows + (row,)
    return rows


def transpose(m):
    out = ()
    for j in range(len(m[0])):
        col = ()
        for i in range(len(m)):
            col = col + (m[i][j],)
        out = out + (col,)
    return out


def main():
    c = matmul(A, B)
    for row in c:
        print(row)
    print(transpose(A))
    print(matmul(transpose(B), transpose(A)) == transpose(c))
    return c
