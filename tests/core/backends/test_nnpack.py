"""``ember.backends.nnpack``, the switch (``core/ember/backends/nnpack.py``): ``enabled``
defaults to True, ``set_flags`` returns the previous flags, ``flags()`` restores them even
when its block raises, and ``is_available()`` reports whether any ``nnpack_*`` CPU
algorithm is registered. Follows ``torch.backends.nnpack``.

These tests need no plugin: ``is_available`` is checked against fake algorithm lists put
in place of ``ember.backends.convolution.algorithms``, and the switch's effect on
selection against a fake ``dynamic`` algorithm that reads it, as the plugin's do.
"""
from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import ember as E
import ember.backends.convolution as convolution
import ember.backends.nnpack as nnpack
import ember.nn.functional as F
from ember.backends.convolution import Decline
from ember.backends.im2col import Im2colConvolution


@pytest.fixture(autouse=True)
def restore_switch():
    """Every test leaves ``enabled`` as it found it, whatever it asserts."""
    saved = nnpack.enabled
    yield
    nnpack.enabled = saved


def _algo(name, device_type="cpu"):
    return SimpleNamespace(name=name, device_type=device_type, priority=0)


def _fake_registry(monkeypatch, algos):
    """Make ``convolution.algorithms(device)`` answer from ``algos``."""
    def algorithms(device_type=None):
        return [a for a in algos if device_type is None or a.device_type == device_type]
    monkeypatch.setattr(convolution, "algorithms", algorithms)


def test_enabled_defaults_to_true_in_a_fresh_interpreter():
    code = "import ember.backends.nnpack as n; print(n.enabled is True)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out.strip() == "True"


def test_set_flags_returns_the_previous_tuple():
    nnpack.enabled = True
    assert nnpack.set_flags(False) == (True,)
    assert nnpack.enabled is False
    assert nnpack.set_flags(True) == (False,)
    assert nnpack.enabled is True


def test_set_flags_stores_a_bool():
    nnpack.set_flags(0)
    assert nnpack.enabled is False
    nnpack.set_flags(1)
    assert nnpack.enabled is True


def test_flags_sets_and_restores():
    nnpack.enabled = True
    with nnpack.flags(enabled=False):
        assert nnpack.enabled is False
        with nnpack.flags(enabled=True):
            assert nnpack.enabled is True
        assert nnpack.enabled is False
    assert nnpack.enabled is True


def test_flags_defaults_to_disabling_like_torch():
    # torch.backends.nnpack.flags(enabled=False) is the torch default too
    nnpack.enabled = True
    with nnpack.flags():
        assert nnpack.enabled is False
    assert nnpack.enabled is True


def test_flags_restores_on_exception():
    nnpack.enabled = True
    with pytest.raises(KeyError):
        with nnpack.flags(enabled=False):
            assert nnpack.enabled is False
            raise KeyError("boom")
    assert nnpack.enabled is True


def test_is_available_false_without_an_nnpack_algorithm(monkeypatch):
    _fake_registry(monkeypatch, [_algo("native_im2col")])
    assert nnpack.is_available() is False
    _fake_registry(monkeypatch, [])
    assert nnpack.is_available() is False


def test_is_available_ignores_nnpack_algorithms_on_other_devices(monkeypatch):
    _fake_registry(monkeypatch, [_algo("native_im2col"), _algo("nnpack_gpu", "cuda")])
    assert nnpack.is_available() is False


def test_is_available_true_with_an_nnpack_algorithm(monkeypatch):
    _fake_registry(monkeypatch, [_algo("native_im2col"), _algo("nnpack_fake")])
    assert nnpack.is_available() is True


class SwitchedAlgorithm:
    """A fake nnpack algorithm: im2col underneath, accepting only while the switch is on,
    ``dynamic`` like the plugin's (so the dispatcher must not cache around it)."""

    name, priority, device_type, supports_groups, dynamic = "nnpack_fake", 50, "cpu", True, True

    def __init__(self):
        self.native = Im2colConvolution(np, "cpu")
        self.calls = 0

    def supports(self, params):
        return True if nnpack.enabled else Decline("ember.backends.nnpack.enabled is False")

    def forward(self, input, weight, bias, params):
        self.calls += 1
        return self.native.forward(input, weight, bias, params)

    def backward(self, grad_output, input, weight, params, output_mask):
        return self.native.backward(grad_output, input, weight, params, output_mask)


@pytest.fixture
def switched():
    """Registers a ``SwitchedAlgorithm`` for one test (as tests/core/backends/
    test_convolution.py registers its fakes)."""
    algo = SwitchedAlgorithm()
    convolution.ALGORITHMS.register([algo], owner="test-switched")
    yield algo
    convolution.ALGORITHMS.unregister("test-switched")


def test_switch_takes_effect_on_the_next_call(switched):
    """The module's promise: switching ``enabled`` takes effect on the next call, in both
    directions and for shapes already run the other way."""
    x, w = E.ones(1, 2, 5, 5), E.ones(3, 2, 3, 3)
    F.conv2d(x, w, padding=1)
    assert switched.calls == 1
    with nnpack.flags(enabled=False):
        F.conv2d(x, w, padding=1)
    assert switched.calls == 1
    F.conv2d(x, w, padding=1)       # same shapes, switch back on
    assert switched.calls == 2
