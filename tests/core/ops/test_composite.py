"""Composites of ops/composite.py over views and repetition: broadcast_to, tile and
meshgrid against numpy (hypothesis fuzzes the shapes)."""
import warnings

import numpy as np
import pytest
from helpers import ALL_DTYPES, assert_close, make
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, broadcastable_shapes

import ember as E
from ember.errors import DtypeError, ShapeError

SETTINGS = settings(max_examples=40, deadline=None)


@SETTINGS
@given(st.data())
def test_broadcast_to_matches_numpy(data):
    shape = data.draw(array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    target = data.draw(broadcastable_shapes(shape, min_dims=len(shape), max_dims=4,
                                            min_side=0, max_side=3).filter(
        lambda t: np.broadcast_shapes(shape, t) == t))
    x, ref = make(shape, E.float32)
    y = E.broadcast_to(x, target)
    assert_close(y, np.broadcast_to(ref, target))
    assert y._base is x  # a view, as expand


def test_broadcast_to_minus_one_and_errors():
    x = E.ones(3)
    assert x.broadcast_to((2, -1)).shape == (2, 3)
    with pytest.raises(RuntimeError, match=r"expanded size of the tensor \(4\) must match"):
        E.broadcast_to(x, (2, 4))
    with pytest.raises(RuntimeError, match="number of sizes provided"):
        E.broadcast_to(E.ones(2, 3), (3,))


@SETTINGS
@given(shape=array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3),
       reps=st.lists(st.integers(0, 3), max_size=4), dtype=st.sampled_from(ALL_DTYPES))
def test_tile_matches_numpy(shape, reps, dtype):
    x, ref = make(shape, dtype)
    assert_close(E.tile(x, reps), np.tile(ref, reps), dtype)


def test_tile_errors_and_method():
    x = E.tensor([[1, 2]])
    assert x.tile((2,)).tolist() == [[1, 2, 1, 2]]
    assert x.tile(2, 1).shape == (2, 2)
    with pytest.raises(RuntimeError, match="non-negative"):
        E.tile(x, (-1,))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
@pytest.mark.parametrize("sizes", [(2,), (2, 3), (2, 3, 4), (0, 3), (1, 2, 1)])
def test_meshgrid_matches_numpy(indexing, sizes):
    refs = [np.arange(n, dtype=np.float64) + 10 * i for i, n in enumerate(sizes)]
    got = E.meshgrid(*[E.tensor(r) for r in refs], indexing=indexing)
    want = np.meshgrid(*refs, indexing=indexing)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w, E.float64)
    listed = E.meshgrid([E.tensor(r) for r in refs], indexing=indexing)
    assert [tuple(t.shape) for t in listed] == [tuple(t.shape) for t in got]


def test_meshgrid_warns_without_indexing_and_takes_0d():
    with pytest.warns(UserWarning, match="pass indexing='ij'"):
        a, b = E.meshgrid(E.ones(2), E.ones(3))
    assert a.shape == (2, 3)  # 'ij'
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, b = E.meshgrid(E.tensor(1.0), E.ones(3), indexing="xy")
    assert a.shape == b.shape == (3, 1)


def test_meshgrid_errors():
    with pytest.raises(ValueError, match="'ij' or 'xy', got 'foo'"):
        E.meshgrid(E.ones(2), indexing="foo")
    with pytest.raises(ValueError, match="non-empty"):
        E.meshgrid([], indexing="ij")
    with pytest.raises(ShapeError, match=r"0-D or 1-D tensors, got shape \[2, 2\] for tensor 0"):
        E.meshgrid(E.ones(2, 2), E.ones(3), indexing="ij")
    with pytest.raises(DtypeError, match="dtype ember.float32, got ember.int64 for tensor 1"):
        E.meshgrid(E.ones(2), E.arange(3), indexing="ij")
