"""Ops with a ``dim`` on 0-d tensors, forward and backward (issue 35, class 9): PyTorch treats
a 0-d tensor as having one dim of size 1 for dim=0 / dim=-1 (``mean(dim=0)``, ``var``,
``count_nonzero``, ...); ember's backward formulas used to index the empty shape
(IndexError). Each case: the value and the gradient at a = 2.0, as torch 2.13 gives them."""
from __future__ import annotations

import pytest

import ember as E

OPS = {  # name -> f(module, a 0-d tensor a): every reduction, scan or dim op
    "sum": lambda m, a: a.sum(dim=0),
    "sum-1": lambda m, a: a.sum(dim=-1),
    "sumk": lambda m, a: a.sum(dim=0, keepdim=True),
    "mean": lambda m, a: a.mean(dim=0),
    "meank": lambda m, a: a.mean(dim=-1, keepdim=True),
    "prod": lambda m, a: a.prod(dim=0),
    "amax": lambda m, a: a.amax(dim=0),
    "amin": lambda m, a: a.amin(dim=-1),
    "max": lambda m, a: a.max(dim=0)[0],
    "min": lambda m, a: a.min(dim=0)[0],
    "var": lambda m, a: a.var(dim=0, correction=0),
    "std": lambda m, a: a.std(dim=0, correction=0),
    "norm": lambda m, a: a.norm(dim=0),
    "logsumexp": lambda m, a: a.logsumexp(dim=0),
    "cumsum": lambda m, a: a.cumsum(0),
    "cumprod": lambda m, a: a.cumprod(0),
    "softmax": lambda m, a: a.softmax(0),
    "log_softmax": lambda m, a: a.log_softmax(0),
    "nansum": lambda m, a: a.nansum(dim=0),
    "nanmean": lambda m, a: a.nanmean(dim=0),
    "median": lambda m, a: a.median(dim=0)[0],
    "mode": lambda m, a: a.mode(0)[0],
    "kthvalue": lambda m, a: a.kthvalue(1, 0)[0],
    "topk": lambda m, a: a.topk(1, 0)[0],
    "sort": lambda m, a: a.sort(0)[0],
    "cummax": lambda m, a: a.cummax(0)[0],
    "cummin": lambda m, a: a.cummin(0)[0],
    "logcumsumexp": lambda m, a: a.logcumsumexp(0),
    "flip": lambda m, a: a.flip(0),
    "squeeze": lambda m, a: a.squeeze(0),
    "unsqueeze": lambda m, a: a.unsqueeze(0).sum(),
    "var_mean": lambda m, a: m.var_mean(a, dim=0, correction=0)[0],
    "std_mean": lambda m, a: m.std_mean(a, dim=0, correction=0)[1],
    "argmax": lambda m, a: a.argmax(0).float() + a,
    "narrow": lambda m, a: a.unsqueeze(0).narrow(0, 0, 1).sum(),
    "select": lambda m, a: a.unsqueeze(0).select(0, 0),
    "index_select": lambda m, a: a.index_select(0, m.tensor([0])),
    "gather": lambda m, a: a.gather(0, m.tensor(0)),
    "diff": lambda m, a: m.stack([a, a]).diff(dim=0).sum(),
    "aminmax": lambda m, a: m.aminmax(a, dim=0)[0],
    "all": lambda m, a: a.all(dim=0).float() + a,
    "count_nonzero": lambda m, a: m.count_nonzero(a, dim=0).float() + a,
    "norm_dimlist": lambda m, a: m.linalg.vector_norm(a, dim=(0,)),
    "sum_dims_empty": lambda m, a: a.sum(dim=()),
    "mean_dims_empty": lambda m, a: a.mean(dim=[]),
}

EXPECTED = {  # name -> (value, d value / d a) at a = 2.0, recorded from torch 2.13
    'sum': (2.0, 1.0),
    'sum-1': (2.0, 1.0),
    'sumk': (2.0, 1.0),
    'mean': (2.0, 1.0),
    'meank': (2.0, 1.0),
    'prod': (2.0, 1.0),
    'amax': (2.0, 1.0),
    'amin': (2.0, 1.0),
    'max': (2.0, 1.0),
    'min': (2.0, 1.0),
    'var': (0.0, 0.0),
    'std': (0.0, 0.0),
    'norm': (2.0, 1.0),
    'logsumexp': (2.0, 1.0),
    'cumsum': (2.0, 1.0),
    'cumprod': (2.0, 1.0),
    'softmax': (1.0, 0.0),
    'log_softmax': (0.0, 0.0),
    'nansum': (2.0, 1.0),
    'nanmean': (2.0, 1.0),
    'median': (2.0, 1.0),
    'mode': (2.0, 1.0),
    'kthvalue': (2.0, 1.0),
    'topk': (2.0, 1.0),
    'sort': (2.0, 1.0),
    'cummax': (2.0, 1.0),
    'cummin': (2.0, 1.0),
    'logcumsumexp': (2.0, 1.0),
    'flip': (2.0, 1.0),
    'squeeze': (2.0, 1.0),
    'unsqueeze': (2.0, 1.0),
    'var_mean': (0.0, 0.0),
    'std_mean': (2.0, 1.0),
    'argmax': (2.0, 1.0),
    'narrow': (2.0, 1.0),
    'select': (2.0, 1.0),
    'index_select': (2.0, 1.0),
    'gather': (2.0, 1.0),
    'diff': (0.0, 0.0),
    'aminmax': (2.0, 1.0),
    'all': (3.0, 1.0),
    'count_nonzero': (3.0, 1.0),
    'norm_dimlist': (2.0, 1.0),
    'sum_dims_empty': (2.0, 1.0),
    'mean_dims_empty': (2.0, 1.0),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("dtype", [E.float32, E.float64], ids=str)
def test_dim_ops_on_a_0d_tensor_forward_and_backward(name, dtype):
    a = E.tensor(2.0, dtype=dtype, requires_grad=True)
    y = OPS[name](E, a)
    y.backward()
    value, grad = EXPECTED[name]
    assert y.ndim == 0 and y.item() == pytest.approx(value)
    assert a.grad is not None and a.grad.item() == pytest.approx(grad)
