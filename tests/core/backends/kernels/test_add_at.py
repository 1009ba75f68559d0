"""The numpy fast paths for accumulating scatters (kernels/indexing.py add_at_dim,
add_at_flat and what uses them: index_add, scatter_add, index_put_(accumulate=True))
against np.add.at in float64, and against the generic (CuPy) kernels that keep add.at."""
import ml_dtypes
import numpy as np
import pytest

from ember.backends.kernels.indexing import _MAX_ROUNDS, add_at_dim

@pytest.fixture(autouse=True, params=["rounds", "slices"])
def fast_paths_at_test_sizes(request, monkeypatch):
    """The fast paths even for these small arrays (they start at ~8e3 elements): inner
    dims by rounds of distinct indices, or by slice adds."""
    from ember.backends.kernels import indexing
    monkeypatch.setattr(indexing, "_SMALL", 0)
    monkeypatch.setattr(indexing, "_MIN_SLICE", 0 if request.param == "slices" else 10**9)


DTYPES = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.int64]
TOL = {np.float16: 2e-2, ml_dtypes.bfloat16: 5e-2, np.float32: 1e-5, np.float64: 1e-12,
       np.int64: 0}

INDICES = {
    "distinct": lambda n, rng: rng.permutation(n)[: max(n - 2, 0)],
    "repeats": lambda n, rng: rng.integers(0, n, 3 * n),
    "one_row_many": lambda n, rng: np.full(_MAX_ROUNDS + 5, n - 1),  # reduceat path
    "empty": lambda n, rng: np.zeros(0, dtype=np.int64),
}


def values(shape, dtype, rng):
    if dtype == np.int64:
        return rng.integers(-50, 50, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def reference(out, dim, idx, src):
    ref = out.astype(np.float64)
    np.add.at(ref, (slice(None),) * dim + (idx,), src.astype(np.float64))
    return ref


def check(got, ref, dtype):
    tol = TOL[dtype] * max(1.0, float(np.abs(ref).max(initial=0)))
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=0, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("kind", sorted(INDICES))
@pytest.mark.parametrize("shape,dim", [((9,), 0), ((9, 5), 0), ((4, 9, 3), 1),
                                       ((3, 4, 9), 2), ((9, 1), 0)])
def test_add_at_dim_matches_add_at(dtype, kind, shape, dim):
    rng = np.random.default_rng(0)
    idx = INDICES[kind](shape[dim], rng).astype(np.int64)
    out = values(shape, dtype, rng)
    src_shape = shape[:dim] + (idx.size,) + shape[dim + 1:]
    # a non-contiguous source: the transpose of a contiguous one
    src = np.ascontiguousarray(values(src_shape[::-1], dtype, rng)).T
    ref = reference(out, dim, idx, src)
    got = out.copy()
    add_at_dim(np, got, dim, idx, src)
    check(got, ref, dtype)


@pytest.mark.parametrize("kind", ["distinct", "repeats"])
def test_rounds_are_bitwise_add_at(kind):
    """Up to _MAX_ROUNDS repeats, the rounds add in np.add.at's own order."""
    rng = np.random.default_rng(1)
    idx = INDICES[kind](50, rng)
    out = values((50, 7), np.float32, rng)
    src = values((idx.size, 7), np.float32, rng)
    expected = out.copy()
    np.add.at(expected, idx, src)
    add_at_dim(np, out, 0, idx, src)
    assert np.array_equal(out, expected)


@pytest.mark.parametrize("dtype", [np.bool_, np.float16, np.float32, np.int64])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_add_fast_equals_generic(numpy_kernels, generic_kernels, dtype, dim):
    rng = np.random.default_rng(2)
    a = values((6, 8), np.int64, rng).astype(dtype)
    idx = rng.integers(0, a.shape[dim], 40)
    src_shape = (40, 8) if dim == 0 else (6, 40)
    src = values(src_shape, np.int64, rng).astype(dtype)
    fast = numpy_kernels["index_add"](a, dim, idx, src, 1)
    slow = generic_kernels["index_add"](a, dim, idx, src, 1)
    np.testing.assert_allclose(fast.astype(np.float64), slow.astype(np.float64),
                               rtol=1e-2 if dtype == np.float16 else 1e-6)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64,
                                   np.int64])
@pytest.mark.parametrize("case", ["expanded", "general", "expanded_smaller"])
def test_scatter_add_fast_matches_add_at(numpy_kernels, generic_kernels, dtype, case):
    rng = np.random.default_rng(3)
    a = values((7, 6), dtype, rng)
    if case == "general":
        index = rng.integers(0, 7, (9, 6))
    else:  # index_select's backward: a vector expanded over the other dims
        cols = 6 if case == "expanded" else 4
        index = np.broadcast_to(rng.integers(0, 7, (9, 1)), (9, cols))
    src = values((10, 6), dtype, rng)
    got = numpy_kernels["scatter_add"](a, 0, index, src)
    ref = a.astype(np.float64)
    rows = np.arange(index.shape[1])[None, :]
    np.add.at(ref, (index, rows), src[: index.shape[0], : index.shape[1]].astype(np.float64))
    check(got, ref, dtype)
    slow = generic_kernels["scatter_add"](a, 0, index, src)
    check(got, slow.astype(np.float64), dtype)


@pytest.mark.parametrize("where", ["rows_negative", "middle", "mask", "two_arrays",
                                   "scalar_value"])
def test_index_put_accumulate_matches_add_at(numpy_kernels, where):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((5, 6, 3))
    idx = {"rows_negative": (np.array([[0, -1], [4, 0]]),),
           "middle": (slice(None), np.array([1, 1, 5, -6, 2])),
           "mask": (a[:, :, 0] > 0,),
           "two_arrays": (np.array([0, 0, 3]), np.array([1, 1, 2])),
           "scalar_value": (np.array([2, 2, 2]),)}[where]
    sel_shape = a[idx].shape
    value = 1.5 if where == "scalar_value" else rng.standard_normal(sel_shape)
    expected = a.copy()
    np.add.at(expected, idx, value)
    got = numpy_kernels["index_put_"](a.copy(), idx, value, accumulate=True)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, ml_dtypes.bfloat16])
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_flat_take_matches_take_along_axis(numpy_kernels, generic_kernels, dtype,
                                                 index_dtype, dim):
    rng = np.random.default_rng(5)
    a = values((5, 6, 7), dtype, rng)
    d = dim % 3
    shape = [4, 5, 6]
    shape[d] = 9  # longer than a along dim, shorter elsewhere (PyTorch allows both)
    index = rng.integers(0, a.shape[d], shape).astype(index_dtype)
    got = numpy_kernels["gather"](a, d, index, False)
    expected = np.take_along_axis(a[tuple(slice(0, n) for n in index.shape[:d])
                                    + (slice(None),)
                                    + tuple(slice(0, n) for n in index.shape[d + 1:])],
                                  index.astype(np.int64), axis=d)
    assert np.array_equal(got, expected)
    assert np.array_equal(generic_kernels["gather"](a, d, index, False), expected)
    # a non-contiguous input takes the fancy-index path
    t = np.ascontiguousarray(np.swapaxes(a, 0, 2)).swapaxes(0, 2)
    assert np.array_equal(numpy_kernels["gather"](t, d, index, False), expected)


@pytest.mark.parametrize("kind", sorted(INDICES))
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_inner_dim_rounds_and_reduceat(monkeypatch, kind, dtype):
    """Long indices on an inner dim take the rounds / reduceat paths, not slice adds."""
    from ember.backends.kernels import indexing
    monkeypatch.setattr(indexing, "_MAX_SLICES", 0)
    rng = np.random.default_rng(6)
    idx = INDICES[kind](9, rng).astype(np.int64)
    out = values((3, 9, 4), dtype, rng)
    src = values((3, idx.size, 4), dtype, rng)
    ref = reference(out, 1, idx, src)
    indexing.add_at_dim(np, out, 1, idx, src)
    check(out, ref, dtype)
