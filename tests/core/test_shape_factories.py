"""broadcast_shapes, tril_indices, triu_indices, scalar_tensor (shape_factories.py)
against numpy and values checked against PyTorch 2.x."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from ember.errors import ShapeError


def test_broadcast_shapes():
    assert E.broadcast_shapes((2, 1), (3,)) == E.Size([2, 3])
    assert E.broadcast_shapes(2, (3, 1)) == (3, 2)
    assert E.broadcast_shapes() == () and isinstance(E.broadcast_shapes(), E.Size)
    assert E.broadcast_shapes((0, 1), (3,)) == (0, 3)
    with pytest.raises(ShapeError, match=r"shape 1 \(3,\) does not broadcast"):
        E.broadcast_shapes((2,), (3,))
    with pytest.raises(ShapeError, match="non-negative"):
        E.broadcast_shapes((2, -1))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=4), max_size=4))
def test_broadcast_shapes_matches_numpy(shapes):
    try:
        ref = np.broadcast_shapes(*map(tuple, shapes))
    except ValueError:
        with pytest.raises(ShapeError):
            E.broadcast_shapes(*shapes)
        return
    assert tuple(E.broadcast_shapes(*shapes)) == ref


@pytest.mark.parametrize("row, col, offset", [(3, 3, 0), (3, 4, 1), (4, 3, -1), (0, 0, 0),
                                               (3, 3, -5), (2, 5, 7)])
def test_triangle_indices_match_numpy(row, col, offset):
    lo = E.tril_indices(row, col, offset)
    up = E.triu_indices(row, col, offset)
    assert lo.dtype is E.int64 and lo.shape[0] == 2
    np.testing.assert_array_equal(lo.numpy(), np.stack(np.tril_indices(row, offset, col)))
    np.testing.assert_array_equal(up.numpy(), np.stack(np.triu_indices(row, offset, col)))


def test_triangle_indices_dtype_and_errors():
    assert E.triu_indices(3, 3, -1, dtype=E.int32).dtype is E.int32
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        E.tril_indices(-1, 3)
    with pytest.raises(TypeError, match="integral dtype"):
        E.tril_indices(3, 3, dtype=E.float32)


def test_scalar_tensor():
    t = E.scalar_tensor(3)
    assert t.shape == () and t.dtype is E.float32 and t.item() == 3.0
    assert E.scalar_tensor(3, dtype=E.int64).dtype is E.int64
    assert E.scalar_tensor(True).item() == 1.0
    assert E.scalar_tensor(1.5, dtype=E.float64, requires_grad=True).requires_grad
