"""nonzero, count_nonzero, unique (_unique2, unique_dim), unique_consecutive and
repeat_interleave (kernels/data_dependent.py, with their fronts and composites) against
numpy."""
import math

import numpy as np
import pytest
from helpers import ALL_DTYPES, assert_close, make

import ember as E


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 0, 3), (2, 3, 2)])
def test_nonzero_argwhere_count_nonzero(dtype, shape):
    x, ref = make(shape, dtype, low=-1, high=1)  # plenty of zeros
    want = np.argwhere(ref)
    assert_close(E.nonzero(x), want, E.int64)
    assert_close(x.argwhere(), want, E.int64)
    assert_close(E.count_nonzero(x), np.count_nonzero(ref), E.int64)
    assert_close(x.count_nonzero(-1), np.count_nonzero(ref, axis=-1), E.int64)
    if len(shape) > 1:
        assert_close(E.count_nonzero(x, (0, -1)), np.count_nonzero(ref, axis=(0, -1)), E.int64)
        assert_close(E.count_nonzero(x, []), np.count_nonzero(ref), E.int64)


def test_nonzero_special_cases():
    assert E.nonzero(E.tensor(5)).shape == (1, 0)
    assert E.nonzero(E.tensor(0.0)).shape == (0, 0)
    nan = E.tensor([0.0, math.nan, -0.0])
    assert nan.nonzero().tolist() == [[1]] and E.count_nonzero(nan).item() == 1
    out = E.empty(0, dtype=E.int64)
    assert E.nonzero(E.tensor([[0, 2], [3, 0]]), out=out) is out
    assert out.tolist() == [[0, 1], [1, 0]]
    with pytest.raises(ValueError, match="appears multiple times"):
        E.count_nonzero(E.ones(2, 3), (1, -1))
    with pytest.raises(IndexError, match="out of range"):
        E.count_nonzero(E.ones(2, 3), 2)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(9,), (3, 4), (0,), ()])
def test_unique_flat_matches_numpy(dtype, shape):
    x, ref = make(shape, dtype, low=-2, high=2)
    values, inverse, counts = E.unique(x, return_inverse=True, return_counts=True)
    want, want_inv, want_counts = np.unique(ref, return_inverse=True, return_counts=True)
    assert_close(values, want, dtype)
    assert_close(inverse, want_inv.reshape(shape), E.int64)
    assert_close(counts, want_counts, E.int64)
    assert_close(x.unique(sorted=False), want, dtype)  # sorted anyway


def test_unique_keeps_every_nan_and_returns_what_was_asked():
    x = E.tensor([math.nan, 1.0, math.nan, 1.0, -math.inf])
    v, inv, c = E.unique(x, return_inverse=True, return_counts=True)
    assert str(v.tolist()) == "[-inf, 1.0, nan, nan]"
    assert inv.tolist() == [2, 1, 3, 1, 0] and c.tolist() == [1, 2, 1, 1]
    assert isinstance(E.unique(x), E.Tensor)
    v, c = E.unique(x, return_counts=True)
    assert c.tolist() == [1, 2, 1, 1]
    v, inv = x.unique(return_inverse=True)
    assert inv.shape == (5,)
    raw = E._unique2(x)
    assert raw.inverse_indices.shape == (0,) and raw.counts.shape == (0,)


@pytest.mark.parametrize("dtype", [E.bool_, E.uint8, E.int32, E.bfloat16, E.float64])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_dim_matches_numpy(dtype, dim):
    x, ref = make((4, 3, 2), dtype, low=0, high=1)  # two values: repeated slices
    ref = ref[[0, 1, 0, 2]] if dim == 0 else ref
    x = E.tensor(ref).to(dtype) if dim == 0 else x
    want, want_inv, want_counts = np.unique(ref, return_inverse=True, return_counts=True,
                                            axis=dim)
    values, inverse, counts = E.unique(x, dim=dim, return_inverse=True, return_counts=True)
    assert_close(values, want, dtype)
    assert_close(inverse, want_inv.reshape(-1), E.int64)
    assert_close(counts, want_counts, E.int64)
    with pytest.raises(IndexError, match="out of range"):
        E.unique(x, dim=3)


def np_unique_consecutive(flat):
    first = np.ones(len(flat), bool)
    first[1:] = flat[1:] != flat[:-1]
    starts = np.flatnonzero(first)
    return flat[first], np.cumsum(first) - 1, np.diff(np.append(starts, len(flat)))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(10,), (2, 5), (0,), ()])
def test_unique_consecutive_matches_reference(dtype, shape):
    x, ref = make(shape, dtype, low=0, high=1)
    want, want_inv, want_counts = np_unique_consecutive(ref.reshape(-1))
    values, inverse, counts = E.unique_consecutive(x, return_inverse=True, return_counts=True)
    assert_close(values, want, dtype)
    assert_close(inverse, want_inv.reshape(shape), E.int64)
    assert_close(counts, want_counts, E.int64)
    assert_close(x.unique_consecutive(), want, dtype)


def test_unique_consecutive_along_a_dim_and_nan():
    x = E.tensor([[1, 1], [1, 1], [2, 3], [1, 1]])
    v, inv, c = E.unique_consecutive(x, return_inverse=True, return_counts=True, dim=0)
    assert v.tolist() == [[1, 1], [2, 3], [1, 1]]
    assert inv.tolist() == [0, 0, 1, 2] and c.tolist() == [2, 1, 1]
    v, c = E.tensor([[1, 1, 2], [3, 3, 4]]).unique_consecutive(return_counts=True, dim=-1)
    assert v.tolist() == [[1, 2], [3, 4]] and c.tolist() == [2, 1]
    assert E.unique_consecutive(E.tensor([math.nan, math.nan])).shape == (2,)


@pytest.mark.parametrize("dtype", [E.int32, E.int64])
def test_repeat_interleave_index(dtype):
    r = E.tensor(np.array([2, 0, 3, 1]), dtype=dtype)
    got = E.repeat_interleave(r)
    assert_close(got, np.repeat(np.arange(4), [2, 0, 3, 1]), dtype)
    assert E.repeat_interleave(r, output_size=6).tolist() == got.tolist()
    assert E.repeat_interleave(E.zeros(0, dtype=dtype)).shape == (0,)
    with pytest.raises(RuntimeError, match="output_size=5 does not match the sum"):
        E.repeat_interleave(r, output_size=5)
    with pytest.raises(RuntimeError, match="can not be negative"):
        E.repeat_interleave(E.tensor([1, -2], dtype=dtype))
    with pytest.raises(RuntimeError, match="1-D"):
        E.repeat_interleave(E.tensor([[1, 2]], dtype=dtype))
    with pytest.raises(NotImplementedError, match="CPUIntType, CPULongType"):
        E.repeat_interleave(E.tensor([1.0, 2.0]))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_repeat_interleave_matches_numpy(dtype, dim):
    x, ref = make((2, 3), dtype)
    assert_close(E.repeat_interleave(x, 2, dim), np.repeat(ref, 2, axis=dim), dtype)
    n = ref.size if dim is None else ref.shape[dim]
    reps = np.arange(n) % 3
    got = x.repeat_interleave(E.tensor(reps), dim=dim)
    assert_close(got, np.repeat(ref, reps, axis=dim), dtype)
    one = E.tensor([3], dtype=E.int32)  # one count for all, (1,) or 0-d
    assert_close(E.repeat_interleave(x, one, dim), np.repeat(ref, 3, axis=dim), dtype)
    assert_close(E.repeat_interleave(x, one[0], dim), np.repeat(ref, 3, axis=dim), dtype)


def test_repeat_interleave_errors_and_zero_dim():
    x = E.tensor([[1, 2], [3, 4]])
    assert E.repeat_interleave(E.tensor(3.0), 2, dim=0).tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="can not be negative"):
        x.repeat_interleave(-1)
    with pytest.raises(RuntimeError, match=r"repeats.size\(0\) = 3 and input.size\(0\) = 2"):
        E.repeat_interleave(x, E.tensor([1, 2, 3]), dim=0)
    with pytest.raises(RuntimeError, match="0-dim or 1-dim"):
        E.repeat_interleave(x, E.tensor([[1, 2]]), dim=0)
    with pytest.raises(RuntimeError, match="output_size"):
        E.repeat_interleave(x, 2, dim=0, output_size=3)
    with pytest.raises(IndexError, match="out of range"):
        E.repeat_interleave(x, 2, dim=2)
