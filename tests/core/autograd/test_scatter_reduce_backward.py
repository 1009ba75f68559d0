"""scatter_reduce's backward (autograd/formulas/_scatter.py) where gradcheck cannot judge:
ties of amax/amin (PyTorch shares the gradient evenly) and prod through zeros, as exact
values checked against PyTorch 2.x; the smooth cases run gradcheck and gradgradcheck in
op_samples."""
import numpy as np
import pytest

import ember as E
from ember.autograd import gradcheck, gradgradcheck

IDX = [0, 1, 0, 1, 2, 1]


def _grads(x, s, reduce, include_self=True):
    x = E.tensor(x, requires_grad=True)
    s = E.tensor(s, requires_grad=True)
    out = x.scatter_reduce(0, E.tensor(IDX), s, reduce, include_self=include_self)
    gx, gs = E.autograd.grad(out.sum(), (x, s))
    return gx.tolist(), gs.tolist()


def test_amax_ties_share_the_gradient_evenly():
    gx, gs = _grads([1., 2, 3, 4], [1., 2, 3, 2, 5, 6], "amin")
    assert gx == [0.5, pytest.approx(1 / 3), 1, 1]
    assert gs == [0.5, pytest.approx(1 / 3), 0, pytest.approx(1 / 3), 0, 0]
    gx, gs = _grads([2., 2, 3, 4], [2., 2, 3, 2, 5, 6], "amax", include_self=False)
    assert gx == [0, 0, 0, 1] and gs == [0, 0, 1, 0, 1, 1]


def test_prod_through_zeros():
    gx, gs = _grads([0., 2, 3, 4], [1., 0, 3, 0, 5, 6], "prod")
    assert gx == [3, 0, 5, 1] and gs == [0, 0, 0, 0, 3, 0]


def test_untouched_self_keeps_its_gradient_without_self():
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        gx, _ = _grads([1., 2, 3, 4], [1., 2, 3, 4, 5, 6], reduce, include_self=False)
        assert gx == [0, 0, 0, 1], reduce


def test_src_outside_the_index_gets_zero():
    s = E.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    out = E.zeros(2, 3, dtype=E.float64).scatter_reduce(1, E.tensor([[0, 0]]), s, "sum")
    (g,) = E.autograd.grad(out.sum(), (s,))
    assert g.tolist() == [[1, 1, 0], [0, 0, 0]]


def test_zero_dim_gradcheck():
    x = E.tensor(1.5, dtype=E.float64, requires_grad=True)
    s = E.tensor(-0.5, dtype=E.float64, requires_grad=True)
    for reduce in ("prod", "mean", "amin"):
        fn = lambda a, b, r=reduce: a.scatter_reduce(0, E.tensor(0), b, r)  # noqa: E731
        assert gradcheck(fn, (x, s)) and gradgradcheck(fn, (x, s))


def test_prod_double_backward_through_two_zeros_raises_as_pytorch():
    x = E.tensor([0., 2], dtype=E.float64, requires_grad=True)
    s = E.tensor([0., 3], dtype=E.float64, requires_grad=True)
    out = x.scatter_reduce(0, E.tensor([0, 0]), s, "prod")  # group 0 holds two zeros
    with pytest.raises(RuntimeError, match="double backward is unsupported"):
        E.autograd.grad(out.sum(), (x, s), create_graph=True)
    gx, gs = E.autograd.grad(out.sum(), (x, s))
    assert gx.tolist() == [0, 1] and gs.tolist() == [0, 0]


def test_prod_second_derivative_through_one_zero():
    x = E.tensor([0.0, 1.5], dtype=E.float64, requires_grad=True)
    s = E.tensor([0.7, -1.2, 0.4], dtype=E.float64, requires_grad=True)
    fn = lambda a, b: a.scatter_reduce(0, E.tensor([0, 0, 1]), b, "prod")  # noqa: E731
    assert gradgradcheck(fn, (x, s))
