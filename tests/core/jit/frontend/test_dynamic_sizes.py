"""Traced at one size, right at every other (jit/frontend/symbolic_sizes.py,
jit/frontend/shape_guards.py).

A corpus of functions and models is traced at one batch / sequence / spatial size and
called at three others; outputs and gradients (of inputs and parameters) must equal eager
mode's on the same inputs. Then: training through the JIT equals eager training, the IR
holds sizes as values, guards and recompile reasons.
"""
import copy
import math
import warnings

import numpy as np
import pytest

import ember
import ember as E
import ember.nn as nn
import ember.nn.functional as F

SIZES = (4, 7, 1, 12)  # traced at the first, called at the others (1: broadcasting's edge)


def _r(*shape, seed=0):
    return E.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=E.float64)


def _w(*shape):
    return _r(*shape, seed=99)


def _module(m):
    return m.double()


W6 = _w(1, 6)


def view_size(x):
    return x.view(x.size(0), -1).sum(1)


def add_zeros(x):
    return x + E.zeros(x.shape[0], 1, dtype=x.dtype)


def div_size(x):
    return x.sum(1) / x.size(1)


def expand_size(x):
    return W6.expand(x.size(0), 6) * x


def slice_half(x):
    return x[: x.size(0) // 2 + 1] * 2


def reshape_bt(x):
    b, t, c = x.shape
    return x.reshape(b * t, c).tanh()


def arange_last(x):
    return x + E.arange(x.size(-1), dtype=x.dtype)


def ce_zeros(x):
    return F.cross_entropy(x, E.zeros(x.size(0), dtype=E.int64))


def new_ones(x):
    return x.new_ones(x.size(0), 3) * x[:, :3]


def mean_numel(x):
    return x.sum() / x.numel()


def zeros_like(x):
    return E.zeros_like(x) + x.exp()


def full_size(x):
    return x * E.full((x.size(0), 1), 2.0, dtype=x.dtype)


def chunk_size(x):
    a, b = x.chunk(2, dim=1)
    return a * b.sigmoid()


def narrow_size(x):
    return x.narrow(0, 0, x.size(0) - 1 if x.size(0) > 1 else 1).sum(0)


def range_loop(x):
    y = x[0]
    for i in range(1, x.size(0)):
        y = y * 0.5 + x[i]
    return y


def len_slice(x):
    return x[: len(x)].cos()


def interp_scale(x):
    return F.interpolate(x, scale_factor=2.0)


def interp_bilinear(x):
    return F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=False)


def flatten_mm(x):
    return x.flatten(1) @ _w(12, 3)


def transpose_bmm(x):
    return (x @ x.transpose(1, 2)).softmax(-1)


def unsqueeze_cat(x):
    return E.cat([x, E.ones(x.size(0), 1, dtype=x.dtype)], dim=1)


def permute_reshape(x):
    n, c, h = x.shape
    return x.permute(0, 2, 1).reshape(n * h, c)


FUNCTIONS = [
    ("view_size", view_size, lambda n: (_r(n, 2, 3),)),
    ("add_zeros", add_zeros, lambda n: (_r(n, 3),)),
    ("div_size", div_size, lambda n: (_r(3, n),)),
    ("expand_size", expand_size, lambda n: (_r(n, 6),)),
    ("slice_half", slice_half, lambda n: (_r(n, 3),)),
    ("reshape_bt", reshape_bt, lambda n: (_r(2, n, 4),)),
    ("arange_last", arange_last, lambda n: (_r(2, n),)),
    ("ce_zeros", ce_zeros, lambda n: (_r(n, 3),)),
    ("new_ones", new_ones, lambda n: (_r(n, 4),)),
    ("mean_numel", mean_numel, lambda n: (_r(n, 3),)),
    ("zeros_like", zeros_like, lambda n: (_r(n, 2),)),
    ("full_size", full_size, lambda n: (_r(n, 3),)),
    ("chunk_size", chunk_size, lambda n: (_r(3, 2 * n),)),
    ("narrow_size", narrow_size, lambda n: (_r(n, 3),)),
    ("range_loop", range_loop, lambda n: (_r(n, 3),)),
    ("len_slice", len_slice, lambda n: (_r(n, 3),)),
    ("interp_scale", interp_scale, lambda n: (_r(1, 2, n, n),)),
    ("interp_bilinear", interp_bilinear, lambda n: (_r(2, 1, n, 3),)),
    ("flatten_mm", flatten_mm, lambda n: (_r(n, 3, 4),)),
    ("transpose_bmm", transpose_bmm, lambda n: (_r(2, n, 3),)),
    ("unsqueeze_cat", unsqueeze_cat, lambda n: (_r(n, 2),)),
    ("permute_reshape", permute_reshape, lambda n: (_r(n, 3, 5),)),
]


def _cnn_bn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 3))


def _cnn_adaptive():
    return nn.Sequential(nn.Conv2d(2, 3, 3), nn.ReLU(), nn.AdaptiveAvgPool2d((2, 2)),
                         nn.Flatten(), nn.Linear(12, 2))


class _Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        return self.mha(x, x, x)[0]


class _RnnHead(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell
        self.fc = nn.Linear(6, 2)

    def forward(self, x):
        out = self.rnn(x)[0]
        return self.fc(out)


MODULES = [
    ("mlp", lambda: nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3)),
     lambda n: (_r(n, 5),), "train"),
    ("linear_bn1d_train", lambda: nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)),
     lambda n: (_r(max(n, 2), 3),), "train"),
    ("cnn_bn_train", _cnn_bn, lambda n: (_r(max(n, 2), 1, 8, 8),), "train"),
    ("cnn_bn_eval", _cnn_bn, lambda n: (_r(n, 1, 8, 8),), "eval"),
    ("cnn_adaptive_spatial", _cnn_adaptive, lambda n: (_r(2, 2, n + 4, n + 5),), "eval"),
    ("lstm", lambda: _RnnHead(nn.LSTM(3, 6)), lambda n: (_r(5, n, 3),), "train"),
    ("lstm_seq", lambda: _RnnHead(nn.LSTM(3, 6)), lambda n: (_r(n, 2, 3),), "train"),
    ("lstm_batch_first", lambda: _RnnHead(nn.LSTM(3, 6, batch_first=True)),
     lambda n: (_r(n, 4, 3),), "train"),
    ("gru", lambda: _RnnHead(nn.GRU(3, 6)), lambda n: (_r(n, n, 3),), "train"),
    ("gru_batch_first", lambda: _RnnHead(nn.GRU(3, 6, batch_first=True, num_layers=2)),
     lambda n: (_r(n, 3, 3),), "train"),
    ("mha", _Attn, lambda n: (_r(n, n + 1, 8),), "train"),
    ("transformer_layer", lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
     lambda n: (_r(n + 1, n, 8),), "train"),
    ("embedding_mean", lambda: nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4)),
     lambda n: (_r(n, 3, 4),), "train"),
]


def _grads(fn, inputs, params):
    xs = [x.detach().requires_grad_(True) for x in inputs]
    out = fn(*xs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    loss = sum((o * o).sum() for o in outs)
    wrt = xs + list(params)
    gs = E.autograd.grad(loss, wrt, allow_unused=True)
    return [o.detach() for o in outs], gs


def _same(a, b, what):
    if a is None or b is None:
        assert a is None and b is None, what
        return
    assert tuple(a.shape) == tuple(b.shape), (what, a.shape, b.shape)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-10, err_msg=what)


def _check_all_sizes(traced, eager_fn, make, params=(), eager_twin=None):
    for n in SIZES[1:] + SIZES[1:2]:  # a size twice: its second call runs the checked plan
        inputs = make(n)
        got, ggot = _grads(traced, inputs, params)
        want, gwant = _grads(eager_twin or eager_fn, inputs,
                             params if eager_twin is None else list(eager_twin.parameters()))
        for a, b in zip(got, want):
            _same(a, b, f"output at size {n}")
        for a, b in zip(ggot, gwant):
            _same(a, b, f"gradient at size {n}")


# traces that must bake a size in (Python control flow or a plain int), so they trace
# again per size; every other case keeps one trace for all sizes. NOTE: train-mode
# BatchNorm's unbiased-variance factor n / (n - 1) is computed inside a composite that
# writes in place, whose inner nodes hold plain ints: one trace per batch size.
RETRACED = {"narrow_size", "range_loop", "len_slice", "linear_bn1d_train", "cnn_bn_train"}


@pytest.mark.parametrize("name, fn, make", FUNCTIONS, ids=[c[0] for c in FUNCTIONS])
def test_function_right_at_every_size(name, fn, make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = E.jit.trace(fn, make(SIZES[0]))
    _check_all_sizes(traced, fn, make)
    assert (len(traced._variants) > 1) == (name in RETRACED), traced.recompile_reasons()


@pytest.mark.parametrize("name, build, make, mode", MODULES, ids=[c[0] for c in MODULES])
def test_module_right_at_every_size(name, build, make, mode):
    E.manual_seed(0)
    model = _module(build())
    twin = copy.deepcopy(model)
    getattr(model, mode)()
    getattr(twin, mode)()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = E.jit.trace(model, make(SIZES[0]))
    # the twin takes the same steps as the traced model (running statistics included)
    twin.load_state_dict(model.state_dict())
    _check_all_sizes(traced, None, make, list(model.parameters()), eager_twin=twin)
    assert (len(traced._variants) > 1) == (name in RETRACED), traced.recompile_reasons()
    for (k, a), (_, b) in zip(model.state_dict().items(), twin.state_dict().items()):
        _same(a, b, f"state {k}")


@pytest.mark.parametrize("name, build, batch", [
    ("cnn_bn", _cnn_bn, lambda n: _r(n, 1, 8, 8, seed=n)),
    ("lstm", lambda: _RnnHead(nn.LSTM(3, 6)), lambda n: _r(5, n, 3, seed=n)),
    ("transformer", lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
     lambda n: _r(3, n, 8, seed=n)),
])
def test_training_through_the_jit_equals_eager(name, build, batch):
    E.manual_seed(0)
    model = _module(build())
    twin = copy.deepcopy(model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = E.jit.trace(model, (batch(4),))
    twin.load_state_dict(model.state_dict())  # tracing ran the model (running statistics)
    opt = E.optim.Adam(model.parameters(), lr=1e-2)
    opt_twin = E.optim.Adam(twin.parameters(), lr=1e-2)
    for step, n in enumerate((4, 6, 4, 2, 6, 3)):
        x = batch(n)
        for m, o, f in ((model, opt, traced), (twin, opt_twin, twin)):
            o.zero_grad()
            loss = (f(x) ** 2).mean()
            loss.backward()
            o.step()
        for (k, a), (_, b) in zip(model.state_dict().items(), twin.state_dict().items()):
            _same(a, b, f"step {step}: {k}")


def test_sizes_are_values_in_the_ir():
    traced = E.jit.trace(view_size, (_r(4, 2, 3),))
    text = str(traced.graph)
    assert "ember::size(%x" in text
    assert "int[] = prim::ListConstruct(" in text
    assert "Constant[value=[4, -1]]" not in text
    traced = E.jit.trace(reshape_bt, (_r(2, 3, 4),))
    assert "ember::mul.int(" in str(traced.graph)
    traced = E.jit.trace(slice_half, (_r(4, 3),))
    text = str(traced.graph)
    assert "ember::floordiv.int(" in text and "prim::SliceConstruct(" in text


def test_one_trace_serves_every_batch_size():
    traced = E.jit.trace(view_size, (_r(4, 2, 3),))
    for n in (8, 5, 16, 1):
        traced(_r(n, 2, 3))
    (v,) = traced._variants
    assert v.proven == {(0, 0)} and not v.pins and not v.guards


def test_a_size_compared_in_python_is_guarded_and_retraced():
    def fn(x):
        return x * 2 if x.size(0) > 2 else x * 3
    with pytest.warns(E.jit.TracerWarning, match="depends on an input size"):
        traced = E.jit.trace(fn, (_r(4, 3),))
    assert [g.expr for g in traced._variants[0].guards] == ["(S[0][0] > 2)"]
    x = _r(2, 3)
    _same(traced(x), x * 3, "guarded branch")
    reasons = [str(r) for r in traced.recompile_reasons()]
    assert any("guard (S[0][0] > 2) was True" in r for r in reasons), reasons


def test_a_size_used_as_a_plain_int_pins_the_dim():
    traced = E.jit.trace(range_loop, (_r(3, 2),))
    _same(traced(_r(5, 2)), range_loop(_r(5, 2)), "range")
    assert (0, 0) in traced._variants[0].pins
    reasons = [str(r) for r in traced.recompile_reasons()]
    assert any("input 0: dim 0 traced at 3, got 5" in r for r in reasons), reasons


def test_eager_errors_at_a_bad_size():
    c = _r(3)
    traced = E.jit.trace(lambda x: x + c, (_r(3),))
    with pytest.raises(Exception) as got:
        traced(_r(4))
    with pytest.raises(Exception) as want:
        _r(4) + c
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)


def test_past_the_limit_calls_run_eagerly():
    traced = E.jit.trace(range_loop, (_r(2, 2),))
    with pytest.warns(E.jit.TracerWarning, match="eagerly"):
        for n in range(3, 14):
            _same(traced(_r(n, 2)), range_loop(_r(n, 2)), f"size {n}")
    assert len(traced._variants) == ember.jit.frontend.traced.MAX_VARIANTS


def test_symint_arithmetic_matches_python():
    seen = {}

    def fn(x):
        n = x.size(0)
        seen["vals"] = [n + 1, 2 * n, n - 1, 7 - n, n // 2, 9 // n, n % 3, -n,
                        math.floor(n * 1.5), math.ceil(n / 3), math.trunc(n * 0.7)]
        return x.view(seen["vals"][1], -1)
    traced = E.jit.trace(fn, (_r(4, 6),))
    assert [int(v) for v in seen["vals"]] == [5, 8, 3, 3, 2, 2, 1, -4, 6, 2, 2]
    _same(traced(_r(6, 6)), fn(_r(6, 6)), "view by 2n")
