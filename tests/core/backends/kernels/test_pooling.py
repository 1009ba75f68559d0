"""max_pool2d/3d_with_indices and their backwards (kernels/pooling.py) against direct numpy
loops that follow PyTorch's CPU kernel: first maximum in window order, the last NaN, the
first real element of an all -inf window, indices h * W + w in each input plane."""
import math

import numpy as np
import pytest
from helpers import FLOAT_DTYPES, LOW_FLOAT_DTYPES, assert_close, make, to_np

import ember as E
from core.nn.functional.pooling.reference import np_max_pool
from ember.errors import ShapeError


def out_size(n, k, s, p, d, ceil_mode):
    size = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    return size - 1 if ceil_mode and (size - 1) * s >= n + p else size


def np_max_pool2d(x, k, s, p, d, ceil_mode):
    """(values, indices) for x (..., H, W) by the loops of PyTorch's CPU kernel."""
    *lead, h, w = x.shape
    planes = x.reshape(-1, h, w)
    oh, ow = (out_size(n, k[i], s[i], p[i], d[i], ceil_mode) for i, n in enumerate((h, w)))
    vals = np.empty((len(planes), oh, ow))
    idx = np.empty((len(planes), oh, ow), np.int64)
    for c, plane in enumerate(planes):
        for r in range(oh):
            for q in range(ow):
                best, where = -math.inf, None
                for i in range(k[0]):
                    for j in range(k[1]):
                        hh, ww = r * s[0] - p[0] + i * d[0], q * s[1] - p[1] + j * d[1]
                        if not (0 <= hh < h and 0 <= ww < w):
                            continue
                        v = plane[hh, ww]
                        if where is None:
                            where = hh * w + ww
                        if v > best or math.isnan(v):
                            best, where = v, hh * w + ww
                vals[c, r, q], idx[c, r, q] = best, where
    return vals.reshape(*lead, oh, ow), idx.reshape(*lead, oh, ow)


def np_max_pool2d_backward(grad, shape, idx):
    planes = math.prod(shape[:-2])
    out = np.zeros((planes, shape[-2] * shape[-1]))
    for c in range(planes):
        np.add.at(out[c], idx.reshape(planes, -1)[c], grad.reshape(planes, -1)[c])
    return out.reshape(shape)


# (kernel, stride, padding, dilation, ceil_mode); stride () means stride = kernel
CASES = [
    ((2, 2), (), (0, 0), (1, 1), False),             # tiles, the CNN's case
    ((2, 2), (2, 2), (0, 0), (1, 1), True),          # a partial last window
    ((3, 3), (1, 1), (1, 1), (1, 1), False),         # overlapping, padded
    ((3, 2), (2, 1), (1, 1), (1, 2), True),          # dilation and ceil_mode
    ((2, 3), (3, 2), (1, 0), (2, 1), False),         # gaps between windows
    ((1, 1), (2, 2), (0, 0), (1, 1), False),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + LOW_FLOAT_DTYPES + [E.int64, E.int32,
                                                                     E.uint8])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("shape", [(2, 3, 7, 6), (2, 3, 8, 6)])  # windows tile 8 x 6 exactly
def test_values_and_indices_match_reference(dtype, case, shape):
    x, ref = make(shape, dtype, low=-20, high=20)  # ints repeat: ties happen
    vals, idx = E.max_pool2d_with_indices(x, *case)
    exp_v, exp_i = np_max_pool2d(to_np(x).astype(np.float64), *(case[0],) +
                                 (case[1] or case[0],) + case[2:])
    assert_close(vals, exp_v, dtype, rtol=0, atol=0)
    assert idx.dtype is E.int64
    np.testing.assert_array_equal(to_np(idx), exp_i)


@pytest.mark.parametrize("shape", [(4, 16, 8, 8), (4, 32, 4, 4), (3, 5, 5), (0, 2, 4, 4)])
def test_shapes_batched_unbatched_and_empty_batch(shape):
    x, ref = make(shape, E.float32)
    vals, idx = E.max_pool2d_with_indices(x, 2)
    exp_v, exp_i = np_max_pool2d(ref, (2, 2), (2, 2), (0, 0), (1, 1), False)
    assert_close(vals, exp_v)
    np.testing.assert_array_equal(to_np(idx), exp_i)
    grad = E.max_pool2d_with_indices_backward(vals, x, 2, (), 0, 1, False, idx)
    assert_close(grad, np_max_pool2d_backward(exp_v, x.shape, exp_i))


def test_ties_nan_and_minus_inf_follow_pytorch():
    nan, inf = math.nan, math.inf
    x = np.array([[[[1, 1, 2, 2], [1, 1, 2, 2], [nan, 0, nan, nan], [nan, 0, -inf, -inf]]]])
    for case in CASES[:4]:
        vals, idx = E.max_pool2d_with_indices(E.tensor(x), *case)
        exp_v, exp_i = np_max_pool2d(x, case[0], case[1] or case[0], *case[2:])
        assert_close(vals, exp_v)
        np.testing.assert_array_equal(to_np(idx), exp_i)
    # an all -inf window points at its first real element, never at padding
    idx = E.max_pool2d_with_indices(E.full((1, 1, 3, 3), -inf), 2, 1, 1)[1]
    np.testing.assert_array_equal(to_np(idx)[0, 0], [[0, 0, 1, 2], [0, 0, 1, 2],
                                                     [3, 3, 4, 5], [6, 6, 7, 8]])


@pytest.mark.parametrize("dtype", [E.float32, E.float64, E.float16])
@pytest.mark.parametrize("case", CASES)
def test_backward_scatters_at_indices(dtype, case):
    x, _ = make((2, 3, 7, 6), dtype, seed=1)
    vals, idx = E.max_pool2d_with_indices(x, *case)
    grad, g = make(tuple(vals.shape), dtype, seed=2)
    got = E.max_pool2d_with_indices_backward(grad, x, *case, idx)
    assert_close(got, np_max_pool2d_backward(g, x.shape, to_np(idx)), dtype)


def test_backward_checks_shapes():
    x = E.zeros(1, 1, 4, 4)
    vals, idx = E.max_pool2d_with_indices(x, 2)
    with pytest.raises(ShapeError, match="grad_output"):
        E.max_pool2d_with_indices_backward(E.zeros(1, 1, 3, 3), x, (2, 2), (), (0, 0), (1, 1),
                                           False, idx)


@pytest.mark.parametrize("shape,args,match", [
    ((4, 4), (2,), "3-D"),
    ((1, 1, 0, 4), (2,), "non-zero"),
    ((1, 1, 4, 4), ((2, 2, 2),), "single int, or a tuple of two"),
    ((1, 1, 4, 4), (0,), "kernel_size must be positive"),
    ((1, 1, 4, 4), (2, 0), "stride must be positive"),
    ((1, 1, 4, 4), (2, 2, 0, 0), "dilation must be positive"),
    ((1, 1, 4, 4), (2, 2, -1), "padding must be non-negative"),
    ((1, 1, 4, 4), (3, 1, 2), "at most half of kernel size"),
    ((1, 1, 4, 4), (5,), "Output size is too small"),
])
def test_errors(shape, args, match):
    with pytest.raises(ShapeError, match=match):
        E.max_pool2d_with_indices(E.zeros(shape), *args)


def test_bool_is_refused():
    with pytest.raises(NotImplementedError, match="max_pool2d_with_indices"):
        E.max_pool2d_with_indices(E.zeros(1, 1, 2, 2, dtype=E.bool_), 2)


# --- max_pool3d_with_indices: the same N-d code over (D, H, W) ---------------------------------

CASES_3D = [
    ((2, 2, 2), (), (0, 0, 0), (1, 1, 1), False),          # tiles
    ((2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), True),
    ((3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), False),
    ((3, 2, 2), (2, 1, 3), (1, 1, 0), (1, 2, 1), True),
    ((1, 2, 3), (2, 3, 1), (0, 1, 1), (2, 1, 1), False),
]


def np_max_pool3d(x, k, s, p, d, ceil_mode):
    return np_max_pool(x, k, s or k, p, d, ceil_mode)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + LOW_FLOAT_DTYPES + [E.int64, E.uint8])
@pytest.mark.parametrize("case", CASES_3D)
@pytest.mark.parametrize("shape", [(2, 2, 5, 4, 6), (2, 4, 4, 6)])
def test_3d_values_and_indices_match_reference(dtype, case, shape):
    x, _ = make(shape, dtype, low=-20, high=20)
    vals, idx = E.max_pool3d_with_indices(x, *case)
    exp_v, exp_i = np_max_pool3d(to_np(x).astype(np.float64), *case)
    assert_close(vals, exp_v, dtype, rtol=0, atol=0)
    np.testing.assert_array_equal(to_np(idx), exp_i)


def test_3d_nan_and_minus_inf_follow_pytorch():
    nan, inf = math.nan, math.inf
    x = np.array([[[[1, nan], [nan, 0]], [[2, 2], [-inf, nan]]],
                  [[[-inf, -inf], [-inf, -inf]], [[3, 3], [3, 3]]]])[None]   # (1, 2, 2, 2, 2)
    for case in CASES_3D[:3]:
        vals, idx = E.max_pool3d_with_indices(E.tensor(x), *case)
        exp_v, exp_i = np_max_pool3d(x, *case)
        assert_close(vals, exp_v)
        np.testing.assert_array_equal(to_np(idx), exp_i)


@pytest.mark.parametrize("case", CASES_3D)
def test_3d_backward_scatters_at_indices(case):
    x, _ = make((2, 2, 5, 4, 6), E.float32, seed=1)
    vals, idx = E.max_pool3d_with_indices(x, *case)
    grad, g = make(tuple(vals.shape), E.float32, seed=2)
    got = E.max_pool3d_with_indices_backward(grad, x, *case, idx)
    assert_close(got, np_max_pool2d_backward(g, x.shape[:2] + (20, 6), to_np(idx))
                 .reshape(x.shape), E.float32)


@pytest.mark.parametrize("shape,args,match", [
    ((4, 4, 4), (2,), "4-D .C, D, H, W. or 5-D"),
    ((1, 1, 4, 4, 4), ((2, 2),), "tuple of three ints"),
    ((1, 1, 4, 4, 4), (3, 1, (0, 2, 0)), "at most half of kernel size"),
    ((1, 1, 4, 4, 4), (5,), "Output size is too small"),
])
def test_3d_errors(shape, args, match):
    with pytest.raises(ShapeError, match=match):
        E.max_pool3d_with_indices(E.zeros(shape), *args)
    x = E.zeros(1, 1, 4, 4, 4)
    vals, idx = E.max_pool3d_with_indices(x, 2)
    with pytest.raises(ShapeError, match="grad_output"):
        E.max_pool3d_with_indices_backward(E.zeros(1, 1, 3, 2, 2), x, 2, (), 0, 1, False, idx)
    with pytest.raises(NotImplementedError, match="max_pool3d_with_indices"):
        E.max_pool3d_with_indices(E.zeros(1, 1, 2, 2, 2, dtype=E.bool_), 2)
