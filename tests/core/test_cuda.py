"""``ember.cuda`` without the cuda plugin (CI has no GPU): it says so instead of failing.
With the plugin, tests/plugins/cuda/ check the runtime behind it."""
from __future__ import annotations

import pytest

import ember as E
from ember.backends import registry
from ember.plugins import manager


@pytest.fixture
def no_cuda(monkeypatch):
    # as if ember-cuda were not installed: no backend, no entry point
    registry._ensure()
    monkeypatch.setattr(registry, "_backends", {k: v for k, v in registry._backends.items()
                                                if k != "cuda"})
    monkeypatch.setattr(registry, "_ensure", lambda: None)
    listed = manager.plugins()
    monkeypatch.setattr(manager, "plugins", lambda: [p for p in listed if p.name != "cuda"])


def test_without_the_plugin(no_cuda):
    assert E.cuda.is_available() is False
    assert E.cuda.device_count() == 0
    for name in ("synchronize", "Stream", "Event", "memory_allocated", "empty_cache"):
        with pytest.raises(E.NoBackendError, match=r"pip install 'ember-cuda\[cuda13\]'"):
            getattr(E.cuda, name)
    with pytest.raises(E.NoBackendError, match="ember-cuda"):
        E.zeros(2).cuda()


def test_unknown_names_are_attribute_errors():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        E.cuda.nope


def test_forwarding_to_a_runtime(monkeypatch):
    class Runtime:
        Stream = "the stream class"

        @staticmethod
        def synchronize(device=None):
            return f"synced {device}"

    fake = E.types.Backend(name="cuda", xp=None, kernels={}, type_prefix="CUDA",
                           array_type=object, to_numpy=None, from_numpy=None, device_count=2,
                           runtime=Runtime)
    monkeypatch.setattr(registry, "_backends", {**registry._backends, "cuda": fake})
    assert E.cuda.is_available() and E.cuda.device_count() == 2
    assert E.cuda.Stream == "the stream class"
    assert E.cuda.synchronize(1) == "synced 1"
    fake.runtime = None
    with pytest.raises(E.NoBackendError, match="registered no runtime"):
        E.cuda.synchronize()


def test_manual_seed_runs_without_the_plugin_as_torch_does():
    # torch.cuda.manual_seed(_all) are silently ignored without CUDA, so seeding
    # boilerplate copied from a PyTorch script runs anywhere
    E.cuda.manual_seed(0)
    E.cuda.manual_seed_all(1)
    with pytest.raises(TypeError, match="expected an int seed, got float"):
        E.cuda.manual_seed(1.5)
