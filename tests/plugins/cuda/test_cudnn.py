"""cuDNN convolution on a real GPU (``cuda`` marker: skipped without a GPU, CuPy, the
ember-cuda backend, or the cuDNN Frontend).

Every pass (forward, grad_input, grad_weight, grad_bias) of the ``cudnn`` algorithm is
compared with ember's CPU native algorithm (numpy im2col) in float64 on the same
(already rounded) inputs, over stride x padding x dilation x groups x bias, for 1-D, 2-D
and 3-D, regular and transposed, NCHW and channels-last inputs, and every dtype.

Tolerances, relative to the largest reference magnitude (``scale``), since inputs are
uniform in [-1, 1] and sums have at most C/G * prod(k) = 108 terms:

* float64: 1e-10. cuDNN computes in double; only summation order differs (~1e-15).
* float32: 1e-4. TF32 engines are excluded (``TENSOR_CORE`` note), but cuDNN's FFT and
  Winograd engines transform their operands and reassociate sums: errors of a few 1e-6
  of ``scale`` are normal, 1e-4 leaves a wide margin and still catches any wrong term.
* float16: 4e-3. Inputs are exact halves, products accumulate in float32, and the result
  rounds to half once (2**-11 = 4.9e-4 of ``scale``) plus once more when the bias is
  added in half (as PyTorch does): <= 1e-3, and 4x margin for Winograd in half.
* bfloat16: 3e-2. Same two roundings at 2**-8 = 3.9e-3 each: <= 8e-3, and margin.

Run: ``python -m pytest tests/plugins/cuda/test_cudnn.py -q -p no:cacheprovider``.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember as E
import ember.backends.convolution as conv_mod
import ember.backends.cudnn as cudnn_switches
import ember.nn.functional as F
from ember.backends.convolution import ConvParams, make_params
from ember.backends.im2col import Im2colConvolution

# TF32 off (clean_switches, conftest.py): the float32 tolerance below is for float32
# arithmetic; test_convolution.py checks the switch itself
pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("clean_switches")]
cupy = pytest.importorskip("cupy", reason="needs CuPy (pip install 'ember-cuda[cuda13]')")

REFERENCE = Im2colConvolution(np, "cpu")
DTYPES = [E.float32, E.float16, E.bfloat16, E.float64]
TOL = {"float64": 1e-10, "float32": 1e-4, "float16": 4e-3, "bfloat16": 3e-2}


@pytest.fixture(scope="module")
def backend():
    from ember.backends import registry
    return registry.get_backend("cuda")


@pytest.fixture(scope="module")
def algo(backend):
    from ember_cuda.cudnn import unavailable_reason
    if not cudnn_switches.is_available():
        pytest.skip(f"cuDNN is not available: {unavailable_reason()}")
    return next(a for a in conv_mod.algorithms("cuda") if a.name == "cudnn")


# ---- helpers ------------------------------------------------------------------------------

def host(shape, dtype, seed):
    """Uniform [-1, 1] values rounded to ``dtype`` (numpy, ml_dtypes for bfloat16)."""
    values = np.random.default_rng(seed).uniform(-1, 1, shape)
    return values.astype(dtype.numpy)


def device(backend, a, channels_last=False):
    """``a`` on GPU 0, optionally stored channels-last (same logical values)."""
    try:
        d = backend.from_numpy(np.ascontiguousarray(a), 0)
    except (TypeError, ValueError) as e:
        pytest.skip(f"the cuda backend cannot hold {a.dtype}: {e}")
    if channels_last:
        d = cupy.moveaxis(cupy.ascontiguousarray(cupy.moveaxis(d, 1, -1)), -1, 1)
    return d


def back(backend, a):
    return np.asarray(backend.to_numpy(a)).astype(np.float64)


def wide(a):
    return None if a is None else np.asarray(a).astype(np.float64)


def ref_params(p: ConvParams) -> ConvParams:
    import dataclasses
    return dataclasses.replace(p, device_type="cpu", dtype=E.float64)


def assert_close(got, want, dtype, what):
    tol = TOL[dtype.name]
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=what)


def run_case(algo, backend, dtype, nd, stride, padding, dilation, groups, bias, transposed,
             channels_last, seed=0):
    """One convolution: forward and all gradients on cuDNN vs CPU im2col in float64.
    Returns the Decline if cuDNN refused the configuration (the fallback still ran)."""
    spatial = {1: (9,), 2: (7, 6), 3: (5, 6, 5)}[nd]
    kernel = {1: (3,), 2: (3, 2), 3: (3, 2, 2)}[nd]
    n, c, k = 2, 4, 6
    wshape = (c, k // groups, *kernel) if transposed else (k, c // groups, *kernel)
    x, w = host((n, c, *spatial), dtype, seed), host(wshape, dtype, seed + 1)
    b = host((k,), dtype, seed + 2) if bias else None
    opad = tuple(max(0, s - 1) for s in (stride,) * nd) if transposed else (0,) * nd
    tup = (lambda v: (v,) * nd)
    dx, dw = device(backend, x, channels_last), device(backend, w)
    db = device(backend, b) if bias else None
    p = make_params("cuda", dtype, dx, dw, db, tup(stride), tup(padding), tup(dilation),
                    transposed, opad, groups)
    rp = ref_params(p)
    what = (f"{dtype.name} {nd}-D {'transposed ' if transposed else ''}stride={stride} "
            f"padding={padding} dilation={dilation} groups={groups} bias={bias} "
            f"channels_last={channels_last}")
    y = algo.forward(dx, dw, db, p)
    assert y.shape == p.output_shape and y.dtype == dx.dtype, what
    assert_close(back(backend, y), REFERENCE.forward(wide(x), wide(w), wide(b), rp),
                 dtype, f"forward: {what}")
    gy = host(p.output_shape, dtype, seed + 3)
    got = algo.backward(device(backend, gy, channels_last), dx, dw, p, (True, True, True))
    want = REFERENCE.backward(wide(gy), wide(x), wide(w), rp, (True, True, True))
    for name, g, r in zip(("grad_input", "grad_weight", "grad_bias"), got, want):
        assert g.shape == r.shape and g.dtype == dx.dtype, f"{name}: {what}"
        assert_close(back(backend, g), r, dtype, f"{name}: {what}")
    verdict = algo.supports(p)
    return None if verdict is True else (what, verdict.reason)


GRID = list(itertools.product((1, 2), (0, 1), (1, 2), (1, 2), (False, True)))
"""stride x padding x dilation x groups x bias: every combination, per test below."""


# ---- every parameter combination against the CPU native algorithm --------------------------

@pytest.mark.parametrize("transposed", [False, True], ids=["conv", "transposed"])
@pytest.mark.parametrize("channels_last", [False, True], ids=["nchw", "channels_last"])
@pytest.mark.parametrize("nd", [1, 2, 3], ids=["1d", "2d", "3d"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_against_cpu_native(algo, backend, dtype, nd, channels_last, transposed):
    declined = []
    for i, (stride, padding, dilation, groups, bias) in enumerate(GRID):
        d = run_case(algo, backend, dtype, nd, stride, padding, dilation, groups, bias,
                     transposed, channels_last, seed=i)
        if d:
            declined.append(d)
    # Declines are allowed (the native algorithm ran, and its values were checked);
    # print them so a GPU run shows what cuDNN refused.
    for what, reason in declined:
        print(f"cuDNN declined {what}: {reason}")


@pytest.mark.parametrize("dtype", [E.float32, E.float16, E.bfloat16], ids=lambda d: d.name)
def test_common_configurations_run_on_cudnn(algo, backend, dtype):
    """2-D regular and transposed, strided, padded, dilated and grouped convolutions in
    the training dtypes must not fall back."""
    for i, (stride, padding, dilation, groups, bias) in enumerate(GRID):
        for transposed in (False, True):
            d = run_case(algo, backend, dtype, 2, stride, padding, dilation, groups, bias,
                         transposed, False, seed=100 + i)
            assert d is None, f"fell back to im2col: {d}"


def test_half_types_compute_channels_last(algo, backend):
    x = device(backend, host((2, 8, 6, 6), E.float16, 0))
    w = device(backend, host((8, 8, 3, 3), E.float16, 1))
    p = make_params("cuda", E.float16, x, w, None, (1, 1), (1, 1), (1, 1), False, (0, 0), 1)
    y = algo.forward(x, w, None, p)
    assert y.flags.c_contiguous
    key = next(k for k in algo.graphs._items if k.dtype == "float16" and
               k.x[0] == (2, 8, 6, 6))
    assert key.x[1] == (288, 1, 48, 8)


# ---- through ember's API and the dispatcher -----------------------------------------------------

def tensors(shape_x, shape_w, dtype=E.float32, seed=0):
    x = E.tensor(host(shape_x, dtype, seed))
    w = E.tensor(host(shape_w, dtype, seed + 1))
    return x, w


def test_explain_and_enabled_switch(algo):
    x, w = tensors((2, 3, 8, 8), (4, 3, 3, 3))
    xc, wc = x.cuda(), w.cuda()
    assert conv_mod.explain(xc, wc, padding=1).chosen == "cudnn"
    y_cudnn = F.conv2d(xc, wc, padding=1)
    with cudnn_switches.flags(enabled=False):
        report = conv_mod.explain(xc, wc, padding=1)
        assert report.chosen == "native_im2col"
        assert any(name == "cudnn" and "disabled" in why for name, why in report.declined)
        y_native = F.conv2d(xc, wc, padding=1)
    want = F.conv2d(x.double(), w.double(), padding=1).numpy()
    for y in (y_cudnn, y_native):
        assert_close(y.cpu().numpy().astype(np.float64), want, E.float32, "conv2d")


@pytest.mark.parametrize("dtype", [E.float32, E.float16], ids=lambda d: d.name)
def test_autograd_against_cpu(algo, dtype):
    x, w = tensors((2, 4, 9, 9), (6, 2, 3, 3), dtype)
    b = E.tensor(host((6,), dtype, 7))
    grads = {}
    for dev in ("cpu", "cuda"):
        xd, wd, bd = (t.double() if dev == "cpu" else t.cuda() for t in (x, w, b))
        for t in (xd, wd, bd):
            t.requires_grad_(True)
        y = F.conv2d(xd, wd, bd, stride=2, padding=1, dilation=1, groups=2)
        (y * y).sum().backward()
        grads[dev] = [y.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in (xd, wd, bd)]
    for name, got, want in zip(("y", "x.grad", "w.grad", "b.grad"), grads["cuda"],
                               grads["cpu"]):
        assert_close(got.astype(np.float64), want, dtype, name)


def test_conv_transpose_through_the_api(algo):
    x, w = tensors((2, 4, 5, 5), (4, 3, 3, 3))
    got = F.conv_transpose2d(x.cuda(), w.cuda(), stride=2, padding=1, output_padding=1)
    want = F.conv_transpose2d(x.double(), w.double(), stride=2, padding=1, output_padding=1)
    assert got.shape == want.shape
    assert_close(got.cpu().numpy().astype(np.float64), want.numpy(), E.float32, "convT")


def test_deterministic_runs_are_bitwise_equal(algo):
    x, w = tensors((16, 32, 28, 28), (64, 32, 3, 3))
    results = []
    with cudnn_switches.flags(deterministic=True):
        for _ in range(2):
            xc, wc = x.cuda().requires_grad_(True), w.cuda().requires_grad_(True)
            y = F.conv2d(xc, wc, padding=1)
            y.sum().backward()
            results.append([t.cpu().numpy() for t in (y.detach(), xc.grad, wc.grad)])
    for a, b in zip(*results):
        assert np.array_equal(a, b)
    keys = [k for k in algo.graphs._items if k.deterministic and k.x[0] == (16, 32, 28, 28)]
    assert {k.op for k in keys} == {"fprop", "dgrad", "wgrad"}


def test_benchmark_mode(algo):
    x, w = tensors((4, 16, 20, 20), (32, 16, 3, 3), seed=3)
    with cudnn_switches.flags(benchmark=True):
        y = F.conv2d(x.cuda(), w.cuda(), padding=1)
        y2 = F.conv2d(x.cuda(), w.cuda(), padding=1)
    want = F.conv2d(x.double(), w.double(), padding=1).numpy()
    for got in (y, y2):
        assert_close(got.cpu().numpy().astype(np.float64), want, E.float32, "benchmark")
    tuned = [algo.graphs._items[k] for k in algo.graphs._items
             if k.benchmark and k.x[0] == (4, 16, 20, 20)]
    assert tuned and all(g.plan is not None and g.timings for g in tuned)
    assert all(g.plan == min(g.timings, key=g.timings.get) for g in tuned)


def test_graph_cache_hits(algo, backend):
    x = device(backend, host((3, 5, 11, 11), E.float32, 0))
    w = device(backend, host((7, 5, 3, 3), E.float32, 1))
    p = make_params("cuda", E.float32, x, w, None, (1, 1), (1, 1), (1, 1), False, (0, 0), 1)
    algo.forward(x, w, None, p)
    size, hits = len(algo.graphs), algo.graphs.hits
    for _ in range(3):
        algo.forward(x, w, None, p)
    assert len(algo.graphs) == size and algo.graphs.hits == hits + 3


def test_runs_on_the_current_stream(algo, backend):
    x = device(backend, host((2, 3, 9, 9), E.float32, 0))
    w = device(backend, host((4, 3, 3, 3), E.float32, 1))
    p = make_params("cuda", E.float32, x, w, None, (1, 1), (0, 0), (1, 1), False, (0, 0), 1)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        y = algo.forward(x, w, None, p)
        assert algo.handles._streams[0] == stream.ptr
    stream.synchronize()
    assert_close(back(backend, y), REFERENCE.forward(back(backend, x), back(backend, w), None,
                                                     ref_params(p)), E.float32, "stream")


def test_declined_build_falls_back_and_explains(algo, backend, monkeypatch):
    from ember_cuda.cudnn import algorithm
    from ember_cuda.cudnn.graphs import Declined

    def refuse(fe, key, handle):
        raise Declined("cuDNN declined the fprop graph: test")
    monkeypatch.setattr(algorithm, "build", refuse)
    monkeypatch.setattr(algo, "_declined", {})
    x = device(backend, host((1, 3, 13, 13), E.float32, 0))
    w = device(backend, host((2, 3, 3, 3), E.float32, 1))
    p = make_params("cuda", E.float32, x, w, None, (1, 1), (1, 1), (1, 1), False, (0, 0), 1)
    try:
        y = algo.forward(x, w, None, p)
        assert_close(back(backend, y), REFERENCE.forward(back(backend, x),
                                                         back(backend, w), None,
                                                         ref_params(p)), E.float32, "fallback")
        verdict = algo.supports(p)
        assert not verdict and "test" in verdict.reason
    finally:
        for key in [k for k in algo.graphs._items if k.x[0] == (1, 3, 13, 13)]:
            del algo.graphs._items[key]


def test_version(algo):
    v = cudnn_switches.version()
    assert isinstance(v, int) and v >= 8000 and v == algo.version()
