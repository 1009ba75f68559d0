"""Fixtures of the JIT tests."""
import pytest

import ember.jit
from ember.jit.runtime.executor import autodiff_subgraph_inlining


@pytest.fixture
def every_node_a_subgraph():
    """Even a one-op graph becomes a DifferentiableGraph (no inlining)."""
    previous = autodiff_subgraph_inlining()
    ember.jit.debug_set_autodiff_subgraph_inlining(False)
    yield
    ember.jit.debug_set_autodiff_subgraph_inlining(previous)
