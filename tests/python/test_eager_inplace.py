"""Eager Tensors follow numpy's object model (issue 27): an array is updated in place by
`x op= v`, `x[i] = v` and `x[i] op= v`, visibly through every name, tuple, view and caller
holding it; a scalar (the 0-d result of an operation, numpy's np.float64) is only rebound; a
basic index is a view that reads and writes its base. Each program below runs once on numpy
arrays and once on anfora Tensors, and both runs must give the same values (or the same
exception class). Transposes, and reshapes of contiguous arrays, are views as in numpy; where
numpy's answer depends on strides anfora does not model (a reshape of a strided view, `split`),
the update is refused with a ValueError, never computed differently."""

import numpy as np
import pytest

import anfora
from anfora import Parameter, ops


def as_numpy(v):
    if isinstance(v, (tuple, list)):
        return type(v)(as_numpy(x) for x in v)
    if isinstance(v, anfora.Tensor):
        return np.asarray(v)
    if isinstance(v, np.generic):
        return np.asarray(v)
    return v


def same(program, *arrays):
    """Runs `program(make, *arrays)` with numpy and with anfora; the results must agree."""
    def run(make):
        try:
            return ("ok", as_numpy(program(make, *[make(a) for a in arrays])))
        except Exception as e:  # noqa: BLE001 - the exception class is part of the behaviour
            return ("raised", TypeError if isinstance(e, TypeError) else type(e))

    want = run(lambda a: np.array(a))
    got = run(lambda a: anfora.tensor(np.array(a)))
    assert got[0] == want[0], f"numpy: {want}, anfora: {got}"
    if want[0] == "raised":
        assert got[1] is want[1], f"numpy raised {want[1]}, anfora {got[1]}"
        return
    flat_want, flat_got = _flat(want[1]), _flat(got[1])
    assert len(flat_want) == len(flat_got)
    for w, g in zip(flat_want, flat_got):
        if isinstance(w, np.ndarray):
            assert isinstance(g, np.ndarray) and g.shape == w.shape and g.dtype == w.dtype, (w, g)
            np.testing.assert_array_equal(g, w)
        else:
            assert g == w


def _flat(v):
    if isinstance(v, (tuple, list)):
        return [y for x in v for y in _flat(x)]
    return [v]


F64 = np.arange(6.0).reshape(2, 3)
I64 = np.arange(6).reshape(2, 3)


def test_augmented_assignment_changes_the_object_for_every_name_and_tuple():
    def program(make, x):
        y = x
        pair = (x, 1)
        x += 1.0
        x *= 2.0
        x -= 1.0
        x /= 2.0
        x **= 2.0
        x //= 1.0
        x %= 5.0
        return x, y, pair[0]

    same(program, F64)


def test_integer_and_bitwise_updates():
    def program(make, x):
        y = x
        x += 3
        x *= 2
        x //= 3
        x %= 4
        x <<= 1
        x >>= 1
        x &= 6
        x |= 1
        x ^= 2
        return y

    same(program, I64)


def test_numpys_casting_rule_for_in_place_updates():
    same(lambda make, x: x.__iadd__(0.5), I64)  # TypeError: float64 output into int64
    same(lambda make, x: (x.__setitem__(0, 2.7), x)[1], I64)  # item assignment truncates
    same(lambda make, x: x.__iadd__(make(np.ones(4))), F64)  # ValueError: broadcast


def test_functions_update_their_callers_arrays():
    def bump(a, v):
        a += v
        a[0, 0] = -1.0

    def program(make, x):
        alias = x
        bump(x, 10.0)
        bump(x[1], 1.0)
        return alias

    same(program, F64)


def test_basic_indexes_are_views_that_write_their_base():
    def program(make, x):
        row = x[1]
        row *= 2.0
        x[0][1:] = -1.0
        x[:, 0] += 10.0
        x[..., None][1, 2, 0] = 7.0
        col = x[:, ::2]
        col[0] = 0.5
        inner = x[1][1:]
        inner[0] = 100.0
        x += 1.0
        return x, row, col, inner

    same(program, F64)


def test_views_read_their_base_as_it_is_now():
    def program(make, x):
        row = x[0]
        x[0, 1] = 42.0
        x *= 2.0
        return row, row.sum(), x[1:][0]

    same(program, F64)


def test_advanced_indexes_are_copies():
    def program(make, x):
        picked = x[make(np.array([1, 0]))]
        picked += 100.0
        masked = x[x > 2.0]
        masked *= 0.0
        x[make(np.array([1, 1]))] += 1.0  # repeated indices: the last write wins
        x[x > 4.0] = -5.0
        return x, picked, masked

    same(program, F64)


def test_scalars_are_rebound_not_changed():
    def program(make, x):
        s = x.sum()
        t = s
        s += 1.0
        e = x[1, 2]
        f = e
        e *= 3.0
        i = make(np.arange(3)).sum()
        i += 0.5  # a scalar takes any result, as Python's numbers do
        return s, t, e, f, i, x

    same(program, F64)


def test_a_scalar_has_no_item_assignment():
    def program(make, x):
        s = x.sum()
        s[...] = 1.0

    same(program, F64)


def test_zero_d_arrays_from_constructors_update_in_place():
    def program(make, x):
        a = make(np.array(2.0))
        b = a
        a += 1.0
        z = make(np.zeros(()))
        z[...] = 5.0
        return b, z

    same(program, F64)
    z = ops.zeros(())
    alias = z
    z += 1.0
    assert float(alias) == 1.0


def test_methods_read_the_value_when_called():
    x = anfora.tensor(np.arange(3.0))
    total = x.sum
    x += 1.0
    assert float(total()) == 6.0


def test_transposes_and_reshapes_of_arrays_are_views():
    def program(make, x):
        t = x.T
        t[0] = -1.0
        p = x.transpose(1, 0)
        p[2] *= 10.0
        r = x.reshape((3, 2))
        r += 100.0
        x[1, 1] = 7.0
        rt = r.T
        rt[1, 2] = 0.5
        return x, t, p, r, rt

    same(program, F64)


def test_reshapes_numpy_would_copy_are_refused_where_the_difference_shows():
    x = anfora.tensor(np.arange(6.0).reshape(2, 3))
    # The reshape of a transpose: numpy copies (a strided view), anfora's copy remembers it.
    flat = x.T.reshape((6,))
    with pytest.raises(ValueError, match="made by `reshape` from a tensor that is still held"):
        flat += 1.0
    held = x.T
    flat_of_held = held.reshape((6,))
    held[0, 0] = 5.0
    with pytest.raises(ValueError, match="made by `reshape` from a tensor updated in place since"):
        flat_of_held.sum()
    np.testing.assert_array_equal(np.asarray(x)[0], [5.0, 1.0, 2.0])
    # A temporary's copy: nothing else can see its base, so it is an array of its own.
    fresh = ops.arange(6.0).reshape((2, 3)).T.reshape((6,))
    fresh[0] = -1.0
    np.testing.assert_array_equal(np.asarray(fresh), [-1.0, 3.0, 1.0, 4.0, 2.0, 5.0])
    # Operations other than these layout changes that numpy may answer with a view (split,
    # broadcast_to, ...) give copies that refuse alike.
    halves = ops.split(x, 2)
    with pytest.raises(ValueError, match="made by `ops.split`"):
        halves[0][0, 0] = 1.0


def test_parameters_are_written_by_in_place_updates():
    p = Parameter(np.array([1.0, 2.0, 3.0]), name="p")
    same_object = p
    p += 1.0
    p[0] = -1.0
    p[1:] *= 2.0
    assert p is same_object and isinstance(p, Parameter)
    np.testing.assert_array_equal(np.asarray(p), [-1.0, 6.0, 8.0])
    with pytest.raises(TypeError, match="Cannot cast ufunc output"):
        q = Parameter(np.array([1, 2]), name="q")
        q += 0.5


def test_copies_of_parameters_see_their_writes():
    # Results numpy may give as views of a Parameter (or of a view of one) refuse to be read
    # once the Parameter was written, in place or by a compiled update, as for arrays.
    p = Parameter(np.arange(6.0).reshape(2, 3), name="p")
    halves = ops.split(p, 3, axis=1)
    column = p[:, 0].reshape((2,))
    np.testing.assert_array_equal(np.asarray(column), [0.0, 3.0])
    p += 1.0
    with pytest.raises(ValueError, match="made by `ops.split` from a tensor updated in place"):
        halves[0].sum()
    with pytest.raises(ValueError, match="made by `reshape` from a tensor updated in place"):
        column.sum()
    flat = p.reshape((6,))  # the Parameter's own reshape: a view, which shows later writes
    p.assign(ops.zeros((2, 3), dtype=anfora.float64))
    np.testing.assert_array_equal(np.asarray(flat), np.zeros(6))
