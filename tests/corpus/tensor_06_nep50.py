# Mixing Python scalars with tensors follows NEP 50 (weak scalars).
import anfora as af
from anfora import ops


def show(label, t):
    print(label, t, t.dtype)


def main():
    i64 = ops.tensor([1, 2, 3])
    i32 = ops.tensor([1, 2, 3], dtype=af.int32)
    f32 = ops.tensor([1.0, 2.0, 3.0])
    f64 = ops.tensor([1.0, 2.0, 3.0], dtype=af.float64)
    b = ops.tensor([True, False, True])
    show("i64 * 2.5:", i64 * 2.5)
    show("f32 * 2.5:", f32 * 2.5)
    show("i32 + 1:", i32 + 1)
    show("1 - i32:", 1 - i32)
    show("i32 / 2:", i32 / 2)
    show("i32 + i64:", i32 + i64)
    show("f32 + i64:", f32 + i64)
    show("f32 + i32:", f32 + i32)
    show("f32 + f64:", f32 + f64)
    show("b + 1:", b + 1)
    show("b * 1.5:", b * 1.5)
    show("b + b:", b + b)
    show("f32 + True:", f32 + True)
    show("i32 * 0.1:", i32 * 0.1)
    show("f32 / 3:", f32 / 3)
    return (i64 * 2.5, f32 * 2.5, i32 + 1)


if __name__ == "__main__":
    print("run as a script:", main())
