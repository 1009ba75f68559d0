"""Grad modes (``ember/autograd/grad_mode.py``): no_grad, enable_grad, set_grad_enabled
and inference_mode as context managers, decorators and plain calls; nesting; restoring
after exceptions; thread-locality. Semantics follow ``torch.no_grad`` & co."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import ember as E
from helpers import assert_close


@pytest.fixture(autouse=True)
def _restore_grad_mode():
    yield
    E.set_grad_enabled(True)   # a failing test must not leak no_grad into the next
    E.autograd.grad_mode.STATE.inference = False


def leaf():
    return E.tensor([1.0, 2.0, 3.0], dtype=E.float64, requires_grad=True)


def records(x) -> bool:
    y = x * 2.0
    assert y.requires_grad == (y.grad_fn is not None)
    return y.requires_grad


def test_enabled_by_default():
    assert E.is_grad_enabled() and E.autograd.is_grad_enabled()
    assert records(leaf())


def test_public_names_are_the_same_objects():
    assert E.no_grad is E.autograd.no_grad
    assert E.enable_grad is E.autograd.enable_grad
    assert E.set_grad_enabled is E.autograd.set_grad_enabled


# --- context managers ------------------------------------------------------------------------

def test_no_grad_context():
    x = leaf()
    with E.no_grad():
        assert not E.is_grad_enabled()
        y = x * 2.0
        z = y.exp().sum()
    assert E.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert not z.requires_grad
    assert records(x)   # after the block, ops record again


def test_no_grad_leaves_leaf_requires_grad():
    x = leaf()
    with E.no_grad():
        assert x.requires_grad
        assert_close(x * 2.0, np.array([2.0, 4.0, 6.0]))


@pytest.mark.parametrize("mode", [True, False])
def test_set_grad_enabled_context(mode):
    x = leaf()
    with E.set_grad_enabled(mode):
        assert E.is_grad_enabled() is mode
        assert records(x) is mode
    assert E.is_grad_enabled()


def test_set_grad_enabled_restores_outer_mode():
    with E.no_grad():
        with E.set_grad_enabled(True):
            assert E.is_grad_enabled()
        assert not E.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = leaf()
    with E.no_grad():
        with E.enable_grad():
            assert records(x)
        assert not records(x)
    assert records(x)


@pytest.mark.parametrize("depth", [1, 2, 5])
def test_nesting_restores_each_level(depth):
    x = leaf()
    managers = [E.no_grad, E.enable_grad] * depth
    seen = []

    def enter(i):
        if i == len(managers):
            return
        with managers[i]():
            seen.append(records(x))
            enter(i + 1)
            seen.append(records(x))
    enter(0)
    expected = [i % 2 == 1 for i in range(len(managers))]
    assert seen == expected + expected[::-1]
    assert E.is_grad_enabled()


def test_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with E.no_grad():
            raise ValueError("boom")
    assert E.is_grad_enabled()
    with E.no_grad():
        with pytest.raises(ValueError):
            with E.enable_grad():
                raise ValueError("boom")
        assert not E.is_grad_enabled()


# --- decorators ------------------------------------------------------------------------------

def test_no_grad_decorator():
    x = leaf()

    @E.no_grad()
    def f(t):
        """Doc."""
        return t * 2.0, E.is_grad_enabled()

    y, inside = f(x)
    assert not inside and not y.requires_grad
    assert E.is_grad_enabled()
    assert f.__name__ == "f" and f.__doc__ == "Doc."


def test_enable_grad_decorator_inside_no_grad():
    x = leaf()

    @E.enable_grad()
    def f(t):
        return t * 2.0

    with E.no_grad():
        y = f(x)
        assert not E.is_grad_enabled()
    assert y.requires_grad and y.grad_fn is not None


@pytest.mark.parametrize("mode", [True, False])
def test_set_grad_enabled_decorator_has_no_immediate_effect(mode):
    with E.set_grad_enabled(not mode):
        @E.set_grad_enabled(mode)
        def f():
            return E.is_grad_enabled()
        assert E.is_grad_enabled() is (not mode)   # decorating changed nothing
        assert f() is mode
        assert E.is_grad_enabled() is (not mode)


def test_decorator_restores_after_exception():
    @E.no_grad()
    def f():
        raise KeyError("x")

    with pytest.raises(KeyError):
        f()
    assert E.is_grad_enabled()


# --- plain call ------------------------------------------------------------------------------

def test_set_grad_enabled_plain_call():
    x = leaf()
    E.set_grad_enabled(False)
    assert not E.is_grad_enabled() and not records(x)
    E.set_grad_enabled(True)
    assert E.is_grad_enabled() and records(x)


@pytest.mark.parametrize("bad", [0, 1, None, "yes"])
def test_set_grad_enabled_rejects_non_bool(bad):
    with pytest.raises(TypeError, match="expected a bool"):
        E.set_grad_enabled(bad)
    assert E.is_grad_enabled()


# --- interaction with autograd -----------------------------------------------------------------

def test_backward_under_no_grad_still_computes_gradients():
    x = leaf()
    y = (x * x).sum()
    with E.no_grad():
        y.backward()
        assert not E.is_grad_enabled()
    assert_close(x.grad, np.array([2.0, 4.0, 6.0]))


def test_engine_restores_grad_mode_after_failing_hook():
    x = leaf()
    y = x * 2.0

    def bad(g):
        raise ValueError("hook failed")

    y.register_hook(bad)
    s = y.sum()
    with pytest.raises(ValueError, match="hook failed"):
        s.backward(create_graph=True)
    assert E.is_grad_enabled()
    with E.no_grad():
        with pytest.raises(ValueError):
            s.backward(create_graph=True)
        assert not E.is_grad_enabled()


def test_inplace_on_leaf_allowed_under_no_grad():
    x = leaf()
    v = x._version
    with E.no_grad():
        x.mul_(2.0)
        x[0] = 10.0
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert x._version == v + 2
    assert_close(x.detach(), np.array([10.0, 4.0, 6.0]))


def test_inplace_under_no_grad_does_not_record():
    x = leaf()
    y = x * 2.0
    fn = y.grad_fn
    with E.no_grad():
        y.add_(1.0)
    assert y.grad_fn is fn
    y.sum().backward()
    assert_close(x.grad, np.full(3, 2.0))


# --- threads -----------------------------------------------------------------------------------

def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_new_thread_starts_enabled_under_no_grad():
    x = leaf()
    with E.no_grad():
        assert _in_thread(lambda: (E.is_grad_enabled(), records(x))) == (True, True)
        assert not E.is_grad_enabled()


def test_no_grad_in_a_thread_does_not_leak_to_main():
    x = leaf()
    barrier = threading.Barrier(2)
    inside = []

    def worker():
        with E.no_grad():
            barrier.wait()      # main checks while this thread is inside no_grad
            barrier.wait()
            inside.append(E.is_grad_enabled())

    t = threading.Thread(target=worker)
    t.start()
    barrier.wait()
    main_enabled = E.is_grad_enabled() and records(x)
    barrier.wait()
    t.join()
    assert main_enabled and inside == [False]


def test_set_grad_enabled_plain_call_is_per_thread():
    E.set_grad_enabled(False)
    assert _in_thread(E.is_grad_enabled) is True
    assert not E.is_grad_enabled()


# ---- inference_mode ----------------------------------------------------------------------

def test_inference_mode_turns_grad_off_and_restores_both_flags():
    x = leaf()
    assert not E.is_inference_mode_enabled()
    with E.inference_mode():
        assert E.is_inference_mode_enabled() and not E.is_grad_enabled()
        assert not records(x)
    assert not E.is_inference_mode_enabled() and E.is_grad_enabled()
    assert records(x)


def test_inference_mode_false_enables_grad_like_pytorch():
    # torch.inference_mode(False) sets grad mode on, even inside no_grad
    with E.no_grad():
        with E.inference_mode(False):
            assert E.is_grad_enabled() and not E.is_inference_mode_enabled()
            assert records(leaf())
        assert not E.is_grad_enabled()
    with E.inference_mode():
        with E.inference_mode(mode=False):
            assert E.is_grad_enabled() and not E.is_inference_mode_enabled()
        assert E.is_inference_mode_enabled() and not E.is_grad_enabled()


def test_inference_mode_as_decorator_with_and_without_call():
    @E.inference_mode
    def bare(x):
        return E.is_inference_mode_enabled(), records(x)

    @E.inference_mode()
    def called(x):
        return E.is_inference_mode_enabled(), records(x)

    assert bare(leaf()) == (True, False) and called(leaf()) == (True, False)
    assert bare.__name__ == "bare"
    assert E.is_grad_enabled() and not E.is_inference_mode_enabled()


def test_inference_mode_restores_after_an_exception():
    with pytest.raises(KeyError):
        with E.inference_mode():
            raise KeyError("boom")
    assert E.is_grad_enabled() and not E.is_inference_mode_enabled()


def test_inference_mode_is_per_thread():
    seen = []
    with E.inference_mode():
        t = threading.Thread(target=lambda: seen.append(
            (E.is_inference_mode_enabled(), E.is_grad_enabled())))
        t.start()
        t.join()
    assert seen == [(False, True)]


def test_inference_mode_results_match_eager():
    x = leaf()
    with E.inference_mode():
        y = (x * x).sum()
    assert not y.requires_grad and y.grad_fn is None
    assert_close(y, np.array(14.0))
