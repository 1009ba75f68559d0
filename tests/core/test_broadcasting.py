"""Hypothesis fuzzing of broadcasting in binary (and ternary) pointwise ops against numpy.

Shapes that broadcast must give numpy's result shape and float64 values; shapes that do not
must raise ember.ShapeError naming the operands' shapes, and in-place ops must refuse to
grow ``self`` and leave it unchanged.
"""
import re

import numpy as np
import pytest
from helpers import assert_close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import ember as E

SETTINGS = settings(max_examples=50, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
       "maximum": np.maximum, "atan2": np.arctan2, "lt": np.less, "remainder": np.remainder}
shape = st.lists(st.integers(0, 4), max_size=4).map(tuple)


def _operand(shp, seed, positive=False):
    rng = np.random.default_rng(seed)
    arr = rng.uniform(0.5, 3, size=shp) * (1 if positive else rng.choice([-1, 1], size=shp))
    return E.tensor(np.asarray(arr)), np.asarray(arr)


def _broadcasts(*shapes) -> bool:
    try:
        np.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4),
       op=st.sampled_from(sorted(OPS)))
def test_broadcasting_shapes_match_numpy(shapes, op):
    (s1, s2), result = shapes.input_shapes, shapes.result_shape
    x, xr = _operand(s1, 0)
    y, yr = _operand(s2, 1, positive=op == "remainder")
    r = getattr(E, op)(x, y)
    assert tuple(r.shape) == result
    assert_close(r, OPS[op](xr, yr), check_dtype=False)


@SETTINGS
@given(s1=shape, s2=shape, op=st.sampled_from(sorted(OPS)))
def test_arbitrary_shape_pairs_broadcast_or_raise_shape_error(s1, s2, op):
    x, xr = _operand(s1, 0)
    y, yr = _operand(s2, 1, positive=True)
    if _broadcasts(s1, s2):
        assert_close(getattr(E, op)(x, y), OPS[op](xr, yr), check_dtype=False)
    else:
        msg = f"{op}(): shapes do not broadcast: 'self' {list(s1)}, 'other' {list(s2)}"
        with pytest.raises(E.ShapeError, match=re.escape(msg)):
            getattr(E, op)(x, y)


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=3))
def test_where_broadcasts_three_operands(shapes):
    sc, sx, sy = shapes.input_shapes
    c = np.random.default_rng(2).random(sc) > 0.5
    x, xr = _operand(sx, 0)
    y, yr = _operand(sy, 1)
    r = E.where(E.tensor(np.asarray(c)), x, y)
    assert tuple(r.shape) == shapes.result_shape
    assert_close(r, np.where(c, xr, yr), check_dtype=False)


@SETTINGS
@given(s1=shape, s2=shape)
def test_where_with_incompatible_shapes_raises_shape_error(s1, s2):
    c = E.tensor(np.ones(s1, dtype=bool))
    x, _ = _operand(s2, 0)
    if _broadcasts(s1, s2):
        assert tuple(E.where(c, x, 0.0).shape) == np.broadcast_shapes(s1, s2)
    else:
        with pytest.raises(E.ShapeError, match=r"where\(\): shapes do not broadcast"):
            E.where(c, x, 0.0)


@SETTINGS
@given(s1=shape, s2=shape)
def test_inplace_ops_never_grow_self(s1, s2):
    x, xr = _operand(s1, 0)
    y, yr = _operand(s2, 1)
    if _broadcasts(s1, s2) and np.broadcast_shapes(s1, s2) == s1:
        assert x.mul_(y) is x
        assert_close(x, xr * yr)
    else:
        with pytest.raises((E.ShapeError, RuntimeError)):
            x.mul_(y)
        assert_close(x, xr)  # unchanged
