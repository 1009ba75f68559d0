"""Train-mode BatchNorm through ember.jit.trace: a traced copy of a model trains exactly
like an eager copy (same init, same batches, SGD and Adam), step by step: losses,
parameters and the running buffers (running_mean, running_var, num_batches_tracked, each
updated once per call), in float32 and float64; also under no_grad, in eval mode, and
across train/eval switches.

The trace bakes in the module's training flag (as torch.jit.trace does): a trace taken in
train mode keeps normalizing with the batch statistics and updating the running buffers
after ``.eval()``. The way to run in eval mode is to trace again after ``.eval()``.
"""
import copy

import numpy as np
import pytest

import ember as E
import ember.jit
import ember.nn as nn
import ember.nn.functional as F
from helpers import to_np

STEPS = 5
BUFFERS = ("running_mean", "running_var", "num_batches_tracked")


def linear_bn():
    """(N, 3) -> (N, 4)."""
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))


def small_cnn():
    """(N, 1, 8, 8) -> (N, 2): conv, BatchNorm2d, ReLU, max pooling, a linear head."""
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(4 * 3 * 3, 2))


MODELS = {"linear_bn": (linear_bn, (8, 3), 4), "cnn": (small_cnn, (6, 1, 8, 8), 2)}
OPTIMIZERS = {"sgd": lambda p: E.optim.SGD(p, lr=0.1, momentum=0.9),
              "adam": lambda p: E.optim.Adam(p, lr=0.01)}


def batches(in_shape, out_features, dtype, n=STEPS, seed=0):
    """``n`` fixed (input, target) pairs; inputs shifted and scaled so the statistics are
    far from the buffers' initial 0 and 1."""
    rng = np.random.default_rng(seed)
    return [(E.tensor((rng.normal(size=in_shape) * 3 + 1).astype(dtype.numpy)),
             E.tensor(rng.normal(size=(in_shape[0], out_features)).astype(dtype.numpy)))
            for _ in range(n)]


def twins(make, in_shape, dtype):
    """An eager model and a traced copy with the same parameters and buffers."""
    E.manual_seed(0)
    eager = make().to(dtype)
    copied = copy.deepcopy(eager)
    traced = ember.jit.trace(copied, (E.randn(*in_shape, dtype=dtype),))
    copied.load_state_dict(eager.state_dict())  # undo the updates tracing itself made
    return eager, traced


def assert_same_state(eager, traced, tol):
    """Every parameter and buffer of ``traced``'s module equals ``eager``'s; the buffers
    stay plain tensors (no grad, no history)."""
    mine = dict(traced.module.named_parameters())
    for name, p in eager.named_parameters():
        np.testing.assert_allclose(to_np(mine[name]), to_np(p), rtol=tol, atol=tol,
                                   err_msg=name)
    bufs = dict(traced.module.named_buffers())
    for name, b in eager.named_buffers():
        assert not bufs[name].requires_grad and bufs[name].grad_fn is None, name
        assert bufs[name].dtype is b.dtype, name
        np.testing.assert_allclose(to_np(bufs[name]), to_np(b), rtol=tol, atol=tol,
                                   err_msg=name)


def train_step(model, opt, x, target):
    """One optimizer step on the MSE loss; returns the loss (detached)."""
    opt.zero_grad()
    loss = F.mse_loss(model(x), target)
    loss.backward()
    opt.step()
    return loss.detach()


@pytest.mark.parametrize("dtype, tol", [(E.float32, 1e-5), (E.float64, 1e-10)],
                         ids=["float32", "float64"])
@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_training_matches_eager_step_by_step(model_name, opt_name, dtype, tol):
    train_and_compare(model_name, opt_name, dtype, tol)


def test_training_matches_eager_with_every_node_a_subgraph(every_node_a_subgraph):
    # no DifferentiableGraph inlined: the buffer writes stay outside the subgraphs too
    train_and_compare("cnn", "adam", E.float64, 1e-10)


def train_and_compare(model_name, opt_name, dtype, tol):
    """Train eager and traced twins for STEPS steps; compare after every step."""
    make, in_shape, out_features = MODELS[model_name]
    eager, traced = twins(make, in_shape, dtype)
    opt_e = OPTIMIZERS[opt_name](eager.parameters())
    opt_t = OPTIMIZERS[opt_name](traced.parameters())
    for step, (x, target) in enumerate(batches(in_shape, out_features, dtype), 1):
        want = train_step(eager, opt_e, x, target)
        got = train_step(traced, opt_t, x, target)
        np.testing.assert_allclose(to_np(got), to_np(want), rtol=tol, atol=tol)
        assert_same_state(eager, traced, tol)
        for m in traced.module.modules():  # one update per call, not zero, not two
            if isinstance(m, nn.modules.normalization._BatchNorm):
                assert int(m.num_batches_tracked) == step


@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_train_mode_call_under_no_grad_updates_buffers_once(model_name):
    # the plan for grad mode off (no autodiff, fusion allowed) also writes the buffers
    make, in_shape, out_features = MODELS[model_name]
    eager, traced = twins(make, in_shape, E.float32)
    for x, _ in batches(in_shape, out_features, E.float32, n=3):
        with E.no_grad():
            np.testing.assert_allclose(to_np(traced(x)), to_np(eager(x)), rtol=1e-5,
                                       atol=1e-5)
        assert_same_state(eager, traced, 1e-5)
    assert int(traced.module[1].num_batches_tracked) == 3


@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_eval_after_training_needs_a_new_trace(model_name):
    make, in_shape, out_features = MODELS[model_name]
    eager, traced = twins(make, in_shape, E.float32)
    opt_e, opt_t = E.optim.SGD(eager.parameters(), lr=0.1), \
        E.optim.SGD(traced.parameters(), lr=0.1)
    data = batches(in_shape, out_features, E.float32)
    for x, target in data[:3]:
        train_step(eager, opt_e, x, target)
        train_step(traced, opt_t, x, target)
    x = data[3][0]

    # .eval() does not reach into the train-mode trace: it still uses the batch
    # statistics and updates the buffers, exactly as the eager model in train mode does
    eager_train = copy.deepcopy(eager)
    eager.eval(), traced.eval()
    np.testing.assert_allclose(to_np(traced(x)), to_np(eager_train(x)), rtol=1e-5, atol=1e-5)
    assert int(traced.module[1].num_batches_tracked) == 4
    traced.module.load_state_dict(eager.state_dict())  # undo that update

    # traced again after .eval(): the running statistics, no buffer changes, eager's values
    traced_eval = ember.jit.trace(traced.module, (x,))
    for x, _ in data:
        np.testing.assert_allclose(to_np(traced_eval(x)), to_np(eager(x)), rtol=1e-5,
                                   atol=1e-5)
        assert_same_state(eager, traced_eval, 1e-5)
    assert int(traced.module[1].num_batches_tracked) == 3
    eval_out = to_np(traced_eval(x))

    # back to training: the train-mode trace carries on in step with eager
    eager.train(), traced.train()
    for x, target in data[3:]:
        np.testing.assert_allclose(to_np(train_step(traced, opt_t, x, target)),
                                   to_np(train_step(eager, opt_e, x, target)), rtol=1e-5,
                                   atol=1e-5)
        assert_same_state(eager, traced, 1e-5)
    # and the eval trace now sees the new running statistics (buffers are graph inputs)
    eager.eval()
    np.testing.assert_allclose(to_np(traced_eval(x)), to_np(eager(x)), rtol=1e-5, atol=1e-5)
    assert not np.allclose(to_np(traced_eval(x)), eval_out)


@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_other_batch_sizes_update_buffers_like_eager(model_name):
    # running_var takes n / (n - 1) times the batch variance: n must follow the batch
    make, in_shape, out_features = MODELS[model_name]
    eager, traced = twins(make, in_shape, E.float32)
    calls = 0
    for n in (2 * in_shape[0], 3, 2 * in_shape[0], in_shape[0]):
        for x, _ in batches((n,) + in_shape[1:], out_features, E.float32, n=2, seed=n):
            np.testing.assert_allclose(to_np(traced(x)), to_np(eager(x)), rtol=1e-5,
                                       atol=1e-5)
            assert_same_state(eager, traced, 1e-5)
            calls += 1
    assert int(traced.module[1].num_batches_tracked) == calls
