"""The sampling kernels (``ember/backends/kernels/sampling.py``) on a GPU: devices, dtypes,
first moments and seeding through ``ember_cuda.rng.CudaGenerator``. The distributions
themselves are checked device-free in tests/core/backends/kernels/test_sampling.py; here
the bounds are loose (means of 20000 draws within about 6 standard errors)."""
from __future__ import annotations

import pytest

import ember as E

pytestmark = pytest.mark.cuda
N = 20000


def _mean(t) -> float:
    return t.float().mean().item()


def test_fills_on_cuda():
    E.manual_seed(0)
    x = E.empty(N, device="cuda")
    assert abs(_mean(x.normal_(1.0, 2.0)) - 1.0) < 0.09 and x.device.type == "cuda"
    assert abs(_mean(x.uniform_(-1, 3)) - 1.0) < 0.05 and x.max().item() < 3
    assert abs(_mean(x.exponential_(2.0)) - 0.5) < 0.025
    assert abs(_mean(x.bernoulli_(0.3)) - 0.3) < 0.02
    assert abs(_mean(x.geometric_(0.5)) - 2.0) < 0.06
    assert x.log_normal_(0.0, 0.5).min().item() > 0
    assert x.cauchy_().isfinite().all().item()
    k = E.empty(N, dtype=E.int32, device="cuda").random_(-3, 4)
    assert k.min().item() == -3 and k.max().item() == 3
    assert E.empty(N, dtype=E.uint8, device="cuda").random_().max().item() == 255
    p = E.full((N,), 0.25, device="cuda")
    assert abs(_mean(E.zeros(N, device="cuda").bernoulli_(p)) - 0.25) < 0.02


def test_sampling_ops_on_cuda():
    E.manual_seed(1)
    m = E.zeros(N, device="cuda")
    n = E.normal(m, E.ones(N, device="cuda") * 2)
    assert n.device.type == "cuda" and abs(_mean(n)) < 0.09
    assert abs(_mean(E.bernoulli(m + 0.7)) - 0.7) < 0.02
    for rate in (3.0, 40.0):
        k = E.poisson(E.full((N,), rate, device="cuda"))
        assert abs(_mean(k) - rate) < 6 * (rate / N) ** 0.5
    w = E.tensor([[0.1, 0.0, 0.9]], device="cuda")
    s = E.multinomial(w, N, replacement=True)
    assert s.device.type == "cuda" and (s != 1).all().item()
    assert abs(_mean(s == 2) - 0.9) < 0.015
    perm = E.multinomial(E.ones(2, 5, device="cuda"), 5)
    assert sorted(perm[1].cpu().tolist()) == [0, 1, 2, 3, 4]
    E.manual_seed(3)
    a = E.empty(6, device="cuda").normal_()
    E.manual_seed(3)
    assert (E.empty(6, device="cuda").normal_() == a).all().item()
    with pytest.raises(RuntimeError, match="'cuda' generator"):
        a.normal_(generator=E.Generator())
