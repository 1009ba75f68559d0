"""The numpy fast paths of pointwise kernels against references, special values included.

pow's common exponents (x*x, sqrt, reciprocal), clamp through clip, nan_to_num, the
branch-free ``blend`` select (where, masked_fill), shifts, lerp, and fmod / remainder /
floor_divide through float64 in blocks. References: float64 numpy, the generic kernels
CuPy runs (``generic_kernels``) and PyTorch's formulas restated step by step.
"""
import ml_dtypes
import numpy as np
import pytest

from ember.backends.kernels import pointwise_binary

FLOATS = [np.float16, ml_dtypes.bfloat16, np.float32, np.float64]
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.0, 1e-40, -1e-40, 1e-7, 1e30, -1e30,
           3.4e38, 65504.0, 123456.7, 16777217.0, np.inf, -np.inf, np.nan]


def _values(dtype, n=4096, seed=0):
    """``n`` values of ``dtype``: the special ones first, then normals of many scales."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 6, n)
    x[:len(SPECIAL)] = SPECIAL
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def _same(a, b):
    """Equal values with equal zero signs; NaN equals NaN (its sign is not compared)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    nan = np.isnan(a64)
    assert (nan == np.isnan(b64)).all(), "NaN positions differ"
    ok = (a64 == b64) & (np.signbit(a64) == np.signbit(b64))
    bad = ~ok & ~nan
    assert not bad.any(), f"{bad.sum()} differ, e.g. {a[bad][:4]} vs {b[bad][:4]}"


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("e", [2, 3, 0.5, -0.5, -1, -2, 2.0, 3.0])
def test_pow_common_exponents_are_products_roots_and_reciprocals(numpy_kernels, dtype, e):
    x = _values(dtype)
    got = numpy_kernels["pow"](x, e)
    wide = x.astype(np.float32) if x.dtype.itemsize == 2 else x
    with np.errstate(all="ignore"):
        ref = {2: wide * wide, 3: wide * wide * wide, 0.5: np.sqrt(wide),
               -0.5: 1 / np.sqrt(wide), -1: 1 / wide, -2: 1 / (wide * wide)}[e]
    _same(got, ref.astype(dtype))
    # two roundings at most (x * x * x, 1 / (x * x), 1 / sqrt(x)): within 1.5 ulp of the
    # exact power for normal results; float16/bfloat16 round once from float32
    with np.errstate(all="ignore"):
        exact = np.power(x.astype(np.float64), float(e))
        ulp = np.spacing(np.abs(exact).astype(dtype)).astype(np.float64)
        err = np.abs(got.astype(np.float64) - exact)
    fine = np.isfinite(exact) & np.isfinite(got.astype(np.float64)) & \
        (np.abs(exact) > float(ml_dtypes.finfo(dtype).tiny))
    bound = 0.5 if x.dtype.itemsize == 2 or e in (2, 0.5, -1) else 1.5
    if dtype is np.float64:  # the float64 reference itself rounds
        bound += 1.0
    assert (err[fine] <= bound * ulp[fine]).all()


def test_pow_keeps_integer_and_other_exponents(numpy_kernels):
    x = np.arange(-5, 6, dtype=np.int32)
    assert np.array_equal(numpy_kernels["pow"](x, 3), x ** 3)
    f = _values(np.float32)
    with np.errstate(all="ignore"):
        _same(numpy_kernels["pow"](f, 2.5), np.power(f, np.float32(2.5)))


@pytest.mark.parametrize("dtype", FLOATS + [np.int32, np.uint8, np.int64])
@pytest.mark.parametrize("bounds", [(-0.5, 0.5), (None, 0), (0, None), (2, -1), (0, 6)])
def test_clamp_in_one_pass_matches_max_then_min(numpy_kernels, dtype, bounds):
    if np.dtype(dtype).kind in "iu":
        x = np.arange(0, 200, dtype=dtype)
    else:
        x = _values(dtype)
    lo, hi = bounds

    def ref(x, lo, hi):  # PyTorch's: NaN stays NaN, max wins over min, -0.0 stays -0.0
        if lo is not None:
            lo = np.asarray(lo).astype(dtype)
            x = np.where(x < lo, lo, x)
        if hi is not None:
            hi = np.asarray(hi).astype(dtype)
            x = np.where(x > hi, hi, x)
        return x

    _same(numpy_kernels["clamp"](x, lo, hi), ref(x, lo, hi))
    if lo is not None:
        _same(numpy_kernels["clamp_min"](x, lo), ref(x, lo, None))
    if hi is not None:
        _same(numpy_kernels["clamp_max"](x, hi), ref(x, None, hi))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kw", [{}, {"nan": 1.5, "posinf": 7.0}, {"neginf": -2.0},
                                {"nan": -0.0, "posinf": None, "neginf": None}])
def test_nan_to_num_replaces_only_nan_and_infinities(numpy_kernels, generic_kernels, dtype,
                                                    kw):
    x = _values(dtype)
    args = (kw.get("nan", 0.0), kw.get("posinf"), kw.get("neginf"))
    got = numpy_kernels["nan_to_num"](x, *args)
    fmax = float(ml_dtypes.finfo(dtype).max)
    x64 = x.astype(np.float64)
    ref = np.where(np.isnan(x64), args[0], x64)
    ref = np.where(x64 == np.inf, fmax if args[1] is None else args[1], ref)
    ref = np.where(x64 == -np.inf, -fmax if args[2] is None else args[2], ref)
    _same(got, ref.astype(dtype))
    _same(got, generic_kernels["nan_to_num"](x, *args))


@pytest.mark.parametrize("dtype", FLOATS + [np.int16, np.int64, np.uint8])
def test_where_and_masked_fill_select_bits_exactly(numpy_kernels, generic_kernels, dtype):
    n = 2 * pointwise_binary.BLEND_MIN_SIZE
    x = _values(dtype, n) if np.dtype(dtype).kind not in "iu" else \
        np.arange(n).astype(dtype)
    y = x[::-1].copy()
    cond = np.random.default_rng(2).random(n) < 0.5
    one, three = np.asarray(1).astype(dtype)[()], np.asarray(3).astype(dtype)[()]
    for a, b in [(x, y), (x, dtype(0)), (dtype(0), x), (x, one), (three, y)]:
        ref = np.where(cond, a, b)
        _same(numpy_kernels["where"](cond, a, b), ref)
    for value in (0, -1.5 if np.dtype(dtype).kind not in "iu" else 7):
        got = numpy_kernels["masked_fill"](x, cond, value)
        _same(got, generic_kernels["masked_fill"](x, cond, value))
    # the mask broadcasts against self (rows of a matrix)
    m = x.reshape(64, -1)
    row = cond[:m.shape[1]]
    _same(numpy_kernels["masked_fill"](m, row, 0), generic_kernels["masked_fill"](m, row, 0))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64,
                                   np.uint16])
def test_shifts_over_range_match_the_generic_path(numpy_kernels, generic_kernels, dtype):
    bits = np.dtype(dtype).itemsize * 8
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, 4096, endpoint=True).astype(dtype)
    lo = -3 if info.min < 0 else 0
    b = rng.integers(lo, bits + 5, 4096).astype(dtype)
    for op in ("bitwise_left_shift", "bitwise_right_shift"):
        _same(numpy_kernels[op](a, b), generic_kernels[op](a, b))
        _same(numpy_kernels[op](a, bits), generic_kernels[op](a, bits))


@pytest.mark.parametrize("dtype", FLOATS)
def test_lerp_takes_pytorchs_two_sided_formula(numpy_kernels, dtype):
    rng = np.random.default_rng(4)
    a, end = _values(dtype, seed=5), _values(dtype, seed=6)
    w = rng.uniform(-1.5, 2.5, a.size).astype(dtype)
    w[:6] = [0.0, 1.0, 0.5, -0.0, np.nan, 0.49]
    wide = np.float32 if a.dtype.itemsize == 2 else a.dtype

    def ref(a, end, w):
        a, end, w = (np.asarray(v).astype(wide) for v in (a, end, w))
        with np.errstate(all="ignore"):
            diff = end - a
            low = a + w * diff
            high = end - diff * (np.asarray(1, wide) - w)
        return np.where(np.abs(w) < 0.5, low, high).astype(dtype)

    with np.errstate(all="ignore"):
        _same(numpy_kernels["lerp.Tensor"](a, end, w), ref(a, end, w))
        for s in (0.3, 0.5, 0.0, 1.0, -0.7, 1.7):
            # NOTE: a number weight is rounded to the dtype first (PyTorch keeps it in
            # float32 for float16/bfloat16; the fuser's recipe does as this kernel)
            _same(numpy_kernels["lerp.Scalar"](a, end, s),
                  ref(a, end, np.asarray(s).astype(dtype)))


def _torch_remainder(a, b):
    """PyTorch's remainder for floats: m = fmod(a, b); m + b where m != 0 and the signs
    of m and b differ (in the operands' dtype); a zero takes b's sign, as numpy's."""
    m = np.fmod(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)
    fix = (m != 0) & ((b < 0) != (m < 0))
    r = np.where(fix, m + b, m)
    return np.where(r == 0, np.copysign(np.zeros((), a.dtype), b), r)  # numpy's zero sign


def _torch_floor_divide(a, b):
    """PyTorch's div_floor_floating, step by step in the operands' dtype."""
    m = np.fmod(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)
    div = (a - m) / b
    div = np.where((m != 0) & ((b < 0) != (m < 0)), div - np.asarray(1, a.dtype), div)
    fl = np.floor(div)
    fl = np.where(div - fl > np.asarray(0.5, a.dtype), fl + np.asarray(1, a.dtype), fl)
    q = a / b
    fl = np.where(div == 0, np.copysign(np.zeros((), a.dtype), q), fl)
    return np.where(b == 0, q, fl)


def _operand_pairs(dtype):
    special = np.array(SPECIAL)
    a = np.repeat(special, special.size)
    b = np.tile(special, special.size)
    rng = np.random.default_rng(7)
    n = 20000
    ra = rng.standard_normal(n) * 10.0 ** rng.uniform(-5, 12, n)
    rb = rng.standard_normal(n) * 10.0 ** rng.uniform(-5, 5, n)
    with np.errstate(over="ignore"):
        return (np.concatenate([a, ra]).astype(dtype), np.concatenate([b, rb]).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
def test_fmod_remainder_floor_divide_are_exact(numpy_kernels, dtype):
    a, b = _operand_pairs(dtype)
    with np.errstate(all="ignore"):
        fmod = np.fmod(a.astype(np.float64), b.astype(np.float64)).astype(dtype)
        _same(numpy_kernels["fmod"](a, b), fmod)
        _same(numpy_kernels["remainder"](a, b), _torch_remainder(a, b))
        _same(numpy_kernels["floor_divide"](a, b), _torch_floor_divide(a, b))
        for s in (2.5, -3.0, 0.0, np.inf):  # a Python number as the divisor
            bs = np.full_like(a, s)
            _same(numpy_kernels["fmod"](a, s), np.fmod(a.astype(np.float64), s).astype(dtype))
            _same(numpy_kernels["remainder"](a, s), _torch_remainder(a, bs))
            _same(numpy_kernels["floor_divide"](a, s), _torch_floor_divide(a, bs))


def test_fmod_family_broadcasts(numpy_kernels):
    rng = np.random.default_rng(8)
    a = (rng.standard_normal((40, 1)) * 1e3).astype(np.float32)
    b = (rng.standard_normal((1, 30)) * 3).astype(np.float32)
    b[0, 0] = 0
    aa, bb = np.broadcast_arrays(a, b)
    with np.errstate(all="ignore"):
        for x, y, xx, yy in ((a, b, aa, bb), (b, a, bb, aa)):
            _same(numpy_kernels["fmod"](x, y), np.fmod(xx, yy))
            _same(numpy_kernels["remainder"](x, y), _torch_remainder(xx, yy))
            _same(numpy_kernels["floor_divide"](x, y), _torch_floor_divide(xx, yy))
