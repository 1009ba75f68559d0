"""Stacking composites (ops/composite_stack.py) against numpy float64, with gradients."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError
from helpers import assert_close

SHAPES = [(), (3,), (2, 3), (2, 3, 2), (0,), (2, 0)]
RNG = np.random.default_rng(0)


def arr(shape, dtype=np.float64):
    return RNG.uniform(-2, 2, shape).astype(dtype)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast_matches_numpy(name, shape):
    a = arr(shape)
    assert_close(getattr(E, name)(E.tensor(a)), getattr(np, name)(a))
    pair = getattr(E, name)(E.tensor(a), E.tensor(a))
    assert isinstance(pair, tuple) and len(pair) == 2
    assert getattr(E, name)([E.tensor(a)])[0].shape == getattr(np, name)(a).shape


@pytest.mark.parametrize("name, shapes", [
    ("vstack", [(3,), (2, 3)]), ("row_stack", [(3,), (3,)]), ("hstack", [(2, 3), (2, 1)]),
    ("hstack", [(), (2,)]), ("dstack", [(2, 3), (2, 3, 2)]), ("dstack", [(3,), (3,)]),
    ("column_stack", [(3,), (3, 2)]), ("column_stack", [(), (1, 2)]), ("vstack", [(0,), (0,)]),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_stacks_match_numpy(name, shapes, dtype):
    arrays = [arr(s).astype(dtype) for s in shapes]
    ref = getattr(np, "vstack" if name == "row_stack" else name)(arrays)
    out = getattr(E, name)([E.tensor(a) for a in arrays])
    assert_close(out, ref)
    assert getattr(E, name)(*[E.tensor(a) for a in arrays]).shape == ref.shape


def test_stacks_promote_and_take_out():
    out = E.empty(0)
    r = E.vstack([E.ones(2, dtype=E.int64), E.ones(2)], out=out)
    assert r is out and r.dtype is E.float32 and r.shape == (2, 2)


@pytest.mark.parametrize("name", ["vstack", "hstack", "dstack", "column_stack", "row_stack"])
def test_stacks_reject_empty_list(name):
    with pytest.raises(ValueError, match="non-empty"):
        getattr(E, name)([])


@pytest.mark.parametrize("fn, shapes", [
    (E.vstack, [(3,), (2, 3)]), (E.hstack, [(2,), (3,)]), (E.dstack, [(2, 3), (2, 3)]),
    (E.column_stack, [(3,), (3, 2)]), (E.block_diag, [(2,), (2, 3)]),
])
def test_stack_gradients(fn, shapes):
    inputs = tuple(E.tensor(arr(s), requires_grad=True) for s in shapes)
    assert gradcheck(lambda *t: fn(list(t)), inputs)
    assert gradgradcheck(lambda *t: fn(list(t)), inputs)


def _np_block_diag(*arrays):
    arrays = [np.atleast_2d(a) for a in arrays]
    out = np.zeros((sum(a.shape[0] for a in arrays), sum(a.shape[1] for a in arrays)))
    r = c = 0
    for a in arrays:
        out[r:r + a.shape[0], c:c + a.shape[1]] = a
        r, c = r + a.shape[0], c + a.shape[1]
    return out


@pytest.mark.parametrize("shapes", [[(), (2,), (2, 3)], [(2, 2)], [(0, 2), (1, 0)]])
def test_block_diag_matches_reference(shapes):
    arrays = [arr(s) for s in shapes]
    assert_close(E.block_diag(*[E.tensor(a) for a in arrays]), _np_block_diag(*arrays))


def test_block_diag_dtypes_and_errors():
    r = E.block_diag(E.tensor(2), E.ones(2, dtype=E.int64), E.ones(2, 3, dtype=E.float16))
    assert r.dtype is E.float16 and r.shape == (4, 6)
    assert E.block_diag().shape == (1, 0)
    with pytest.raises(ShapeError, match="2 or fewer dims"):
        E.block_diag(E.ones(2, 2, 2))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=3))
def test_cartesian_prod_matches_itertools(sizes):
    arrays = [arr(n) for n in sizes]
    out = E.cartesian_prod(*[E.tensor(a) for a in arrays])
    ref = np.array(list(itertools.product(*arrays)), dtype=np.float64)
    if len(sizes) == 1:
        ref = arrays[0]
    assert_close(out, ref.reshape(out.shape))


@pytest.mark.parametrize("n, r, rep", [(4, 2, False), (4, 3, True), (3, 4, False), (0, 2, False),
                                       (3, 1, False), (3, 0, False)])
def test_combinations_match_itertools(n, r, rep):
    a = arr(n)
    out = E.combinations(E.tensor(a), r, rep)
    if r == 0:
        assert out.shape == (0,)
        return
    pick = itertools.combinations_with_replacement if rep else itertools.combinations
    ref = np.array(list(pick(a, r)), dtype=np.float64).reshape(-1, r)
    assert_close(out, ref)


def test_combinations_and_cartesian_errors_and_gradient():
    with pytest.raises(ShapeError, match="1-D"):
        E.combinations(E.ones(2, 2))
    with pytest.raises(ShapeError, match="1-D"):
        E.cartesian_prod(E.ones(2, 2), E.ones(2))
    with pytest.raises(ValueError, match="non-negative r"):
        E.combinations(E.ones(3), -1)
    x = E.tensor(arr(4), requires_grad=True)
    assert gradcheck(lambda t: E.combinations(t, 2, True), (x,))
    assert gradcheck(lambda t: E.cartesian_prod(t, t * 2), (x,))
