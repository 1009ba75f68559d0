"""The tracer's hooks (``jit/frontend/tracer_hooks.py`` through ``ember._base.hooks.TRACER``): the
hand-written ops below the JIT record into a trace without importing it. One traced
function goes through every hook; the graph has their nodes, and a call at another size
matches eager mode (the sizes stayed symbolic)."""
import warnings

import numpy as np
import pytest

import ember as E
import ember.jit
from ember.jit import TracerWarning


class Twice(E.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def fn(x):
    n = x.size(0)                        # sym_size
    y = x.to(E.float64).detach()         # record_python: _to_copy, detach
    y = y[: n - 1]                       # has_symbolic, symbolic_getitem
    y = y * 1
    y[0] = 5.0                           # guarded_concrete, record_python: index_put_
    y.unsqueeze_(0)                      # pause, record_python: unsqueeze
    z = E.zeros(x.shape[0] - 1, 1, dtype=E.float64)  # sym_shape, record_factory
    return Twice.apply(y + z) * x.numel()         # record_python_op, sym_numel


def test_every_hook_records_and_sizes_stay_symbolic():
    x = E.randn(5, 3)
    tf = ember.jit.trace(fn, (x,), check_trace=False)
    kinds = {n.kind for n in tf.graph.block.nodes()}
    for kind in ("ember::size", "ember::_to_copy", "ember::detach", "ember::index_put_",
                 "ember::unsqueeze", "ember::zeros", "prim::PythonOp"):
        assert kind in kinds, (kind, sorted(kinds))
    for rows in (5, 8):
        x = E.randn(rows, 3)
        np.testing.assert_allclose(tf(x).numpy(), fn(x).numpy())
        assert tuple(tf(x).shape) == (1, rows - 1, 3)


def test_python_value_of_a_traced_tensor_warns_at_the_callers_line():
    def f(x):
        return x * float(x.sum())

    with pytest.warns(TracerWarning) as got:
        ember.jit.trace(f, (E.randn(3),), check_trace=False)
    assert got[0].filename.endswith("tensor.py")  # as before: stacklevel unchanged
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        float(E.randn(1))  # untraced: no warning
