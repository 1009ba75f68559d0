"""Activation checkpointing (``core/ember/utils/checkpoint.py``): both implementations
give the gradients of the plain call (dropout included, through the preserved random
state), recompute instead of keeping activations, reach closure parameters, and raise
PyTorch's errors (``torch.utils.checkpoint``, checked against torch 2.x)."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import ember as E
import ember.nn as nn
from ember.autograd import gradcheck, gradgradcheck
from ember.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential, \
    detach_variable

BOTH = pytest.mark.parametrize("reentrant", [False, True], ids=["nonreentrant", "reentrant"])


def t(a, requires_grad=False):
    return E.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def make_model():
    E.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.5), nn.Linear(8, 6),
                         nn.ReLU(), nn.Linear(6, 3)).double()


def grads_of(model, run, x):
    """Gradients of sum(run(x) ** 2) w.r.t. x and the parameters, drawn with seed 1."""
    for p in model.parameters():
        p.grad = None
    x.grad = None
    E.manual_seed(1)
    (run(x) ** 2).sum().backward()
    return [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in model.parameters()]


@BOTH
def test_gradients_equal_the_plain_call_with_dropout(reentrant):
    model = make_model()
    x = t(np.random.default_rng(0).standard_normal((5, 4)), requires_grad=True)
    want = grads_of(model, model, x)
    got = grads_of(model, lambda a: checkpoint(model, a, use_reentrant=reentrant), x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


@BOTH
def test_without_preserved_rng_the_dropout_mask_differs(reentrant):
    model = make_model()
    x = t(np.random.default_rng(0).standard_normal((64, 4)), requires_grad=True)
    want = grads_of(model, model, x)
    got = grads_of(model, lambda a: checkpoint(model, a, use_reentrant=reentrant,
                                               preserve_rng_state=False), x)
    assert not np.allclose(got[0], want[0])


@BOTH
@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_matches_the_plain_call(reentrant, segments):
    model = make_model()
    x = t(np.random.default_rng(1).standard_normal((5, 4)), requires_grad=True)
    want = grads_of(model, model, x)
    got = grads_of(model, lambda a: checkpoint_sequential(model, segments, a,
                                                          use_reentrant=reentrant), x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


@BOTH
def test_forward_runs_again_in_backward_and_activations_are_not_kept(reentrant):
    calls, inner = [], []

    def fn(a):
        calls.append(E.is_grad_enabled())
        h = (a * 2).exp()
        inner.append(weakref.ref(h))
        return h.sum(1)
    x = t(np.ones((2, 3)), requires_grad=True)
    y = checkpoint(fn, x, use_reentrant=reentrant)
    gc.collect()
    assert inner[0]() is None  # nothing holds the activation once the call returned
    assert len(calls) == 1
    y.sum().backward()
    assert len(calls) == 2 and calls[1] is True  # recomputed in backward, with grad on
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * np.ones((2, 3))))


def test_nonreentrant_graph_holds_only_the_frontier():
    model = make_model()
    x = t(np.ones((2, 4)), requires_grad=True)
    y = checkpoint(model, x, use_reentrant=False)
    assert y.grad_fn.name() == "CheckpointBackward"
    leaves = {id(e[0].variable) for e in y.grad_fn.next_functions}
    assert leaves == {id(x)} | {id(p) for p in model.parameters()}


def test_nonreentrant_works_with_autograd_grad_and_inputs():
    w = t([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    x = t([0.5, -2.0], requires_grad=True)
    y = checkpoint(lambda a: ((a @ w).tanh() * a).sum(), x, use_reentrant=False)
    gx, gw = E.autograd.grad(y, (x, w))
    ref = ((x @ w).tanh() * x).sum()
    rx, rw = E.autograd.grad(ref, (x, w))
    np.testing.assert_allclose(gx.numpy(), rx.numpy(), rtol=1e-14)
    np.testing.assert_allclose(gw.numpy(), rw.numpy(), rtol=1e-14)
    assert w.grad is None and x.grad is None


def test_nonreentrant_closure_reaching_another_frontier_tensor_counts_once():
    # wt is a closure derived from w, which the function also reads: the recomputed
    # graph must stop at wt's node, or w would get wt's share twice
    w = t([[1.0, 2.0], [3.0, -1.0]], requires_grad=True)
    wt = w.t() * 1.0
    x = t([0.5, -2.0], requires_grad=True)

    def fn(a):
        return ((a @ wt) * (a @ w)).sum() + (w ** 2).sum()
    fn(x).backward()
    want = w.grad.numpy().copy(), x.grad.numpy().copy()
    w.grad = x.grad = None
    checkpoint(fn, x, use_reentrant=False).backward()
    np.testing.assert_allclose(w.grad.numpy(), want[0], rtol=1e-14)
    np.testing.assert_allclose(x.grad.numpy(), want[1], rtol=1e-14)


def test_nonreentrant_double_backward_and_gradchecks():
    def f(a, b):
        return checkpoint(lambda u, v: (u * v).sin() * u, a, b, use_reentrant=False)
    args = (t([0.3, -0.7, 1.1], requires_grad=True), t([1.5, 0.2, -0.4], requires_grad=True))
    assert gradcheck(f, args)
    assert gradgradcheck(f, args)


def test_nonreentrant_output_structures_and_kwargs():
    x = t([1.0, -2.0], requires_grad=True)

    def fn(a, *, k):
        return {"same": a, "pair": [a * k, 3], "const": "c"}
    out = checkpoint(fn, x, k=3.0, use_reentrant=False)
    assert out["pair"][1] == 3 and out["const"] == "c"
    (out["same"].sum() + out["pair"][0].sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])


def test_nonreentrant_context_fn_and_no_grad():
    seen = []

    class Ctx:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            seen.append(self.name)

        def __exit__(self, *exc):
            return False
    x = t([1.0, 2.0], requires_grad=True)
    y = checkpoint(lambda a: a * a, x, use_reentrant=False,
                   context_fn=lambda: (Ctx("forward"), Ctx("recompute")))
    y.sum().backward()
    assert seen == ["forward", "recompute"]
    with E.no_grad():
        z = checkpoint(lambda a: a * a, x, use_reentrant=False)
    assert not z.requires_grad and z.grad_fn is None


def test_nonreentrant_second_backward_and_inplace_errors():
    x = t([1.0, 2.0], requires_grad=True)
    y = checkpoint(lambda a: a.exp().sum(), x, use_reentrant=False)
    y.backward(retain_graph=True)
    y.backward()  # retained: recomputes again
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    z = x * 1
    y = checkpoint(lambda a: a.exp().sum(), z, use_reentrant=False)
    with E.no_grad():
        z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_nonreentrant_determinism_check():
    shapes = iter([2, 1, 2, 1])

    def changing(a):
        return a[:next(shapes)] * 2
    x = t([1.0, 2.0], requires_grad=True)
    y = checkpoint(changing, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="Recomputed values have different metadata"):
        y.sum().backward()
    y = checkpoint(changing, x, use_reentrant=False, debug=True)
    with pytest.raises(CheckpointError, match=r"forward: .*\(2,\).*\n.*recomputation: .*\(1,\)"):
        y.sum().backward()
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(changing, x, use_reentrant=False, determinism_check="strict")


def test_reentrant_argument_errors_and_default_warning():
    x = t([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: k"):
        checkpoint(lambda a, k: a, x, k=1, use_reentrant=True)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(lambda a: a, x, use_reentrant=True, debug=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        checkpoint(lambda a: a * 2, x)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        checkpoint(lambda a: a * 2, t([1.0]), use_reentrant=True)


def test_checkpoint_sequential_errors():
    fns = [lambda a: a * 2, lambda a: a + 1]
    with pytest.raises(ValueError, match=r"segments must be an int in \[1, 2\].*got 3"):
        checkpoint_sequential(fns, 3, t([1.0]), use_reentrant=False)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
        checkpoint_sequential(fns, 1, t([1.0]), use_reentrant=False, foo=1)


def test_detach_variable():
    x = t([1.0], requires_grad=True)
    a, b, c = detach_variable((x * 2, t([1.0]), 3))
    assert a.requires_grad and a.grad_fn is None and not b.requires_grad and c == 3
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported"):
        detach_variable([x])


def test_random_state_of_the_arguments_device_type_is_preserved(alt):
    x = t(np.ones(64)).to("alt").requires_grad_()

    def fn(a):
        return E.nn.functional.dropout(a * 3, 0.5, training=True)
    E.manual_seed(2)
    fn(x).sum().backward()
    want = x.grad.cpu().numpy().copy()
    x.grad = None
    E.manual_seed(2)
    checkpoint(fn, x, use_reentrant=False).sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), want)
