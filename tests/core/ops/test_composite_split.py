"""Splitting composites (ops/composite_split.py) against numpy's array_split / split and
exact pieces checked against PyTorch 2.x: views of self, gradients, in-place writes to
any piece, errors."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError

X = np.arange(10)


def pieces(ts):
    return [t.tolist() for t in ts]


def test_tensor_split_exact_pieces():
    x = E.tensor(X)
    assert pieces(E.tensor_split(x, 3)) == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert pieces(x.tensor_split([1, 4, 20])) == [[0], [1, 2, 3], [4, 5, 6, 7, 8, 9], []]
    assert pieces(E.tensor_split(x, [6, 2])) == [list(range(6)), [], list(range(2, 10))]
    assert pieces(E.tensor_split(x, [-3])) == [list(range(7)), [7, 8, 9]]
    assert pieces(E.tensor_split(x, E.tensor([1, 4]))) == [[0], [1, 2, 3], list(range(4, 10))]
    assert pieces(x.tensor_split(E.tensor(3))) == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=3), st.integers(-3, 2),
       st.one_of(st.integers(1, 6), st.lists(st.integers(-7, 7), max_size=4)))
def test_tensor_split_matches_numpy_array_split(shape, dim, how):
    dim = dim % len(shape)
    a = np.arange(int(np.prod(shape))).reshape(shape)
    got = E.tensor_split(E.tensor(a), how, dim)
    ref = np.array_split(a, how, axis=dim)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(g.numpy(), r)


@pytest.mark.parametrize("name, np_name, shape, arg", [
    ("hsplit", "hsplit", (2, 6, 2), 3), ("hsplit", "hsplit", (6,), [1, 4]),
    ("vsplit", "vsplit", (4, 3), 2), ("vsplit", "vsplit", (4, 3), [3]),
    ("dsplit", "dsplit", (2, 2, 4), 2), ("dsplit", "dsplit", (2, 2, 4), [1, -1]),
])
def test_directional_splits_match_numpy(name, np_name, shape, arg):
    a = np.arange(int(np.prod(shape))).reshape(shape)
    got = getattr(E, name)(E.tensor(a), arg)
    assert [p.shape for p in getattr(E.tensor(a), name)(arg)] == [p.shape for p in got]
    ref = getattr(np, np_name)(a, arg)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(g.numpy(), r)


def test_split_with_sizes_and_unsafe_forms():
    a = np.arange(24).reshape(2, 3, 4)
    x = E.tensor(a)
    assert [p.shape for p in E.split_with_sizes(x, [1, 2], 1)] == [(2, 1, 4), (2, 2, 4)]
    for got, ref in ((E.unsafe_split(x, 3, 2), np.split(a, [3], 2)),
                     (x.unsafe_chunk(2, -1), np.split(a, 2, 2)),
                     (E.unsafe_chunk(E.zeros(0, 2), 3), [np.zeros((0, 2))] * 3)):
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            np.testing.assert_array_equal(g.numpy(), r)


def test_pieces_are_views_and_may_be_written_in_place():
    x = E.tensor(np.arange(6.0), dtype=E.float64, requires_grad=True)
    base = x * 1
    for split in (lambda t: E.tensor_split(t, 3), lambda t: E.unsafe_split(t, 2),
                  lambda t: E.hsplit(t, 3)):
        parts = split(base)
        assert all(p._base is base for p in parts)
    last = E.unsafe_chunk(base, 3)[2]
    last.mul_(10)  # where chunk's second+ outputs refuse
    base.sum().backward()
    assert x.grad.tolist() == [1, 1, 1, 1, 10, 10]
    assert base.tolist() == [0, 1, 2, 3, 40, 50]


def test_gradients():
    a = E.tensor(np.arange(6.0).reshape(2, 3) / 7, requires_grad=True)
    fn = lambda t: tuple(p * p for p in E.tensor_split(t, [1, 5], dim=1))  # noqa: E731
    assert gradcheck(fn, (a,)) and gradgradcheck(fn, (a,))
    fn = lambda t: E.vsplit(t, 2)[1] * 3  # noqa: E731
    assert gradcheck(fn, (a,))


def test_errors():
    x = E.arange(10)
    with pytest.raises(RuntimeError, match="number of sections must be larger than 0"):
        E.tensor_split(x, 0)
    with pytest.raises(RuntimeError, match="at least a 1-dimensional tensor"):
        E.tensor_split(E.tensor(1.), 2)
    with pytest.raises(RuntimeError, match="zero-dimensional or one-dimensional"):
        E.tensor_split(x, E.tensor([[1]]))
    with pytest.raises(DtypeError, match="int64"):
        E.tensor_split(x, E.tensor([1.]))
    with pytest.raises(IndexError):
        E.tensor_split(x, 2, dim=1)
    with pytest.raises(RuntimeError, match="not divisible by the split_size 2"):
        E.hsplit(E.zeros(2, 3, 4), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions"):
        E.dsplit(E.zeros(2, 2), 2)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        E.vsplit(E.arange(6), 3)
    with pytest.raises(RuntimeError, match="at least 1 dimension"):
        E.hsplit(E.tensor(1.), 1)
    with pytest.raises(RuntimeError):
        E.split_with_sizes(E.zeros(4), [1, 2])
