"""Every op case and derivative sample on the cuda backend over the honest fake CuPy
(``_fake_cupy.fake_cupy_gpus``), device-free, against the cpu backend.

The fake is numpy behind CuPy 14.2's names and signatures that refuses what CuPy refuses
(``ufunc.accumulate`` beyond add/multiply, ``maximum.at`` of int8, ...), so a generic
kernel that leans on numpy-only behaviour fails here, in CI, instead of on the first GPU.
The values are numpy's on both sides; ``test_backend.py`` repeats the comparison on a GPU.
Not here: the convolution ops (the cuDNN algorithm has its own fake Frontend,
``test_convolution.py``) and the random ops (statistics on a GPU, ``test_rng*.py``).
"""
from __future__ import annotations

import sys

import numpy as np
import pytest
from core.autograd.op_samples import SAMPLES, tensors

import ember as E
from ember.backends import registry
from ember.plugins import manager
from ember_cuda import memory

from ._fake_cupy import fake_cupy_gpus
from .op_cases import CASES, RANDOM, default_device
from .test_backend import assert_same

SKIP = {"_convolution", "convolution_backward", *RANDOM}


@pytest.fixture(scope="module")
def fake_cuda():
    """The real cuda backend on one fake GPU, registered as ``cuda`` for the module."""
    manager.ensure_loaded()  # before cupy is faked: the real plugin must not see the fake
    mp = pytest.MonkeyPatch()
    cp = fake_cupy_gpus(1)
    mp.setitem(sys.modules, "cupy", cp)
    mp.setattr(memory, "_tracker", None)
    from ember_cuda.backend import make_backend
    saved = registry._backends.get("cuda")
    registry.register(make_backend())
    yield cp
    registry.unregister("cuda")
    if saved is not None:
        registry._backends["cuda"] = saved
    mp.undo()


def _run(fn, inputs, device):
    with default_device(device):
        return fn(*[E.tensor(a) for a in inputs])


@pytest.mark.parametrize("c", [c for c in CASES if c.op not in SKIP], ids=lambda c: c.id)
def test_case_on_the_fake_matches_cpu(fake_cuda, c):
    assert_same(_run(c.fn, c.inputs, "cuda"), _run(c.fn, c.inputs, "cpu"), c.tol)


def _forward_and_grads(sample, device):
    with default_device(device):
        xs = tensors(sample)
        out = sample.fn(*xs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        floats = [o for o in outs if isinstance(o, E.Tensor) and o.is_floating_point()
                  and o.requires_grad]
        rng = np.random.default_rng(0)
        weights = [E.tensor(rng.standard_normal(tuple(o.shape))) for o in floats]
        grads = E.autograd.grad(floats, xs, weights, allow_unused=True) if floats else []
    return outs, [g for g in grads if g is not None]


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.op not in SKIP],
                         ids=lambda s: s.id)
def test_sample_and_gradients_on_the_fake_match_cpu(fake_cuda, sample):
    got, got_grads = _forward_and_grads(sample, "cuda")
    want, want_grads = _forward_and_grads(sample, "cpu")
    assert_same(got, want)
    assert_same(got_grads, want_grads)
