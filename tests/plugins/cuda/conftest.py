"""Fixtures shared by the cuDNN tests (``test_convolution.py``, ``test_cudnn_caches.py``,
``test_cudnn.py``); pytest finds them here without an import.

* ``clean_switches``: TF32 off for the test, the flags restored after. A module opts in
  with ``pytestmark = pytest.mark.usefixtures("clean_switches")``: TF32 is on by default
  (as in PyTorch), but the device-free tests filter engines by float32's numerical notes
  and the GPU tolerances are float32's (TF32 rounds inputs to a 10-bit mantissa, ~1e-3).
* ``fe``: the fake cuDNN Frontend of ``_fake_cudnn.py`` on its numpy ``FakeRuntime``.
* ``algo``: the ``cudnn`` algorithm on ``fe``, numpy im2col as its native fallback.
  ``test_cudnn.py`` overrides it with the real, registered one.

NOTE: ember is imported inside the fixtures, not here: ``pytest tests/plugins/cuda`` loads
this file before tests/conftest.py's ``pytest_configure``, inside pytest's
``catch_warnings``, which would drop the warnings filter ``import ember`` installs
(``ember/backends/kernels/__init__.py``).
"""
from __future__ import annotations

import pytest


@pytest.fixture
def clean_switches():
    import ember.backends.cudnn as cudnn_switches
    saved = cudnn_switches.set_flags(_allow_tf32=False)
    yield
    cudnn_switches.set_flags(*saved)


@pytest.fixture
def fe():
    from ._fake_cudnn import FakeRuntime, make_fake_frontend
    rt = FakeRuntime()
    fe = make_fake_frontend(rt)
    rt.fe = fe
    return fe


@pytest.fixture
def algo(fe):
    import numpy as np
    from ember.backends.im2col import Im2colConvolution
    from ember_cuda.cudnn.algorithm import CudnnConvolution
    return CudnnConvolution(fe, np, Im2colConvolution(np, "cuda"), runtime=fe.runtime)
