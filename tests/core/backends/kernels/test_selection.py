"""Order statistics by selection (kernels/selection.py: kthvalue, median.dim, nanmedian.dim,
mode) and topk's partition (kernels/sorting.py), against a stable numpy sort with NaN last:
values and indices must be those the stable sort picks, for every float dtype with
special values (NaN, +-inf, -0.0, ties, subnormals, huge) and for ints. Gradients are
checked through tests/core/autograd/op_samples.py."""
import ember as E
import numpy as np
import pytest

# 3e38 and 1e-40 overflow / flush in float16 and bfloat16: inf and 0 are special values too
pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in cast:RuntimeWarning")

SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-40, 3e38, -3e38, 1.0, 1.0, 2.0]
DTYPES = [E.float16, E.bfloat16, E.float32, E.float64]


def _rows(dtype, seed, shape=(7, 23), nan=True):
    """Rows mixing ties, special values and (when nan) NaN, as numpy float64 values that
    are exact in ``dtype``."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-4, 5, shape).astype(np.float64)
    pick = rng.random(shape) < 0.3
    specials = [v for v in SPECIALS if nan or v == v]
    x[pick] = rng.choice(specials, pick.sum())
    t = E.tensor(x).to(dtype)
    return t, t.double().numpy()


def _stable_order(ref):
    """Stable ascending order along the last axis with NaN last (numpy's own rule)."""
    return np.argsort(ref, axis=-1, kind="stable")


def _check(got, ref, order, k):
    """got (values, indices) is the k-th (per row, from 0) of the stable sort."""
    values, indices = got
    want_i = np.take_along_axis(order, k, axis=-1)[..., 0]
    np.testing.assert_array_equal(indices.numpy(), want_i)
    np.testing.assert_array_equal(values.double().numpy(),
                                  np.take_along_axis(ref, want_i[..., None], -1)[..., 0])


@pytest.mark.parametrize("dtype", DTYPES + [E.int32, E.int64])
@pytest.mark.parametrize("seed", range(4))
def test_kthvalue_median_nanmedian_match_a_stable_sort(dtype, seed):
    x, ref = _rows(dtype, seed, nan=dtype.is_floating_point)
    n = ref.shape[-1]
    order = _stable_order(ref)
    nans = np.isnan(ref).sum(-1, keepdims=True)
    for k in (1, 2, n // 2, n):
        _check(E.kthvalue(x, k, -1), ref, order, np.full((ref.shape[0], 1), k - 1))
    # median: the lower median, or the first NaN of a row holding one
    _check(E.median(x, -1), ref, order,
           np.where(nans > 0, n - nans, np.full_like(nans, (n - 1) // 2)))
    # nanmedian: the lower median of the numbers (an all-NaN row: its first NaN)
    _check(E.nanmedian(x, 1), ref, order, np.maximum((n - nans - 1) // 2, 0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_selection_of_all_nan_rows_and_other_dims(dtype):
    x, ref = _rows(dtype, 9, shape=(3, 5, 4))
    x[1] = float("nan")
    ref = x.double().numpy()
    for dim in (0, 1, 2):
        moved = np.moveaxis(ref, dim, -1)
        order = _stable_order(moved)
        n = moved.shape[-1]
        nans = np.isnan(moved).sum(-1, keepdims=True)
        got = E.nanmedian(x, dim, keepdim=True)
        assert got.values.shape[dim] == 1 and got.values.dtype is dtype
        _check((got.values.squeeze(dim), got.indices.squeeze(dim)), moved, order,
               np.maximum((n - nans - 1) // 2, 0))
        _check(E.kthvalue(x, 2, dim), moved, order, np.ones_like(nans))


def _np_mode(row):
    """The smallest of the most frequent values and its last index (NaNs distinct; an
    all-NaN row: NaN at index 0)."""
    if np.isnan(row).all():
        return np.nan, 0
    vals, counts = np.unique(row[~np.isnan(row)], return_counts=True)
    v = vals[np.argmax(counts == counts.max())]
    return v, int(np.flatnonzero(row == v)[-1])


@pytest.mark.parametrize("dtype", DTYPES + [E.int64, E.bool_])
@pytest.mark.parametrize("seed", range(3))
def test_mode_matches_reference(dtype, seed):
    x, ref = _rows(dtype, seed, nan=dtype.is_floating_point)
    if dtype is E.bool_:
        ref = (ref > 0).astype(np.float64)
        x = E.tensor(ref > 0)
    values, indices = E.mode(x, -1)
    for row, v, i in zip(ref, values.double().numpy(), indices.numpy()):
        want_v, want_i = _np_mode(row)
        assert (v == want_v or (v != v and want_v != want_v)) and i == want_i


def test_mode_all_nan_and_signed_zero():
    r = E.mode(E.tensor([[float("nan")] * 3, [0.0, -0.0, 1.0]]), 1)
    assert np.isnan(r.values[0].item()) and r.indices.tolist() == [0, 1]
    assert np.signbit(r.values[1].item())  # the value at the returned index: -0.0


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("seed", range(40))
def test_topk_partition_matches_a_stable_sort(largest, seed):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 4)), int(rng.integers(9, 400))
    k = int(rng.integers(0, n // 8 + 1))
    ref = rng.integers(0, int(rng.integers(2, 60)), (m, n)).astype(np.float32)
    nan = seed % 4 == 0
    if nan:
        ref[rng.random(ref.shape) < 0.05] = np.nan
    values, indices = E.topk(E.tensor(ref), k, -1, largest)
    order = ((n - 1) - _stable_order(ref[:, ::-1])[:, ::-1] if largest
             else _stable_order(ref))[:, :k]
    if not nan:  # NaN's ties go through argpartition, which keeps no order among them
        np.testing.assert_array_equal(indices.numpy(), order)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(ref, order, -1))
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(ref, indices.numpy(), -1))


def test_generic_kernels_match_numpy_kernels(numpy_kernels, generic_kernels, assert_same):
    x, ref = _rows(E.float32, 3, shape=(6, 300))
    a = x.numpy()
    for op, args in (("kthvalue", (5, 1, False)), ("median.dim", (1, True)),
                     ("nanmedian.dim", (0, False)), ("mode", (1, False)),
                     ("topk", (7, 1, True, True)), ("topk", (7, 1, False, True))):
        for got, want in zip(numpy_kernels[op](a, *args), generic_kernels[op](a, *args)):
            assert_same(got, want)


def test_errors():
    with pytest.raises(IndexError, match="k=4 is out of range"):
        E.kthvalue(E.ones(2, 3), 4)
    with pytest.raises(IndexError, match="non-zero size"):
        E.median(E.zeros(0, 3), 0)
    with pytest.raises(IndexError, match="non-zero size"):
        E.mode(E.zeros(2, 0), 1)
    with pytest.raises(NotImplementedError):
        E.nanmedian(E.ones(3, dtype=E.bool_), 0)
    assert E.median(E.zeros(0, 3), 1).values.shape == (0,)
    assert E.kthvalue(E.tensor(2.0), 1).values.item() == 2.0
