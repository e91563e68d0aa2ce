# args: True
# A nested function reads a variable its creator assigns on one branch or the other after
# the function is made: each call sees the value current at the call.
def main(flag):
    mode = "start"

    def describe(x):
        return mode + ":" + str(x)

    print(describe(1))
    if flag:
        mode = "on"
    else:
        mode = "off"
    print(describe(2))
    for k in range(3):
        mode = mode + "!"
    return describe(3)
