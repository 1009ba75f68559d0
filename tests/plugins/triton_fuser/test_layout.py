"""layout.py: broadcasting by strides, dimension merging and stride patterns."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ember_triton_fuser.layout import aligned_strides, broadcast_shapes, make_layout


def elem_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def test_broadcast_shapes_matches_numpy():
    for shapes in [((4, 1, 3), (5, 1)), ((), (2, 3)), ((1,), (7,)), ((2, 0), (1,))]:
        assert broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    with pytest.raises(ValueError, match="do not broadcast"):
        broadcast_shapes((3, 4), (5, 4))


def test_contiguous_operands_merge_to_rank_one():
    a = np.zeros((4, 5, 6), np.float32)
    lay = make_layout((4, 5, 6), [(a.shape, elem_strides(a))] * 3, rowwise=False)
    assert lay.sizes == (120,) and lay.pattern == ((1,),) * 3 and not lay.wide


def test_broadcast_operand_gets_zero_strides_and_blocks_merging():
    x = np.zeros((4, 6), np.float32)
    b = np.zeros((6,), np.float32)
    lay = make_layout((4, 6), [(x.shape, elem_strides(x)), (b.shape, elem_strides(b))],
                      rowwise=False)
    assert lay.sizes == (4, 6)
    assert lay.pattern == ((2, 1), (0, 1))
    assert lay.strides == ((6, 1), (0, 1))


def test_transposed_operand_keeps_its_strides():
    x = np.zeros((6, 4), np.float32).T
    y = np.zeros((4, 6), np.float32)
    lay = make_layout((4, 6), [(x.shape, elem_strides(x)), (y.shape, elem_strides(y))],
                      rowwise=False)
    assert lay.sizes == (4, 6) and lay.strides == ((1, 4), (6, 1))
    assert lay.pattern == ((1, 2), (2, 1))


def test_row_layout_keeps_last_dim_apart():
    x = np.zeros((2, 3, 8), np.float32)
    r = np.zeros((2, 3, 1), np.float32)
    lay = make_layout((2, 3, 8), [(x.shape, elem_strides(x)), (r.shape, elem_strides(r))],
                      rowwise=True)
    assert lay.sizes == (6,) and lay.cols == 8 and lay.rows == 6
    assert lay.col_strides == (1, 0) and lay.pattern == ((2, 1), (1, 0))


def test_scalar_iteration_space():
    lay = make_layout((), [((), ())], rowwise=False)
    assert lay.sizes == (1,) and lay.numel == 1 and lay.pattern == ((0,),)


def test_wide_index_when_offsets_exceed_int32():
    lay = make_layout((2, 3), [((2, 3), (2 ** 31, 1))], rowwise=False)
    assert lay.wide


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_merged_walk_visits_the_same_elements(shape, data):
    """Walking the merged layout reaches, for every operand, the same offsets as
    walking the broadcast shape element by element."""
    shape = tuple(shape)
    operands = []
    for _ in range(2):
        own = tuple(s if data.draw(st.booleans()) else 1 for s in shape)
        own = own[data.draw(st.integers(0, len(own))):]
        base = np.zeros(own, np.float32)
        if len(own) >= 2 and data.draw(st.booleans()):
            base = np.zeros(own[::-1], np.float32).T
        operands.append((base.shape, elem_strides(base)))
    lay = make_layout(shape, operands, rowwise=False)
    full = [aligned_strides(s, stv, shape) for s, stv in operands]
    want = [sorted(int(np.dot(idx, f)) for idx in np.ndindex(*shape)) for f in full]
    got = [[] for _ in operands]
    for idx in np.ndindex(*lay.sizes):
        for k, strides in enumerate(lay.strides):
            got[k].append(int(np.dot(idx, strides)))
    assert [sorted(g) for g in got] == want
