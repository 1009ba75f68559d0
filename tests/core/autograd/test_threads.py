"""Autograd from several threads (``ember/autograd/engine.py``): independent graphs give
the single-threaded results, and concurrent backward passes into one shared leaf (or
through one shared, retained graph) accumulate the exact total, as in PyTorch."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import ember as E
from ember.autograd import grad
from helpers import assert_close

THREADS, ITERS = 4, 50


def run_threads(target, n=THREADS):
    """Run ``target(i)`` in ``n`` threads started together; re-raise the first error."""
    barrier = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def model(seed: int):
    """A small graph with a diamond, a view and an in-place op on it; returns the loss
    and its leaves."""
    rng = np.random.default_rng(seed)
    x = E.tensor(rng.uniform(-1, 1, (3, 4)), requires_grad=True)
    w = E.tensor(rng.uniform(-1, 1, (4, 2)), requires_grad=True)
    h = (x @ w).tanh()
    h2 = h * 1.0
    h2[0].mul_(h[1])
    loss = (h2 * h).sum() + (x.sin() * x).mean()
    return loss, (x, w)


def grads_of(seed: int):
    loss, leaves = model(seed)
    loss.backward()
    return [leaf.grad.numpy() for leaf in leaves]


def test_independent_graphs_match_single_threaded():
    expected = {i: grads_of(i) for i in range(THREADS)}
    results = {i: [] for i in range(THREADS)}

    def work(i):
        for _ in range(ITERS):
            results[i].append(grads_of(i))

    run_threads(work)
    for i in range(THREADS):
        assert len(results[i]) == ITERS
        for got in results[i]:
            for g, e in zip(got, expected[i]):
                np.testing.assert_array_equal(g, e)   # same ops, same order: bit-exact


def test_independent_grad_calls_with_create_graph():
    def second(seed):
        x = E.tensor(np.random.default_rng(seed).uniform(-1, 1, 5), requires_grad=True)
        (g,) = grad((x ** 3).sum(), x, create_graph=True)
        (gg,) = grad(g.sum(), x)
        return x.detach().numpy(), gg.numpy()

    out = {i: [] for i in range(THREADS)}

    def work(i):
        for _ in range(ITERS):
            out[i].append(second(i))
            assert E.is_grad_enabled()

    run_threads(work)
    for i in range(THREADS):
        for xv, gg in out[i]:
            np.testing.assert_allclose(gg, 6 * xv, rtol=1e-12)


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_concurrent_backward_into_shared_leaf_is_exact(dtype):
    # integer values: every partial sum is exact, so the total must be exact too
    x = E.tensor([1.0, 2.0, 3.0, 4.0], dtype=dtype, requires_grad=True)

    def work(i):
        k = float(i + 1)
        for _ in range(ITERS):
            ((x * k) * x).sum().backward()          # d/dx = 2 k x

    run_threads(work)
    total = sum(2.0 * (i + 1) for i in range(THREADS)) * ITERS
    assert_close(x.grad, total * np.array([1.0, 2.0, 3.0, 4.0]), dtype, rtol=0, atol=0)


def test_concurrent_backward_through_one_retained_graph():
    x = E.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = (x * x * 3.0).sum()                          # d/dx = 6 x

    def work(i):
        for _ in range(ITERS):
            y.backward(retain_graph=True)

    run_threads(work)
    assert_close(x.grad, THREADS * ITERS * 6.0 * np.array([1.0, -2.0, 3.0]), rtol=0, atol=0)


def test_hooks_and_retain_grad_per_thread():
    calls = {i: 0 for i in range(THREADS)}

    def work(i):
        for _ in range(ITERS):
            x = E.tensor([float(i), 1.0], requires_grad=True)
            h = x * 2.0
            h.retain_grad()
            h.register_hook(lambda g, i=i: calls.__setitem__(i, calls[i] + 1) or g * (i + 1))
            (h * h).sum().backward()
            expected_h = 2 * np.array([2.0 * i, 2.0])           # d/dh h^2 = 2h
            np.testing.assert_array_equal(h.grad.numpy(), expected_h * (i + 1))
            np.testing.assert_array_equal(x.grad.numpy(), expected_h * (i + 1) * 2)

    run_threads(work)
    assert calls == {i: ITERS for i in range(THREADS)}
