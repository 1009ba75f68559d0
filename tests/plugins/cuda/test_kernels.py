"""The CuPy overrides of ``ember_cuda/kernels.py``, device-free: run on ``_fake_cupy``
(numpy under CuPy's name with CuPy's differences) and compared with the cpu backend's
generic kernels on the same arrays. On a GPU, ``test_backend.py`` compares them for real.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

import ember as E
from ember_cuda import kernels as K

from ._fake_cupy import ElementwiseKernel, fake_cupy


@pytest.fixture
def fake(monkeypatch):
    cp = fake_cupy()
    monkeypatch.setitem(sys.modules, "cupy", cp)
    return cp


@pytest.fixture
def cuda_kernels(fake):
    return K.make_kernels(fake, bfloat16=True)


def cpu_kernels():
    return E.backends.registry.get_backend("cpu").kernels


@pytest.mark.parametrize("op", ["floor_divide", "remainder"])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16", "int32"])
def test_float_floor_divide_and_remainder_use_numpy_divmod(cuda_kernels, op, dtype):
    ElementwiseKernel.made.clear()
    dt = E.bfloat16.numpy if dtype == "bfloat16" else np.dtype(dtype)
    a = np.array([5.0, -5.0, 7.5, -7.0, 3.0, 1.0, 5.0]).astype(dt)
    b = np.array([0.5, 0.5, 2.0, 2.0, -2.0, 0.3, 0.1] if dt.kind == "f" or dt == E.bfloat16.numpy
                 else [2, 2, -2, 2, -2, 3, 3]).astype(dt)
    got = cuda_kernels[op](a, b)
    want = cpu_kernels()[op](a, b)
    assert got.dtype == want.dtype and np.array_equal(got.astype(float), want.astype(float))
    used = [k.dtypes for k in ElementwiseKernel.made if k.name == f"ember_{op}"]
    if dtype == "int32":
        assert not any(used)                       # CuPy's own integer loops
    else:                                          # bfloat16 reaches the kernel as float32
        assert used == [[np.dtype("float32") if dtype == "bfloat16" else dt]]
    div = cuda_kernels["div"](a, b, "floor") if op == "floor_divide" else None
    assert div is None or np.array_equal(div.astype(float), want.astype(float))


def test_divmod_kernel_source_is_numpys_algorithm(fake):
    k = K._divmod_kernel(fake, "floor_divide")
    assert k.name == "ember_floor_divide" and "ember_opmath<T>::type" in k.operation
    assert "fmodf" in k.preamble and "copysign" in k.preamble


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64",
                                   "float16", "bfloat16", "float32", "float64"])
def test_add_at_covers_every_dtype(cuda_kernels, dtype):
    # scatter_add and index_put_(accumulate=True) add repeated indices; CuPy's atomics
    # (the stand-in's add.at) refuse half of these dtypes
    dt = E.bfloat16.numpy if dtype == "bfloat16" else np.dtype(dtype)
    big = 2 ** 62 if dtype == "int64" else 100  # int64 wraps through the uint64 view
    a = np.array([[1, 2, 3], [4, 5, 6]]).astype(dt)
    src = np.array([[big, 1, 1], [big, 1, 1]]).astype(dt)
    idx = np.array([[0, 0, 2], [1, 1, 1]])
    want = cpu_kernels()["scatter_add"](a, 1, idx, src)
    got = cuda_kernels["scatter_add"](a, 1, idx, src)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    v, w = a.copy(), a.copy()
    index = (np.array([0, 1, 0]),)  # as ember._indexing.normalize gives it
    cuda_kernels["index_put_"](v, index, src[0], accumulate=True)
    cpu_kernels()["index_put_"](w, index, src[0], accumulate=True)
    assert np.array_equal(v, w)


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "bfloat16", "float16"])
@pytest.mark.parametrize("descending", [False, True])
def test_sorting_matches_the_cpu_kernels(cuda_kernels, dtype, descending):
    dt = E.bfloat16.numpy if dtype == "bfloat16" else np.dtype(dtype)
    x = np.array([[3, 1, np.nan, 1, 2, 3, -1, np.nan], [0, 0, 5, -2, 0, 7, 1, 1]])
    a = (x > 0 if dtype == "bool" else np.nan_to_num(x) if dt.kind in "iu" else x).astype(dt)
    # NOTE: the reference sorts bfloat16 as float32: numpy's sort of ml_dtypes' bfloat16
    # misorders rows holding NaN (so does the cpu backend's sort of bfloat16)
    ref = a.astype(np.float32) if dtype == "bfloat16" else a

    def results(r):
        return [np.asarray(x, dtype=float if x.dtype.kind == "f" or x.dtype == dt else None)
                for x in (r if isinstance(r, tuple) else (r,))]
    for op, args in (("sort", (1, descending, True)), ("argsort", (1, descending, False)),
                     ("sort", (0, descending, True))):
        got, want = cuda_kernels[op](a, *args), cpu_kernels()[op](ref, *args)
        for g, w in zip(results(got), results(want)):
            assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=g.dtype.kind == "f")
    if dtype != "bool":
        for k, largest in ((3, True), (2, False), (0, True), (8, descending)):
            got, want = cuda_kernels["topk"](a, k, 1, largest, True), \
                cpu_kernels()["topk"](ref, k, 1, largest, True)
            assert np.array_equal(got[1], want[1])
            assert np.array_equal(got[0].astype(float), want[0].astype(float), equal_nan=True)
    with pytest.raises(IndexError, match="k=9 is out of range"):
        cuda_kernels["topk"](a, 9, 1, True, True)
    assert cuda_kernels["sort"](a[0, 0, ...], 0, descending, True)[1].dtype == np.int64


def test_float16_matmul_goes_to_cublas_directly(cuda_kernels, fake, monkeypatch):
    seen = []
    monkeypatch.setattr(fake, "matmul", lambda a, b: seen.append(a.dtype) or np.matmul(a, b))
    a, b = np.ones((2, 3), np.float16), np.ones((3, 4), np.float16)
    for op in ("matmul", "mm"):
        assert cuda_kernels[op](a, b).dtype == np.float16
    assert cuda_kernels["bmm"](a[None], b[None]).shape == (1, 2, 4)
    assert seen == [np.float16] * 3
    with pytest.raises(E.ShapeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(2x3 and 2x3\)"):
        cuda_kernels["mm"](a, a)
    with pytest.raises(E.ShapeError, match=r"expected 'self' to be a 2-D tensor"):
        cuda_kernels["mm"](a[0], b)
    cuda_kernels["matmul"](a.astype(np.float32), b.astype(np.float32))
    assert len(seen) == 3  # float32: the generic kernel


def test_rand_draws_float32_for_half_and_float32(cuda_kernels):
    asked = []

    class Rng:
        def random(self, size, dtype):
            asked.append(np.dtype(dtype))
            return np.zeros(size, dtype)
        standard_normal = random
    for dt in ("float16", "float32", "float64"):
        assert cuda_kernels["rand"]((2,), np.dtype(dt), Rng()).dtype == dt
        assert cuda_kernels["randn"]((2,), np.dtype(dt), Rng()).dtype == dt
    assert asked == [np.dtype(d) for d in ("float32",) * 4 + ("float64",) * 2]



# ==== maximum/minimum: accumulate (cummax, cummin, mode) and at (scatter_reduce amax/amin) ====

@pytest.mark.parametrize("name", ["maximum", "minimum"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int64", "float16", "bfloat16",
                                   "float32", "float64"])
def test_accumulate_is_numpys_on_cupy(fake, name, dtype):
    # CuPy's accumulate is only cumsum/cumprod (the fake raises as CuPy does); the log-step
    # scan gives numpy's loop's values bit for bit: ties, NaN, every length
    with pytest.raises(NotImplementedError, match="accumulate"):
        getattr(fake, name).accumulate(np.zeros(3), axis=0)
    ns = K.numpy_compatible(fake)
    dt = E.bfloat16.numpy if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 5, 8, 9, 17, 64):
        x = rng.integers(-2, 3, (3, n)).astype(np.float64)
        if dt.kind == "f" or dt == E.bfloat16.numpy:
            x[rng.random(x.shape) < 0.1] = np.nan
        a = (x > 0) if dtype == "bool" else np.abs(np.nan_to_num(x)).astype(dt) \
            if dtype == "uint8" else x.astype(dt)
        for axis in (0, 1, -1):
            got = getattr(ns, name).accumulate(a, axis=axis)
            want = getattr(np, name).accumulate(a, axis=axis)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    out = np.empty((2, 3))
    assert ns.maximum.accumulate(np.ones((2, 3)), 1, None, out) is out
    assert ns.maximum(np.int32(1), 2) == 2
    with pytest.raises(NotImplementedError, match="reduce"):  # the rest is CuPy's own
        ns.maximum.reduce(np.zeros(3))


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "float16", "bfloat16", "float32"])
def test_cummax_cummin_on_cupy_match_the_cpu_kernels(cuda_kernels, op, dtype):
    dt = E.bfloat16.numpy if dtype == "bfloat16" else np.dtype(dtype)
    x = np.array([[1, 3, 3, np.nan, 2, 3, -1, 0, 5], [0, 0, -2, 0, 7, 7, 1, 1, np.nan]])
    a = (x > 0 if dtype == "bool" else np.nan_to_num(x) if dt.kind in "iu" else x).astype(dt)
    for dim in (0, 1):
        (gv, gi), (wv, wi) = cuda_kernels[op](a, dim), cpu_kernels()[op](a, dim)
        assert gv.dtype == wv.dtype and gi.dtype == wi.dtype == np.int64
        assert np.array_equal(gv.astype(float), wv.astype(float), equal_nan=True)
        assert np.array_equal(gi, wi)  # the last index of a tie, the latest NaN's


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64",
                                   "float16", "bfloat16", "float32", "float64"])
def test_scatter_reduce_amax_amin_cover_every_dtype(cuda_kernels, reduce, dtype):
    # CuPy's maximum.at/minimum.at refuse the 8- and 16-bit types, skip NaN and round
    # float64 through float32 (the fake does all three): ember keys them instead
    dt = E.bfloat16.numpy if dtype == "bfloat16" else np.dtype(dtype)
    a = np.array([[1, 2, 3], [4, 5, 6]]).astype(dt)
    src = np.array([[9, 0, 1], [0, 7, 1]]).astype(dt)
    if dt.kind == "f" and dtype != "float16":
        a, src = a + dt.type(0.1), src - dt.type(1e-9 if dtype == "float64" else 0.3)
        src[0, 2] = np.nan  # NaN wins, as in numpy and PyTorch
    idx = np.array([[0, 0, 2], [1, 1, 1]])
    for inc in (True, False):
        got = cuda_kernels["scatter_reduce.two"](a, 1, idx, src, reduce, inc)
        want = cpu_kernels()["scatter_reduce.two"](a, 1, idx, src, reduce, inc)
        assert_same_bits(got, want)


def assert_same_bits(got, want):
    """Same dtype and bits (so -0.0 is not 0.0), any NaN where ``want`` has one."""
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = want != want  # noqa: PLR0124
    assert np.array_equal(got != got, nan)  # noqa: PLR0124
    assert got[~nan].tobytes() == want[~nan].tobytes()


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_extremum_at_keys_order_every_float(fake, name):
    # the order keys: -inf < negatives < -0.0 < 0.0 < positives < inf, NaN wins; so
    # maximum takes 0.0 over -0.0 in any order (IEEE 754-2019's maximum; numpy keeps the
    # first of equal values, and atomics have no order anyway)
    ns = K.numpy_compatible(fake)
    vals = np.array([-np.inf, -3.5, -1e-300, -0.0, 0.0, 5e-324, 1.0, 1.7e308, np.inf])
    for dt in (np.float64, np.float32):
        v = vals.astype(dt)
        for i in range(v.size):
            for j in range(v.size):
                a = v[[i]].copy()
                getattr(ns, name).at(a, (np.array([0, 0]),), v[[j, j]])
                want = getattr(np, name)(v[i], v[j])
                if want == 0:
                    signs = np.signbit([v[i], v[j]])
                    want = -0.0 if (signs.all() if name == "maximum" else signs.any()) else 0.0
                assert a[0].tobytes() == dt(want).tobytes()
        a = v[:3].copy()
        getattr(ns, name).at(a, (np.array([1, 1]),), np.array([np.nan, 2], dt))
        assert np.isnan(a[1]) and a[0] == v[0] and a[2] == v[2]
