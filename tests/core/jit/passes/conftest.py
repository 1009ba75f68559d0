"""Fixtures of the pass tests: ``fuser``, a ReferenceFuser registered for "cpu"."""
import pytest


@pytest.fixture
def fuser(monkeypatch):
    """A ReferenceFuser (tests/helpers.py) as the only fuser, for "cpu": a plugin's (the
    Triton fuser registers for cuda) would group the cuda graphs the tests leave alone."""
    from ember.jit.runtime.fuser import using_fuser
    from helpers import ReferenceFuser
    monkeypatch.setattr("ember.jit.runtime.fuser._plugin_fusers", dict)
    with using_fuser("cpu", ReferenceFuser()) as f:
        yield f
