"""The convolution dispatcher: priority selection among registered algorithms, Decline
reasons in ``explain``, ``_convolution_nogroup`` for algorithms without groups, the error
when nothing supports a call, and shape errors.

Fake algorithms are registered for one test by appending to the plugin manager's
``registered`` list and bumping its ``generation`` (which expires the selection cache);
the fixture sets the installed plugins' algorithms aside meanwhile, so the fakes compete
with native im2col alone whatever is installed (the nnpack plugin's priorities, 20 to 35,
would outrank them), and restores both.
"""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.backends.nnpack as nnpack
import ember.nn.functional as F
from ember.backends import convolution
from ember.backends.convolution import Decline, explain, make_params
from ember.backends.im2col import Im2colConvolution
from ember.errors import ShapeError
from ember.plugins import manager
from helpers import assert_close, make


class FakeAlgorithm:
    """Delegates to im2col, records the params it ran with; float64 only by default."""

    def __init__(self, name="fake", priority=10, supports_groups=True, device_type="cpu",
                 accept=lambda p: p.dtype is E.float64 or Decline("float64 only")):
        self.name, self.priority, self.device_type = name, priority, device_type
        self.supports_groups = supports_groups
        self.accept = accept
        self.native = Im2colConvolution(np, "cpu")
        self.calls = []

    def supports(self, params):
        return self.accept(params)

    def forward(self, input, weight, bias, params):
        self.calls.append(("forward", params))
        return self.native.forward(input, weight, bias, params)

    def backward(self, grad_output, input, weight, params, output_mask):
        self.calls.append(("backward", params))
        return self.native.backward(grad_output, input, weight, params, output_mask)


@pytest.fixture
def register():
    """``register(algo)`` adds a fake algorithm until the test ends; until then the
    registry holds native im2col and the fakes only."""
    manager.ensure_loaded()
    hook = "ember_convolution_algorithms"
    saved = manager.registered[hook]   # remembers which plugin registered what
    manager.registered[hook] = [a for a in saved if a.name == "native_im2col"]
    added = []

    def add(algo):
        convolution.ALGORITHMS.register([algo], owner=f"test-{len(added)}")
        added.append(algo)
        return algo
    yield add
    manager.registered[hook] = saved


def _conv(x, w, b=None, **kw):
    return F.conv2d(x, w, b, **kw)


def test_native_is_registered_and_chosen():
    """Native im2col is registered, and chosen where no plugin's algorithm competes, with
    or without the nnpack plugin installed: with ``ember.backends.nnpack`` switched off,
    and for a dilated convolution, which every nnpack algorithm declines."""
    names = [a.name for a in convolution.algorithms("cpu")]
    assert "native_im2col" in names
    x, w = E.zeros(1, 2, 5, 5), E.zeros(3, 2, 3, 3)
    with nnpack.flags(enabled=False):
        assert explain(x, w, padding=1).chosen == "native_im2col"
        assert _conv(x, w, padding=1).shape == (1, 3, 5, 5)
    x = E.zeros(1, 2, 7, 7)
    assert explain(x, w, padding=1, dilation=2).chosen == "native_im2col"
    assert _conv(x, w, padding=1, dilation=2).shape == (1, 3, 5, 5)


def test_choice_after_a_dynamic_decline_is_not_cached(register):
    """Regression: a ``dynamic`` algorithm's supports() reads a switch, so a choice made
    after it declined (or made of it) must not be cached for those params. The next call
    of the same shapes asks again, in both directions."""
    switch = {"on": False}
    fake = FakeAlgorithm("switched", accept=lambda p: switch["on"] or Decline("switch off"))
    fake.dynamic = True
    register(fake)
    x, _ = make((2, 3, 5, 5), E.float64)
    w, _ = make((4, 3, 3, 3), E.float64, seed=1)
    ref = _conv(x, w, padding=1)                  # the fake declines: native runs
    assert fake.calls == []
    switch["on"] = True
    y = _conv(x, w, padding=1)                    # same params: the fake now
    assert [c[0] for c in fake.calls] == ["forward"]
    assert_close(y, ref.numpy())
    switch["on"] = False
    _conv(x, w, padding=1)                        # and native again
    assert [c[0] for c in fake.calls] == ["forward"]
    assert explain(x, w, padding=1).chosen == "native_im2col"


def test_choice_is_cached_without_dynamic_algorithms(register):
    """The counterpart: where no algorithm asked is ``dynamic``, the choice is cached per
    params, so a supports() that changes its answer is not asked again for those shapes
    (the reason ``dynamic`` exists)."""
    switch = {"on": False}
    fake = register(FakeAlgorithm("static", accept=lambda p: switch["on"] or Decline("off")))
    x, w = E.zeros(1, 2, 5, 5, dtype=E.float64), E.zeros(3, 2, 3, 3, dtype=E.float64)
    _conv(x, w)
    switch["on"] = True
    _conv(x, w)
    assert fake.calls == []                       # native_im2col, cached
    assert explain(x, w).chosen == "static"       # explain does not use the cache


def test_dynamic_choice_is_cached_per_selection_state(register):
    """A dynamic algorithm that names what it reads (``selection_state``) is asked once per
    (params, state): the same state reuses the choice, a new state asks again, and going
    back to an old state finds its cached choice."""
    switch = {"on": False}
    asked = []

    def accept(p):
        asked.append(switch["on"])
        return switch["on"] or Decline("switch off")
    fake = FakeAlgorithm("stated", accept=accept)
    fake.dynamic = True
    fake.selection_state = lambda: switch["on"]
    register(fake)
    x, _ = make((2, 3, 5, 5), E.float64)
    w, _ = make((4, 3, 3, 3), E.float64, seed=1)
    ref = _conv(x, w, padding=1)
    _conv(x, w, padding=1)
    assert asked == [False] and fake.calls == []          # native, asked once
    switch["on"] = True
    for _ in range(2):
        assert_close(_conv(x, w, padding=1), ref.numpy())
    assert asked == [False, True] and [c[0] for c in fake.calls] == ["forward"] * 2
    switch["on"] = False
    _conv(x, w, padding=1)
    assert asked == [False, True] and len(fake.calls) == 2  # the first state's choice


def test_params_are_made_once_per_arguments(monkeypatch):
    """``_convolution`` checks the same arguments once: equal calls share one ConvParams,
    a different layout (channels-last strides), bias or dtype gets its own, and bad
    arguments raise on every call."""
    made = []

    def spy(*args, **kwargs):
        made.append(make_params(*args, **kwargs))
        return made[-1]
    monkeypatch.setattr(convolution, "make_params", spy)
    monkeypatch.setattr(convolution, "_made", {})
    x, w, b = E.randn(2, 3, 5, 5), E.randn(4, 3, 3, 3), E.randn(4)
    nhwc = E.tensor(np.ascontiguousarray(x.numpy().transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
    for args in ((x, w, b), (x, w, b), (nhwc, w, b), (x, w, None), (x.double(), w.double())):
        _conv(*args, padding=1)
    assert len(made) == 4
    assert [p.memory_format for p in made[:2]] == ["contiguous", "channels_last"]
    assert [p.has_bias for p in made[1:3]] == [True, False] and made[3].dtype is E.float64
    for _ in range(2):
        with pytest.raises(ShapeError, match="in_channels/groups"):
            _conv(x, E.randn(4, 2, 3, 3), padding=1)


def test_higher_priority_wins_and_explain_reports(register):
    fake = register(FakeAlgorithm())
    x, xn = make((2, 3, 5, 5), E.float64)
    w, _ = make((4, 3, 3, 3), E.float64, seed=1)
    y = _conv(x, w, padding=1)
    assert [c[0] for c in fake.calls] == ["forward"]
    assert_close(y, Im2colConvolution(np, "cpu").forward(
        x.numpy(), w.numpy(), None, fake.calls[0][1]))
    report = explain(x, w, padding=1)
    assert report.chosen == "fake"
    assert ("native_im2col", "supported, but fake has a higher priority") in report.declined
    assert "-> fake" in str(report)

    x32, w32 = x.float(), w.float()
    report = explain(x32, w32, padding=1)
    assert report.chosen == "native_im2col"
    assert ("fake", "float64 only") in report.declined
    assert "fake: declined (float64 only)" in str(report)
    fake.calls.clear()
    _conv(x32, w32, padding=1)
    assert fake.calls == []


def test_backward_runs_the_selected_algorithm(register):
    fake = register(FakeAlgorithm())
    x = E.tensor(np.random.default_rng(0).standard_normal((1, 2, 4, 4)), requires_grad=True)
    w = E.tensor(np.random.default_rng(1).standard_normal((3, 2, 3, 3)), requires_grad=True)
    _conv(x, w).sum().backward()
    assert [c[0] for c in fake.calls] == ["forward", "backward"]


def test_nogroup_for_algorithms_without_groups(register):
    fake = register(FakeAlgorithm(supports_groups=False))
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in ((2, 6, 5, 5), (9, 2, 3, 3), (9,))]
    x, w, b = (E.tensor(a, requires_grad=True) for a in arrays)
    y = _conv(x, w, b, padding=1, groups=3)
    assert [c[1].groups for c in fake.calls] == [1, 1, 1]        # once per group
    assert fake.calls[0][1].input_shape == (2, 2, 5, 5)
    g = E.tensor(rng.standard_normal(tuple(y.shape)))
    y.backward(g)
    assert [c[0] for c in fake.calls[3:]] == ["backward"] * 3

    # the same call with the native algorithm (grouped in one pass) agrees
    xr, wr, br = (E.tensor(a.astype(np.float32), requires_grad=True) for a in arrays)
    yr = _conv(xr, wr, br, padding=1, groups=3)
    yr.backward(g.float())
    for got, want in ((y, yr), (x.grad, xr.grad), (w.grad, wr.grad), (b.grad, br.grad)):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-4,
                                   atol=1e-4)


def test_nogroup_backward_respects_output_mask(register):
    register(FakeAlgorithm(supports_groups=False))
    x, _ = make((1, 4, 4, 4), E.float64)
    w, _ = make((4, 2, 3, 3), E.float64, seed=1)
    go, _ = make((1, 4, 2, 2), E.float64, seed=2)
    gi, gw, gb = E.convolution_backward(go, x, w, [1, 1], [0, 0], [1, 1], False, [0, 0], 2,
                                        [False, True, False])
    assert gi.shape == x.shape and not gi.numpy().any()
    assert gb.shape == (4,) and not gb.numpy().any()
    want = Im2colConvolution(np, "cpu").backward(
        go.numpy(), x.numpy(), w.numpy(), convolution.make_params(
            "cpu", E.float64, x.numpy(), w.numpy(), None, (1, 1), (0, 0), (1, 1), False,
            (0, 0), 2), (False, True, False))[1]
    assert_close(gw, want)


def test_declines_other_devices_and_faulty_supports(register):
    register(FakeAlgorithm("gpu_only", device_type="cuda"))
    register(FakeAlgorithm("broken", priority=5, accept=lambda p: 1 / 0))
    register(FakeAlgorithm("shy", priority=3, accept=lambda p: False))
    x, w = E.zeros(1, 2, 5, 5), E.zeros(3, 2, 3, 3)
    report = explain(x, w)
    assert report.chosen == "native_im2col"
    reasons = dict(report.declined)
    assert "broken" in reasons and "ZeroDivisionError" in reasons["broken"]
    assert reasons["shy"] == "supports() returned False"
    # algorithms(device) filters by device; explain lists only the call's device
    assert "gpu_only" in [a.name for a in convolution.algorithms()]
    assert "gpu_only" not in [a.name for a in convolution.algorithms("cpu")]
    assert _conv(x, w).shape == (1, 3, 3, 3)


def test_priority_order(register):
    low = register(FakeAlgorithm("low", priority=1, accept=lambda p: True))
    high = register(FakeAlgorithm("high", priority=7, accept=lambda p: True))
    names = [a.name for a in convolution.algorithms("cpu")]
    assert names.index("high") < names.index("low") < names.index("native_im2col")
    _conv(E.zeros(1, 1, 3, 3), E.zeros(1, 1, 2, 2))
    assert len(high.calls) == 1 and low.calls == []


def test_nothing_supports_lists_every_reason():
    x = E.zeros(1, 2, 5, 5, dtype=E.int64)
    w = E.zeros(3, 2, 3, 3, dtype=E.int64)
    with pytest.raises(NotImplementedError) as info:
        _conv(x, w)
    msg = str(info.value)
    assert "conv2d: no convolution algorithm supports" in msg
    assert "native_im2col: declined (dtype ember.int64 is not floating point" in msg


@pytest.mark.parametrize("x,w,kw,match", [
    ((1, 2, 5, 5), (3, 2, 3), {}, "3-D input"),
    ((1, 2, 5), (3, 2), {}, "rank 3 to 5"),
    ((1, 4, 5, 5), (3, 2, 3, 3), dict(groups=2), "divisible by groups=2"),
    ((1, 2, 5, 5), (3, 2, 3, 3), dict(transposed=True), r"\(in_channels, out_channels"),
    ((1, 2, 5, 5), (3, 2, 3, 3), dict(stride=(1, 2, 3)), "2 element"),
    ((1, 2, 5, 5), (3, 2, 3, 3), dict(padding=(-1, 0)), "padding >= 0"),
    ((1, 2, 5, 5), (3, 2, 3, 3), dict(groups=0), "groups >= 1"),
])
def test_shape_errors(x, w, kw, match):
    args = dict(stride=(1,), padding=(0,), dilation=(1,), transposed=False,
                output_padding=(0,), groups=1)
    args.update(kw)
    with pytest.raises(ShapeError, match=match):
        E._convolution(E.zeros(*x), E.zeros(*w), None, args["stride"], args["padding"],
                       args["dilation"], args["transposed"], args["output_padding"],
                       args["groups"], False, False, True)


def test_backward_rejects_a_grad_output_of_the_wrong_shape():
    x, w = E.zeros(1, 2, 5, 5), E.zeros(3, 2, 3, 3)
    with pytest.raises(ShapeError, match=r"expected grad_output of shape \(1, 3, 3, 3\)"):
        E.convolution_backward(E.zeros(1, 3, 5, 5), x, w, [1], [0], [1], False, [0], 1,
                               [True, True, True])


@pytest.mark.parametrize("shape", [(0, 3, 4, 4), (1, 3, 4, 4), (5, 3, 7), (64, 32, 4, 4),
                                   (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16], ids=str)
def test_bias_grad_sums_batch_and_space(shape, dtype):
    """``bias_grad`` (N, C, *O) -> (C,) in the input's dtype against a float64 sum; half
    precision accumulates in float32, so it is off by its own rounding only."""
    from ember.backends.convolution import bias_grad
    g = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    got = bias_grad(np, g)
    ref = g.astype(np.float64).sum(axis=tuple(i for i in range(g.ndim) if i != 1))
    assert got.dtype == dtype and got.shape == (shape[1],)
    tol = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 1e-3}[dtype]
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol, atol=tol * 10)
    wide = np.broadcast_to(np.ones((), dtype), shape)   # a sum's gradient: stride 0
    np.testing.assert_array_equal(bias_grad(np, wide), wide.sum(axis=(0, *range(2, g.ndim))))
