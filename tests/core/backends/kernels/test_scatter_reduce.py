"""scatter_reduce (kernels/scatter_reduce.py) against a loop-by-loop numpy float64 reference
over reductions, include_self, dims and dtypes; the generic (CuPy) path against numpy's;
errors. Gradients: tests/core/autograd/test_scatter_reduce_backward.py and op_samples.

Values, integer means (rounded down) and errors were checked against PyTorch 2.x.
"""
import itertools

import numpy as np
import pytest
from helpers import ALL_DTYPES, assert_close, make

import ember as E
from ember.errors import DtypeError, ShapeError

REDUCES = ["sum", "prod", "mean", "amax", "amin"]
_COMBINE = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
            "amin": np.minimum}


def _reference(self, dim, index, src, reduce, include_self, floor_mean):
    """The textbook loop: gather every group, reduce it."""
    out = np.array(self, dtype=np.float64)
    groups: dict = {}
    for pos in itertools.product(*(range(n) for n in index.shape)):
        target = list(pos)
        target[dim] = index[pos]
        groups.setdefault(tuple(target), []).append(float(src[pos]))
    for target, vals in groups.items():
        members = ([out[target]] if include_self else []) + vals
        acc = members[0]
        for v in members[1:]:
            acc = _COMBINE[reduce](acc, v)
        if reduce == "mean":
            acc = acc / len(members)
            acc = np.floor(acc) if floor_mean else acc
        out[target] = acc
    return out


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_matches_the_loop_reference_float64(reduce, include_self, dim):
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (3, 4))
    src = rng.uniform(-2, 2, (4, 5))  # larger than index: only index's extent is read
    index = rng.integers(0, x.shape[dim], (3, 3) if dim == 0 else (3, 3))
    got = E.scatter_reduce(E.tensor(x), dim, E.tensor(index), E.tensor(src), reduce,
                           include_self=include_self)
    d = dim % 2
    assert_close(got, _reference(x, d, index, src, reduce, include_self, False))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("reduce", REDUCES)
def test_dtypes(dtype, reduce):
    if dtype is E.bool_ and reduce == "mean":
        pytest.skip("bool mean raises (test_errors)")
    x, xr = make((3, 4), dtype, low=0, high=3)
    s, sr = make((3, 4), dtype, low=0, high=3, seed=1)
    index = np.array([[0, 1, 0, 2], [2, 2, 0, 1], [0, 0, 0, 0]])
    for include_self in (True, False):
        got = x.scatter_reduce(0, E.tensor(index), s, reduce, include_self=include_self)
        assert got.dtype is dtype
        ref = _reference(xr, 0, index, sr, reduce, include_self,
                         floor_mean=not dtype.is_floating_point)
        if dtype is E.bool_:
            ref = ref != 0
        assert_close(got, ref.astype(dtype.numpy) if dtype is not E.bool_ else ref, dtype)


def test_integer_mean_rounds_down():
    x = E.tensor([0, 0, 0])
    got = x.scatter_reduce(0, E.tensor([0, 0, 1, 1]), E.tensor([-5, 0, -7, 1]), "mean",
                           include_self=False)
    assert got.tolist() == [-3, -3, 0]


def test_exact_values_and_untouched_positions():
    x = E.tensor([1., 2, 3, 4])
    idx, s = E.tensor([0, 1, 0, 1, 2, 1]), E.tensor([1., 2, 3, 4, 5, 6])
    assert x.scatter_reduce(0, idx, s, "prod").tolist() == [3, 96, 15, 4]
    assert x.scatter_reduce(0, idx, s, "prod", include_self=False).tolist() == [3, 48, 5, 4]
    assert x.scatter_reduce(0, idx, s, "amin", include_self=False).tolist() == [1, 2, 5, 4]
    assert x.scatter_reduce(0, idx, s, "mean", include_self=False).tolist() == [2, 4, 5, 4]


def test_nan_propagates_through_amax():
    got = E.tensor([0., 0.]).scatter_reduce(0, E.tensor([0, 0]), E.tensor([float("nan"), 1.]),
                                            "amax")
    assert np.isnan(got[0].item()) and got[1].item() == 0


def test_zero_dim_and_empty_index():
    assert E.tensor(2.).scatter_reduce(0, E.tensor(0), E.tensor(3.), "sum").item() == 5
    x = E.tensor([1., 2.])
    assert x.scatter_reduce(0, E.tensor([], dtype=E.int64), E.tensor([]), "prod",
                            include_self=False).tolist() == [1, 2]


def test_inplace_writes_self_and_bumps_version():
    x = E.tensor([1., 2, 3])
    v = x._version
    out = x.scatter_reduce_(0, E.tensor([2, 2]), E.tensor([5., 7.]), "amax")
    assert out is x and x.tolist() == [1, 2, 7] and x._version == v + 1


def test_generic_path_matches_numpy(numpy_kernels, generic_kernels):
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
    s = rng.uniform(-2, 2, (5, 4)).astype(np.float32)
    index = rng.integers(0, 3, (5, 4))
    for reduce, inc in itertools.product(REDUCES, (True, False)):
        a = numpy_kernels["scatter_reduce.two"](x, 0, index, s, reduce, inc)
        b = generic_kernels["scatter_reduce.two"](x, 0, index, s, reduce, inc)
        np.testing.assert_array_equal(a, b)


def test_errors():
    x, idx, s = E.zeros(2, 3), E.tensor([[0, 1, 0]]), E.ones(1, 3)
    with pytest.raises(ValueError, match="reduce must be one of sum, prod, mean, amax, amin"):
        x.scatter_reduce(0, idx, s, "max")
    with pytest.raises(DtypeError, match="self.dtype to be equal to src.dtype"):
        x.scatter_reduce(0, idx, s.double(), "sum")
    with pytest.raises(DtypeError, match="int64 or int32"):
        x.scatter_reduce(0, idx.float(), s, "sum")
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 2"):
        x.scatter_reduce(0, idx + 2, s, "sum")
    with pytest.raises(ShapeError, match="same number of dimensions"):
        x.scatter_reduce(0, E.tensor([0, 1]), s, "sum")
    with pytest.raises(NotImplementedError, match="bool"):
        x.bool().scatter_reduce(0, idx, s.bool(), "mean")
    y = E.zeros(2, 3)
    with pytest.raises(IndexError):
        y.scatter_reduce_(0, idx + 5, s, "sum")
    assert y.tolist() == [[0] * 3] * 2 and y._version == 0
