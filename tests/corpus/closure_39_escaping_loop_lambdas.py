# args: 2
# Lambdas collected in a loop read the loop variable when they run (late binding): called
# during the loop each sees the current value, called after it all see the last one.
def main(x):
    fs = []
    during = 0
    for i in range(4):
        fs = fs + [lambda v: v * 10 + i]
        during = during + fs[-1](x)
    print(during)
    after = []
    for f in fs:
        after = after + [f(x)]
    print(after)
    return during, after
