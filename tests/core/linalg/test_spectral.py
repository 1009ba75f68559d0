"""svdvals, eigvalsh, pinv and matrix_rank (ember/linalg/spectral.py) against numpy
float64; the gradients of svdvals and eigvalsh at repeated values."""
import numpy as np
import pytest
from core.linalg.references import TOL, t, uniform
from helpers import FLOAT_DTYPES, assert_close

import ember as E
from ember.autograd import gradcheck


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3)])
def test_pinv_matches_numpy(dtype, shape):
    a = uniform(shape)
    assert_close(E.linalg.pinv(t(a, dtype)), np.linalg.pinv(a), dtype, **TOL[dtype])
    assert_close(E.pinverse(t(a, dtype)), np.linalg.pinv(a), dtype, **TOL[dtype])


def test_pinv_and_rank_of_a_singular_and_a_hermitian_matrix():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert_close(E.linalg.pinv(t(a)), np.linalg.pinv(a), E.float64)
    assert_close(E.linalg.pinv(t(a), hermitian=True), np.linalg.pinv(a, hermitian=True),
                 E.float64)
    assert int(E.linalg.matrix_rank(t(a))) == 1
    assert int(E.linalg.matrix_rank(t(a), hermitian=True)) == 1
    assert int(E.linalg.matrix_rank(t(np.diag([1.0, 1e-3])), atol=1e-2)) == 1
    r = E.linalg.matrix_rank(t(np.stack([np.eye(3), np.zeros((3, 3))])))
    assert r.dtype is E.int64 and r.tolist() == [3, 0]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_svdvals_and_eigvalsh_match_numpy(dtype):
    a = uniform((2, 4, 3))
    assert_close(E.linalg.svdvals(t(a, dtype)), np.linalg.svd(a, compute_uv=False), dtype,
                 **TOL[dtype])
    s = a[..., :3, :] + np.swapaxes(a[..., :3, :], -1, -2)
    assert_close(E.linalg.eigvalsh(t(s, dtype)), np.linalg.eigvalsh(s), dtype, **TOL[dtype])


def test_svdvals_and_eigvalsh_gradients_at_repeated_values():
    # only U diag(g) V^T (V diag(g) V^T) enters: no division by gaps between values.
    # Single values are not differentiable where they cross; symmetric functions are.
    x = t(np.eye(3), requires_grad=True)
    E.linalg.svdvals(x).sum().backward()
    assert_close(x.grad, np.eye(3))
    y = t(2 * np.eye(3), requires_grad=True)
    (E.linalg.eigvalsh(y) * t([1.0, 1.0, 1.0])).sum().backward()
    assert_close(y.grad, np.eye(3))
    x = t(np.diag([1.0, 1.0, 2.0]), requires_grad=True)
    assert gradcheck(lambda a: (E.linalg.svdvals(a) ** 2).sum(), (x,))
    assert gradcheck(lambda a: (E.linalg.eigvalsh(a) ** 3).sum(), (x,))
