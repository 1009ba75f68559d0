"""grid_sampler's kernel pair (bilinear/trilinear and nearest, zeros padding) against the
op-by-op reference and torch: values and gradients for input and grid, 4-D and 5-D,
align_corners, grids reaching outside the input and landing on pixel centers exactly;
dtypes; gradcheck and gradgradcheck."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import needs_torch

import ember as E
import ember.nn.functional as F
from ember.nn.functional.vision import _grid_sampler_reference

CASES = [((2, 3, 5, 6), (2, 4, 7, 2)), ((1, 2, 3, 4, 5), (1, 2, 3, 4, 3))]
MODES = {"bilinear": 0, "nearest": 1}


def _grid(shape, dtype, rng):
    g = rng.uniform(-1.3, 1.3, shape)
    g.flat[:4] = [-1.0, 1.0, 0.0, 1.0 / 3]
    return g.astype(dtype)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("case", CASES)
def test_values_and_gradients_match_torch(case, mode, align_corners):
    torch = needs_torch()
    TF = torch.nn.functional
    ishape, gshape = case
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal(ishape), _grid(gshape, np.float64, rng)
    xe, ge = E.tensor(x, requires_grad=True), E.tensor(g, requires_grad=True)
    xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
    out = F.grid_sample(xe, ge, mode=mode, align_corners=align_corners)
    want = TF.grid_sample(xt, gt, mode=mode, align_corners=align_corners)
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), atol=1e-12)
    go = rng.standard_normal(tuple(want.shape))
    out.backward(E.tensor(go))
    want.backward(torch.tensor(go))
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(ge.grad.numpy(), gt.grad.numpy(), atol=1e-10)


def test_pixel_centers_give_torch_grid_gradient():
    torch = needs_torch()
    TF = torch.nn.functional
    x = np.random.default_rng(1).random((1, 2, 5, 5))
    g = np.array([[[[0.0, 0.0], [0.5, -0.5]], [[-1.0, 1.0], [1.0, 1.0]]]])
    for align_corners in (False, True):
        ge = E.tensor(g, requires_grad=True)
        F.grid_sample(E.tensor(x), ge, align_corners=align_corners).sum().backward()
        gt = torch.tensor(g, requires_grad=True)
        TF.grid_sample(torch.tensor(x), gt, align_corners=align_corners).sum().backward()
        np.testing.assert_allclose(ge.grad.numpy(), gt.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_dtypes_against_the_reference(dtype, mode):
    rng = np.random.default_rng(2)
    x = E.tensor(rng.standard_normal((2, 3, 6, 5)).astype(dtype))
    g = E.tensor(_grid((2, 4, 3, 2), dtype, rng))
    out = F.grid_sample(x, g, mode=mode, align_corners=False)
    assert out.dtype == x.dtype
    ref = _grid_sampler_reference(x.double(), g.double(), MODES[mode], 0, False).numpy()
    tol = {np.float32: 1e-5, np.float16: 2e-2, ml_dtypes.bfloat16: 1e-1}[dtype]
    np.testing.assert_allclose(out.numpy().astype(np.float64), ref, atol=tol)


def test_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(3)
    x = E.tensor(rng.standard_normal((1, 2, 4, 5)), requires_grad=True)
    g = E.tensor(rng.uniform(-1.1, 1.1, (1, 3, 3, 2)), requires_grad=True)
    for mode in MODES:
        fn = lambda a, b: F.grid_sample(a, b, mode=mode, align_corners=False)  # noqa: E731
        assert E.autograd.gradcheck(fn, (x, g))
        assert E.autograd.gradgradcheck(fn, (x, g))
