"""gradcheck and gradgradcheck on every sample of ``op_samples.py``: every differentiable
op, over broadcasting shapes, several ``dim`` arguments, scalar operands, overloads and
in-place variants. The per-group files hold the closed-form numpy references."""
from __future__ import annotations

import pytest

from core.autograd.op_samples import SAMPLES, check_grad, check_gradgrad


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: f"{s.group}-{s.id}")
def test_gradcheck(sample):
    assert check_grad(sample)


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.gradgrad],
                         ids=lambda s: f"{s.group}-{s.id}")
def test_gradgradcheck(sample):
    assert check_gradgrad(sample)
