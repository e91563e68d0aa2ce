# args: True
# A nested function that reads a variable its creator has not assigned yet raises NameError
# when (and only when) it reads it.
def main(flag):
    def peek(read):
        if read:
            return z
        return -1
    print(peek(False))
    print(peek(flag))
    z = 5
    return z
