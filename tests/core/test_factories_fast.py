"""Fast paths of the factories (issue 30): ``*_like`` keeps a dense input's strides
(preserve_format), zeros from calloc, linspace / arange in the target dtype, hann and
hamming windows in float32 (sin^2 form), tril/triu_indices in O(N) with a small cache;
each against a float64 or numpy reference at its stated tolerance."""
import math

import ml_dtypes
import numpy as np
import pytest

import ember as E

_NP = {E.float32: np.float32, E.float16: np.float16, E.bfloat16: ml_dtypes.bfloat16,
       E.float64: np.float64}
_LIKES = (lambda x: E.zeros_like(x), lambda x: E.ones_like(x), lambda x: E.empty_like(x),
          lambda x: E.full_like(x, 2.5), lambda x: E.rand_like(x), lambda x: E.randn_like(x),
          lambda x: E.randint_like(x, 7))


@pytest.mark.parametrize("make", _LIKES)
@pytest.mark.parametrize("dtype", [E.float32, E.float64, E.float16, E.bfloat16])
def test_like_keeps_dense_strides(make, dtype):
    t = E.randn(3, 4).to(dtype).t()                                  # (1, 4): transposed
    cl = E.randn(2, 3, 4, 5).to(dtype).permute(0, 2, 3, 1)           # channels last
    for x in (t, cl):
        out = make(x)
        assert tuple(out.shape) == tuple(x.shape) and out.dtype is x.dtype
        assert out.stride() == x.stride()


@pytest.mark.parametrize("make", _LIKES)
def test_like_gives_row_major_for_gaps_and_broadcasts(make):
    gaps = E.randn(4, 6)[:, ::2]
    bcast = E.randn(1, 5).expand(3, 5)
    for x in (gaps, bcast, E.randn(3, 4)):
        out = make(x)
        assert out.is_contiguous() and tuple(out.shape) == tuple(x.shape)


def test_like_values_dtype_and_grad():
    x = E.randn(3, 4).t()
    z = E.zeros_like(x, dtype=E.float64, requires_grad=True)
    assert z.dtype is E.float64 and z.requires_grad and z.stride() == (1, 4)
    np.testing.assert_array_equal(z.detach().numpy(), np.zeros((4, 3)))
    np.testing.assert_array_equal(E.full_like(x, -0.0).numpy(), np.full((4, 3), -0.0))
    assert np.signbit(E.full_like(x, -0.0).numpy()).all()
    assert np.signbit(E.full((3,), -0.0).numpy()).all()
    np.testing.assert_array_equal(E.ones_like(x).numpy(), np.ones((4, 3), np.float32))
    with pytest.raises(TypeError):
        E.zeros_like([1, 2])


def test_zeros_every_dtype():
    for dt in (E.float32, E.float64, E.float16, E.bfloat16, E.int64, E.int32, E.uint8, E.bool_):
        z = E.zeros(5, 2, dtype=dt)
        assert z.dtype is dt and not z.numpy().astype(np.float64).any()


@pytest.mark.parametrize("dtype", [E.float32, E.float16, E.bfloat16, E.float64])
@pytest.mark.parametrize("start,end,steps", [(0, 1, 1_000_000), (-3, 7, 100_001), (5, -2, 7),
                                              (0.1, 0.3, 3), (0, 1, 2), (2.5, 2.5, 4)])
def test_linspace_within_two_ulp_and_exact_ends(dtype, start, end, steps):
    got = E.linspace(start, end, steps, dtype=dtype).to(E.float64).numpy()
    ref = np.linspace(start, end, steps)
    npd = _NP[dtype]
    ulp = float(np.spacing(np.array(max(abs(start), abs(end)), npd)).astype(np.float64))
    assert np.abs(got - ref.astype(npd).astype(np.float64)).max() <= 2 * ulp
    assert got[0] == float(npd(start)) and got[-1] == float(npd(end))


def test_linspace_edge_sizes_and_ints():
    assert E.linspace(0, 1, 0).shape == (0,)
    np.testing.assert_array_equal(E.linspace(3, 9, 1).numpy(), [3.0])
    np.testing.assert_array_equal(E.linspace(0, 10, 5, dtype=E.int64).numpy(), [0, 2, 5, 7, 10])


def test_arange_direct_dtypes():
    np.testing.assert_array_equal(E.arange(2, 11, 3, dtype=E.float32).numpy(), [2, 5, 8])
    np.testing.assert_array_equal(E.arange(10, 0, -3, dtype=E.float64).numpy(), [10, 7, 4, 1])
    np.testing.assert_array_equal(E.arange(-2, 3, dtype=E.uint8).numpy(),
                                  np.arange(-2, 3).astype(np.uint8))
    assert E.arange(5).dtype is E.int64 and E.arange(0.5, 2).dtype is E.float32


def _window_ref(n, alpha, beta, periodic):
    m = n + 1 if periodic else n
    k = np.arange(n, dtype=np.float64)
    s = np.sin(np.minimum(k, m - 1 - k) * math.pi / (m - 1))
    return (alpha - beta) + 2 * beta * s * s


@pytest.mark.parametrize("n", [2, 3, 10, 1001, 100_000])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype,ulps", [(E.float32, 5), (E.float16, 1), (E.bfloat16, 1),
                                        (E.float64, 8)])
def test_hann_hamming_within_stated_ulps(n, periodic, dtype, ulps):
    for fn, a, b in ((E.hann_window, 0.5, 0.5), (E.hamming_window, 0.54, 0.46)):
        got = fn(n, periodic=periodic, dtype=dtype).to(E.float64).numpy()
        ref = _window_ref(n, a, b, periodic)
        npd = _NP[dtype]
        spacing = np.spacing(np.abs(ref).astype(npd)).astype(np.float64)
        tiny = float(ml_dtypes.finfo(npd).smallest_subnormal)
        assert (np.abs(got - ref) <= ulps * np.maximum(spacing, tiny)).all(), fn.__name__
        assert fn(n, periodic=periodic, dtype=dtype).dtype is dtype


def test_windows_match_cosine_formula_and_small_lengths():
    for n in (0, 1, 2, 5, 64):
        for periodic in (True, False):
            m = n + 1 if periodic else n
            if n > 1:
                k = np.arange(n)
                ref = 0.5 - 0.5 * np.cos(2 * np.pi * k / (m - 1))
                np.testing.assert_allclose(E.hann_window(n, periodic).numpy(), ref,
                                           atol=1e-6)
            else:
                np.testing.assert_array_equal(E.hann_window(n, periodic).numpy(), np.ones(n))


@pytest.mark.parametrize("row,col,offset", [(44, 44, 0), (1414, 1414, 0), (300, 500, 1),
                                            (500, 300, -2), (5, 7, 2), (7, 5, -2), (3, 3, 5),
                                            (3, 3, -5), (0, 3, 0), (4, 0, 1), (1, 1, 0)])
def test_triangle_indices_match_numpy(row, col, offset):
    for fn, ref in ((E.tril_indices, np.tril_indices), (E.triu_indices, np.triu_indices)):
        got = fn(row, col, offset)
        np.testing.assert_array_equal(got.numpy(), np.stack(ref(row, offset, col)))
        assert got.dtype is E.int64


def test_triangle_indices_cached_copy_is_fresh():
    a = E.tril_indices(10, 10)
    a[0, 0] = 99  # writing one result must not change the next
    b = E.tril_indices(10, 10)
    assert int(b[0, 0]) == 0
    assert E.triu_indices(10, 10, dtype=E.int32).dtype is E.int32
