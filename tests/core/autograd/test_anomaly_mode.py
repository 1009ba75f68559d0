"""Anomaly detection (``core/ember/autograd/anomaly_mode.py`` and its hooks in
``function.py``, the generated recorders and ``engine.py``): the mode switches, the NaN
check naming the node, the forward traceback warned before a backward error (also for
nodes recorded by a create_graph backward), and no effect when off. Messages follow
``torch.autograd.detect_anomaly`` (checked against torch 2.x)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ember as E
from ember.autograd import Function, detect_anomaly, set_detect_anomaly
from ember.autograd import anomaly_mode

pytestmark = pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled")


class NanBackward(Function):
    """Identity forward; backward returns NaN."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


class Boom(Function):
    """Identity forward; backward raises."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        raise ValueError("boom in backward")


@pytest.fixture(autouse=True)
def _restore_mode():
    yield
    anomaly_mode.set_anomaly_enabled(False, True)


def leaf():
    return E.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)


def forward_line_of_nan_backward(x):
    return NanBackward.apply(x * 2).sum()  # the forward line the traceback must show


def test_switches_and_top_level_names():
    assert not E.is_anomaly_enabled() and E.is_anomaly_check_nan_enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = detect_anomaly(check_nan=False)
    with mode:
        assert E.is_anomaly_enabled() and not E.is_anomaly_check_nan_enabled()
        with set_detect_anomaly(False):
            assert not E.autograd.anomaly_mode.is_anomaly_enabled()
        assert E.is_anomaly_enabled()
    assert not E.is_anomaly_enabled() and E.is_anomaly_check_nan_enabled()
    set_detect_anomaly(True)  # a plain call keeps it set
    assert E.is_anomaly_enabled()
    E.set_anomaly_enabled(False)
    assert not E.is_anomaly_enabled()
    with pytest.raises(TypeError, match="expected enabled to be a bool, got int"):
        E.set_anomaly_enabled(1)
    with pytest.raises(TypeError, match="check_nan to be a bool"):
        detect_anomaly(check_nan="yes")


def test_as_decorators():
    @detect_anomaly()
    def inside():
        return E.is_anomaly_enabled()

    @set_detect_anomaly(True, check_nan=False)
    def inside2():
        return E.is_anomaly_enabled(), E.is_anomaly_check_nan_enabled()
    assert not E.is_anomaly_enabled()  # decorating does not switch it on
    assert inside() and inside2() == (True, False)
    assert not E.is_anomaly_enabled() and E.is_anomaly_check_nan_enabled()


def test_nan_from_a_custom_backward_raises_naming_it_with_the_forward_trace():
    x = leaf()
    with detect_anomaly():
        loss = forward_line_of_nan_backward(x)
        with pytest.warns(UserWarning) as record:
            with pytest.raises(RuntimeError, match=r"^Function 'NanBackwardBackward' returned "
                                                   r"nan values in its 0th output\.$"):
                loss.backward()
    msg = "\n".join(str(w.message) for w in record)
    assert "Error detected in NanBackwardBackward. Traceback of forward call" in msg
    assert "forward_line_of_nan_backward" in msg and "the forward line" in msg
    assert x.grad is None  # the error stopped the walk before the leaf


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_nan_from_a_generated_node_names_it():
    x = E.tensor(np.array([0.0, 1.0]), requires_grad=True)
    with detect_anomaly():
        y = x.sqrt() * 0  # d sqrt at 0 is inf; inf * 0 = nan
        with pytest.warns(UserWarning, match="Error detected in SqrtBackward0"):
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan "
                                                   "values in its 0th output"):
                y.sum().backward()


def test_check_nan_false_lets_nan_through():
    x = leaf()
    with detect_anomaly(check_nan=False):
        forward_line_of_nan_backward(x).backward()
    assert np.isnan(x.grad.numpy()).all()


def test_off_nan_passes_silently_and_nothing_is_recorded():
    x = leaf()
    loss = forward_line_of_nan_backward(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss.backward()
    assert np.isnan(x.grad.numpy()).all()
    assert anomaly_mode.forward_trace(loss.grad_fn) is None


def test_other_backward_errors_get_the_forward_trace_too():
    x = leaf()
    with detect_anomaly():
        y = Boom.apply(x).sum()
        with pytest.warns(UserWarning, match="Error detected in BoomBackward. Traceback"):
            with pytest.raises(ValueError, match="boom in backward"):
                y.backward()


def test_forward_outside_anomaly_mode_says_no_information():
    x = leaf()
    y = Boom.apply(x).sum()
    with detect_anomaly():
        with pytest.warns(UserWarning, match="No forward pass information available"):
            with pytest.raises(ValueError):
                y.backward()


def test_nodes_of_a_create_graph_backward_record_their_parent():
    x = leaf()
    with detect_anomaly():
        y = (x * x).sum()
        (g,) = E.autograd.grad(y, x, create_graph=True)
        stack, parent = anomaly_mode._TRACES[g.grad_fn]
        assert parent is not None and parent.name() == "MulBackward0"
        z = NanBackward.apply(g).sum()
        with pytest.warns(UserWarning, match="NanBackwardBackward"):
            with pytest.raises(RuntimeError, match="NanBackwardBackward"):
                z.backward()


def test_an_error_in_a_nested_backward_is_reported_once():
    class Outer(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            with E.enable_grad():
                a = E.tensor(np.ones(3), requires_grad=True)
                E.autograd.grad(Boom.apply(a).sum(), a)
            return g
    x = leaf()
    with detect_anomaly():
        y = Outer.apply(x).sum()
        with pytest.warns(UserWarning) as record:
            with pytest.raises(ValueError, match="boom"):
                y.backward()
    reports = [w for w in record if "Error detected" in str(w.message)]
    assert len(reports) == 1 and "BoomBackward" in str(reports[0].message)


def test_anomaly_mode_leaves_gradients_unchanged():
    x = leaf()
    (x.exp() * x).sum().backward()
    want = x.grad.numpy().copy()
    x.grad = None
    with detect_anomaly():
        (x.exp() * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-15)
