"""``algorithm.py``, the shared machinery of the nnpack algorithms (not their arithmetic):
``nnpack_limits`` (PyTorch's ``use_nnpack`` conditions, each Decline naming its reason),
the ``fits`` of each algorithm, the three layers of ``supports`` (``using`` > switch >
fits > crossover), the bias in ``forward``, ``output_mask`` and the bias gradient in
``backward``, and groups, which the dispatcher runs per group (``_convolution_nogroup``).

The arithmetic is replaced by ``FakeModule`` where only the layering is under test; the
end-to-end group tests use the finished ``gemm1x1``.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember as E
import ember.backends.nnpack as nnpack
import ember.nn.functional as F
from ember.backends.convolution import ConvParams, Decline
from ember_nnpack_compat import selection, using
from ember_nnpack_compat.algorithm import (ALGORITHMS, FFTConvolution, Gemm1x1,
                                           NnpackAlgorithm, WinogradF2x2, WinogradF4x4,
                                           nnpack_limits)
from helpers import assert_close, make

from ._shared import NAMES, native


def params(n=2, c=3, k=4, hw=(8, 8), kernel=(3, 3), stride=(1, 1), padding=(1, 1),
           dilation=(1, 1), dtype=E.float32, device="cpu", transposed=False, groups=1,
           bias=False):
    """A 2-D ``ConvParams`` (weight (K, C/groups, kh, kw); transposed: (C, K/groups, ...))."""
    w = (c, k // groups, *kernel) if transposed else (k, c // groups, *kernel)
    return ConvParams(device, dtype, (n, c, *hw), w, bias, stride, padding, dilation,
                      transposed, (0, 0), groups)


# ---- nnpack_limits --------------------------------------------------------------------------

@pytest.mark.parametrize("p", [
    params(), params(dtype=E.float64), params(kernel=(16, 16), hw=(20, 20), padding=(15, 15)),
    params(kernel=(1, 1), padding=(0, 0), stride=(2, 3)), params(kernel=(3, 5), padding=(2, 4)),
    params(groups=3, c=6, k=6),
], ids=["f32", "f64", "k16", "1x1-strided", "3x5", "groups"])
def test_limits_accept(p):
    assert nnpack_limits(p) is True


@pytest.mark.parametrize("p,words", [
    (params(device="cuda"), "cpu"),
    (params(dtype=E.float16), "float16"),
    (params(dtype=E.bfloat16), "bfloat16"),
    (params(dtype=E.int32), "int32"),
    (ConvParams("cpu", E.float32, (2, 3, 8), (4, 3, 3), False, (1,), (1,), (1,), False, (0,),
                1), "1-D"),
    (ConvParams("cpu", E.float32, (2, 3, 8, 8, 8), (4, 3, 3, 3, 3), False, (1,) * 3,
                (1,) * 3, (1,) * 3, False, (0,) * 3, 1), "3-D"),
    (params(transposed=True), "transposed"),
    (params(dilation=(2, 2)), "dilation"),
    (params(dilation=(1, 2)), "dilation"),
    (params(kernel=(17, 3), hw=(20, 20), padding=(0, 0)), "17x3"),
    (params(kernel=(3, 17), hw=(20, 20), padding=(0, 0)), "3x17"),
    (params(padding=(3, 1)), "padding"),
    (params(padding=(0, 5)), "padding"),
    (params(kernel=(1, 1), padding=(1, 0)), "padding"),
])
def test_limits_decline_with_reason(p, words):
    verdict = nnpack_limits(p)
    assert isinstance(verdict, Decline) and not verdict
    assert words in verdict.reason


def test_limits_kernel_reason_names_the_limit():
    verdict = nnpack_limits(params(kernel=(17, 17), hw=(20, 20), padding=(0, 0)))
    assert "16x16" in verdict.reason


# ---- fits: NNPACK's limits first, then the algorithm's own -------------------------------

@pytest.mark.parametrize("cls,p,ok", [
    (Gemm1x1, params(kernel=(1, 1), padding=(0, 0), stride=(2, 2)), True),
    (Gemm1x1, params(), False),
    (Gemm1x1, params(kernel=(1, 3), padding=(0, 1)), False),
    (WinogradF4x4, params(), True),
    (WinogradF4x4, params(padding=(0, 0), hw=(7, 9)), True),
    (WinogradF4x4, params(stride=(2, 2)), False),
    (WinogradF4x4, params(stride=(1, 2)), False),
    (WinogradF4x4, params(kernel=(5, 5), padding=(2, 2)), False),
    (WinogradF2x2, params(), True),
    (WinogradF2x2, params(stride=(2, 1)), False),
    (WinogradF2x2, params(kernel=(3, 1), padding=(1, 0)), False),
    (FFTConvolution, params(kernel=(5, 5), padding=(2, 2)), True),
    (FFTConvolution, params(kernel=(16, 16), hw=(16, 16), padding=(0, 0)), True),
    (FFTConvolution, params(), True),
    (FFTConvolution, params(kernel=(1, 1), padding=(0, 0)), False),
])
def test_fits(cls, p, ok):
    verdict = cls().fits(p)
    if ok:
        assert verdict is True
    else:
        assert isinstance(verdict, Decline) and verdict.reason


@pytest.mark.parametrize("cls", [Gemm1x1, WinogradF4x4, WinogradF2x2, FFTConvolution])
def test_fits_reports_nnpack_limits_before_its_own(cls):
    """Outside NNPACK's limits every algorithm gives the limit's reason, not its own."""
    p = params(kernel=(17, 17), hw=(20, 20), padding=(0, 0))
    assert cls().fits(p).reason == nnpack_limits(p).reason
    p = params(dtype=E.int64, kernel=(1, 1), padding=(0, 0))
    assert cls().fits(p).reason == nnpack_limits(p).reason


def test_fits_ignores_the_switch_and_the_crossover(monkeypatch):
    monkeypatch.setattr(selection, "crossover", lambda name, p: Decline("slow here"))
    nnpack.enabled = False
    assert WinogradF4x4().fits(params()) is True


# ---- supports: using > switch > fits > crossover ------------------------------------------

def test_supports_asks_crossover_after_fits(monkeypatch):
    asked = []

    def crossover(name, p):
        asked.append(name)
        return Decline("im2col is faster here")
    monkeypatch.setattr(selection, "crossover", crossover)
    nnpack.enabled = True
    verdict = WinogradF4x4().supports(params())
    assert not verdict and verdict.reason == "im2col is faster here"
    assert asked == ["nnpack_winograd_f4x4_3x3"]
    verdict = WinogradF4x4().supports(params(stride=(2, 2)))   # fits declines: not asked
    assert "stride" in verdict.reason and asked == ["nnpack_winograd_f4x4_3x3"]


def test_supports_true_when_everything_agrees(monkeypatch):
    monkeypatch.setattr(selection, "crossover", lambda name, p: True)
    nnpack.enabled = True
    assert Gemm1x1().supports(params(kernel=(1, 1), padding=(0, 0))) is True


def test_switch_off_declines_every_algorithm(monkeypatch):
    monkeypatch.setattr(selection, "crossover", lambda name, p: True)
    p = params(kernel=(1, 1), padding=(0, 0))
    algo = Gemm1x1()
    assert algo.supports(p) is True          # cached verdict ...
    with nnpack.flags(enabled=False):
        verdict = algo.supports(p)           # ... does not outlive the switch
        assert not verdict and "enabled is False" in verdict.reason
    assert algo.supports(p) is True


def test_using_outranks_switch_and_crossover(monkeypatch):
    monkeypatch.setattr(selection, "crossover", lambda name, p: Decline("slow here"))
    nnpack.enabled = False
    with using("nnpack_winograd_f2x2_3x3"):
        assert WinogradF2x2().supports(params()) is True
        # but not the algorithm's own limits
        assert "stride" in WinogradF2x2().supports(params(stride=(2, 2))).reason


def test_using_makes_the_others_decline(monkeypatch):
    monkeypatch.setattr(selection, "crossover", lambda name, p: True)
    with using("nnpack_winograd_f2x2_3x3"):
        for cls in (WinogradF4x4, FFTConvolution):
            verdict = cls().supports(params())
            assert not verdict
            assert "using('nnpack_winograd_f2x2_3x3')" in verdict.reason


def test_verdicts_are_cached_per_params(monkeypatch):
    asked = []
    monkeypatch.setattr(selection, "crossover", lambda name, p: asked.append(p) or True)
    algo = FFTConvolution()
    for _ in range(3):
        assert algo.supports(params(kernel=(5, 5), padding=(2, 2)))
    assert algo.supports(params(kernel=(5, 5), padding=(2, 2), n=7))
    assert len(asked) == 2


def test_registered_objects():
    assert sorted(a.name for a in ALGORITHMS) == sorted(NAMES)
    for a in ALGORITHMS:
        assert isinstance(a, NnpackAlgorithm)
        assert a.device_type == "cpu" and a.supports_groups is False
        assert a.dynamic is True      # the dispatcher must not cache: the switch can change
        assert a.priority > 0         # above native im2col
        assert a.name in repr(a)
    # NNPACK's preference: the 1x1 GEMM, then Winograd F(4x4) over F(2x2), FFT last
    order = [a.name for a in sorted(ALGORITHMS, key=lambda a: -a.priority)]
    assert order == NAMES


# ---- forward: the module's result plus the bias ------------------------------------------

class FakeModule:
    """Arithmetic that returns a known result and records which functions ran."""

    def __init__(self, out_value=2.0):
        self.out_value, self.calls = out_value, []

    def forward(self, x, w, padding, stride):
        self.calls.append("forward")
        return np.full((x.shape[0], w.shape[0], 3, 3), self.out_value, x.dtype)

    def grad_input(self, gy, w, input_shape, padding, stride):
        self.calls.append("grad_input")
        return np.ones(input_shape, gy.dtype)

    def grad_weight(self, gy, x, weight_shape, padding, stride):
        self.calls.append("grad_weight")
        return np.ones(weight_shape, gy.dtype)


def _fake_algorithm():
    algo = WinogradF4x4()
    algo.module = FakeModule()
    return algo


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_adds_bias_per_channel(dtype):
    algo, p = _fake_algorithm(), params(n=2, k=4, hw=(3, 3), padding=(1, 1))
    x, w = np.zeros((2, 3, 3, 3), dtype), np.zeros((4, 3, 3, 3), dtype)
    bias = np.array([1, -2, 3, 0.5], dtype)
    y = algo.forward(x, w, bias, p)
    assert y.shape == (2, 4, 3, 3) and y.dtype == dtype
    np.testing.assert_array_equal(y, 2.0 + bias.reshape(1, 4, 1, 1) + np.zeros_like(y))
    np.testing.assert_array_equal(bias, np.array([1, -2, 3, 0.5], dtype))  # untouched


def test_forward_without_bias_is_the_module_result():
    algo, p = _fake_algorithm(), params(n=2, k=4, hw=(3, 3))
    y = algo.forward(np.zeros((2, 3, 3, 3)), np.zeros((4, 3, 3, 3)), None, p)
    np.testing.assert_array_equal(y, np.full((2, 4, 3, 3), 2.0))


# ---- backward: output_mask and the bias gradient --------------------------------------------

@pytest.mark.parametrize("mask", list(itertools.product([False, True], repeat=3)))
def test_backward_honours_output_mask(mask):
    algo = _fake_algorithm()
    p = params(n=2, c=3, k=4, hw=(3, 3))
    x, w = np.zeros((2, 3, 3, 3)), np.zeros((4, 3, 3, 3))
    gy = np.random.default_rng(0).standard_normal((2, 4, 3, 3))
    gi, gw, gb = algo.backward(gy, x, w, p, mask)
    assert algo.module.calls == [n for n, m in zip(("grad_input", "grad_weight"), mask) if m]
    assert (gi is None) == (not mask[0]) and (gw is None) == (not mask[1])
    assert (gb is None) == (not mask[2])
    if mask[0]:
        assert gi.shape == p.input_shape
    if mask[1]:
        assert gw.shape == p.weight_shape
    if mask[2]:
        assert gb.shape == (4,)
        np.testing.assert_allclose(gb, gy.sum(axis=(0, 2, 3)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bias_gradient_dtype_and_value(dtype):
    algo = _fake_algorithm()
    gy = np.random.default_rng(1).uniform(-1, 1, (3, 5, 4, 6)).astype(dtype)
    p = params(n=3, c=2, k=5, hw=(4, 6))
    _, _, gb = algo.backward(gy, None, None, p, (False, False, True))
    assert gb.dtype == dtype
    np.testing.assert_allclose(gb, gy.astype(np.float64).sum(axis=(0, 2, 3)),
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


# ---- groups: the dispatcher runs the algorithm once per group -----------------------------

@pytest.mark.parametrize("groups", [2, 3])
def test_groups_run_per_group_and_match_native(ran, groups):
    x, _ = make((2, 6, 5, 7), E.float64)
    w, _ = make((12, 6 // groups, 1, 1), E.float64, seed=1)
    b, _ = make((12,), E.float64, seed=2)
    with native():
        xr, wr, br = (t.detach().requires_grad_() for t in (x, w, b))
        ref = F.conv2d(xr, wr, br, groups=groups)
        (ref * ref).sum().backward()
    assert ran == []
    xs, ws, bs = (t.detach().requires_grad_() for t in (x, w, b))
    with using("nnpack_gemm1x1"):
        y = F.conv2d(xs, ws, bs, groups=groups)
        (y * y).sum().backward()
    assert [(n, m) for n, m, _ in ran] == \
        [("nnpack_gemm1x1", "forward")] * groups + [("nnpack_gemm1x1", "backward")] * groups
    for _, _, p in ran:
        assert p.groups == 1
        assert p.input_shape == (2, 6 // groups, 5, 7)
        assert p.weight_shape == (12 // groups, 6 // groups, 1, 1)
    assert_close(y.detach(), ref.detach().numpy())
    for got, want in ((xs, xr), (ws, wr), (bs, br)):
        assert_close(got.grad, want.grad.numpy())


def test_depthwise_3x3_runs_per_group_winograd(ran):
    """Depthwise 3x3 (groups = channels) through Winograd F(2x2, 3x3), against native."""
    x, _ = make((2, 4, 6, 6), E.float64)
    w, _ = make((4, 1, 3, 3), E.float64, seed=1)
    with native():
        ref = F.conv2d(x, w, padding=1, groups=4)
    with using("nnpack_winograd_f2x2_3x3"):
        y = F.conv2d(x, w, padding=1, groups=4)
    assert [(n, m) for n, m, _ in ran] == [("nnpack_winograd_f2x2_3x3", "forward")] * 4
    for _, _, p in ran:
        assert p.groups == 1 and p.input_shape == (2, 1, 6, 6)
    assert_close(y, ref.numpy(), rtol=1e-10, atol=1e-10)
