"""Fixtures shared by the nnpack_compat tests: every test leaves the nnpack switch and
``using`` as it found them (``clean_state``, automatic), and ``ran`` records which nnpack
algorithms a test ran. Plain helpers live in ``_shared.py``.

NOTE: ember is imported inside the fixtures, not at the top: pytest imports this file
among the initial conftests, before ``pytest_configure`` and inside its own
``warnings.catch_warnings()``, so a first ``import ember`` here would lose the
floating-point warnings filter that ``import ember`` installs (see
``ember/backends/kernels/__init__.py`` and tests/conftest.py).
"""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def clean_state():
    """Restores ``ember.backends.nnpack.enabled`` after each test (several set it
    directly), and fails a test that leaves a ``using(...)`` active, which would force an
    algorithm on every later test of the thread."""
    import ember.backends.nnpack as nnpack
    from ember_nnpack_compat.selection import forced_algorithm
    saved = nnpack.enabled
    yield
    nnpack.enabled = saved
    assert forced_algorithm() is None, "a test left ember_nnpack_compat.using(...) active"


@pytest.fixture
def ran(monkeypatch):
    """The list of calls of the registered nnpack algorithms during the test, in order:
    ``(algorithm name, "forward" or "backward", ConvParams)``. The calls still run.

    An algorithm without groups is called once per group (the dispatcher's
    ``_convolution_nogroup``), with that group's ConvParams (``groups == 1``).
    """
    from ember.backends import convolution
    calls = []
    for algo in convolution.algorithms("cpu"):
        if not algo.name.startswith("nnpack"):
            continue
        for method in ("forward", "backward"):
            real = getattr(algo, method)

            # forward(input, weight, bias, params), backward(grad_output, input, weight,
            # params, output_mask): params is the fourth argument of both
            def record(*args, _real=real, _name=algo.name, _method=method):
                calls.append((_name, _method, args[3]))
                return _real(*args)
            monkeypatch.setattr(algo, method, record)
    return calls
