"""The cuda backend (``ember_cuda/backend.py``) against the cpu backend.

Device-free (CI): what ``make_backend`` builds on a stand-in CuPy (``_fake_cupy``), that
every kernel of the cpu backend is compared below, and that every case runs on the cpu.

On a GPU (marked ``cuda``): every op against the cpu backend on the same inputs: the
derivative samples of ``tests/core/autograd/op_samples.py`` (float64, forward and
gradients) and the cases of ``op_cases.py`` (the other dtypes, special values, the ops
without derivatives); gradcheck in float64 for a representative set; device moves,
mixing devices, and DLPack with CuPy (and torch when it is installed with CUDA).
"""
from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from core.autograd.op_samples import SAMPLES, check_grad, tensors
from helpers import TOL, to_np

import ember as E
from ember.errors import DeviceMismatchError
from ember_cuda import memory

from ._fake_cupy import fake_cupy, fake_cupy_gpus
from .op_cases import CASES, RANDOM, default_device


@pytest.fixture
def fake(monkeypatch):
    cp = fake_cupy()
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setattr(memory, "_tracker", None)
    return cp


# ==== device-free: what make_backend builds =====================================================

def test_make_backend_builds_the_cuda_backend(fake):
    from ember_cuda import runtime
    from ember_cuda.backend import make_backend
    b = make_backend()
    assert (b.name, b.type_prefix, b.dlpack_device_type, b.device_count) == ("cuda", "CUDA", 2, 1)
    assert b.type(E.float32).name == "CUDAFloatType" and b.type(E.float16).name == "CUDAHalfType"
    assert b.xp is fake and b.array_type is np.ndarray and b.runtime is runtime
    assert type(b.kernels) is dict  # one GPU: no device guard
    # the core adds _convolution/convolution_backward at register; "into:<op>" entries are
    # optional in-place fast paths of the numpy table (codegen falls back to <op>'s kernel)
    assert set(b.kernels) >= {k for k in E.backends.registry.get_backend("cpu").kernels
                              if not k.startswith("into:")} - \
        {"_convolution", "convolution_backward"}
    assert b.unsupported == E.backends.array_api.unsupported()  # CuPy 14: bfloat16 works
    assert fake.cuda.get_allocator() is memory._tracker.malloc


def test_cupy_13_declines_bfloat16_with_the_way_out(fake):
    from ember_cuda.backend import make_backend
    fake.__version__ = "13.6.0"
    b = make_backend()
    assert all(E.bfloat16 in b.unsupported[op] for op in b.kernels)
    with pytest.raises(TypeError, match=r"cannot hold bfloat16 with CuPy 13\.6\.0.*pip "
                                        r"install -U 'ember-cuda\[cuda13\]'"):
        b.kernels["empty"]((2,), E.bfloat16.numpy)
    with pytest.raises(TypeError, match="cannot hold bfloat16"):
        b.from_numpy(np.zeros(2, E.bfloat16.numpy), None)
    with pytest.raises(ValueError, match=r"invalid CUDA device index 3: this machine has 1"):
        b.from_numpy(np.zeros(2), 3)


def test_several_gpus_get_the_device_guard(fake):
    from ember_cuda.backend import make_backend
    from ember_cuda.devices import GuardedKernels
    fake.cuda.runtime.getDeviceCount = lambda: 2
    assert isinstance(make_backend().kernels, GuardedKernels)


def test_from_numpy_copies_blocking(monkeypatch):
    # cupy.asarray's host-to-device copy is asynchronous on the current stream unless
    # blocking=True; ember.cuda.Stream is non-blocking, so another stream could read the
    # array before the data arrives (PyTorch's pageable copy is synchronous)
    from ember_cuda.backend import make_backend
    cp = fake_cupy_gpus(1)  # device arrays apart from numpy's
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setattr(memory, "_tracker", None)
    b = make_backend()
    for arr in (np.arange(6.0).reshape(2, 3), np.arange(5, dtype=np.int8)[::2], np.float32(2)):
        got = b.from_numpy(arr, None)
        assert isinstance(got, cp.ndarray) and got.dtype == np.asarray(arr).dtype
        assert np.array_equal(got, arr)
    assert cp.nonblocking_copies == []
    # CuPy fills a 0-d array with a kernel, even when blocking: from_numpy waits for it
    assert cp.synchronized == ["stream"]



# ==== the op-by-op comparison ===================================================================

def test_every_kernel_is_compared():
    # device-free: the op list of the cpu backend (native_functions.yaml's abstract ops,
    # the factories, index and index_put_) against what this file runs on the GPU
    covered = {s.op for s in SAMPLES} | {c.op for c in CASES} | set(RANDOM)  # test_rng.py
    ops = {k for k in E.backends.registry.get_backend("cpu").kernels
           if not k.startswith("into:")}  # optional numpy fast paths of in-place ops
    missing = sorted(ops - covered)
    assert not missing, f"kernels never compared on the GPU: {missing}"
    assert len({c.id for c in CASES}) == len(CASES)


def _run(fn, inputs, device):
    with default_device(device):
        return fn(*[E.tensor(a) for a in inputs])


def _tensors(out) -> list:
    if isinstance(out, E.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return []


def assert_same(got, want, tol=None):
    """``got`` (cuda) equals ``want`` (cpu): shapes, dtypes, values at the dtype's tolerance
    (exact for integers and bools)."""
    if not isinstance(want, (E.Tensor, tuple, list)):
        assert got == want
        return
    gs, ws = _tensors(got), _tensors(want)
    assert len(gs) == len(ws)
    for g, w in zip(gs, ws):
        assert g.device.type == "cuda" and w.device.type == "cpu"
        assert g.dtype is w.dtype and tuple(g.shape) == tuple(w.shape)
        if w.dtype.is_floating_point:
            rtol, atol = tol or ((1e-10, 1e-12) if w.dtype is E.float64 else TOL[w.dtype])
            np.testing.assert_allclose(to_np(g), to_np(w), rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(to_np(g), to_np(w))


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_case_runs_on_cpu(c):
    # device-free: keeps the table valid where there is no GPU
    _tensors(_run(c.fn, c.inputs, "cpu"))


@pytest.fixture
def cuda():
    cupy = pytest.importorskip("cupy")
    backend = E.backends.registry.get_backend("cuda")
    return types.SimpleNamespace(cupy=cupy, backend=backend,
                                 bf16=E.bfloat16 not in backend.unsupported.get("add", ()))


@pytest.mark.cuda
@pytest.mark.parametrize("c", CASES, ids=lambda c: c.id)
def test_case_matches_cpu(cuda, c):
    if not cuda.bf16 and any(getattr(a, "dtype", None) == E.bfloat16.numpy for a in c.inputs):
        pytest.skip("this CuPy has no bfloat16 (CuPy >= 14 has)")
    assert_same(_run(c.fn, c.inputs, "cuda"), _run(c.fn, c.inputs, "cpu"), c.tol)


def _forward_and_grads(sample, device):
    with default_device(device):
        xs = tensors(sample)
        out = _tensors(sample.fn(*xs))
        floats = [o for o in out if o.is_floating_point() and o.requires_grad]
        rng = np.random.default_rng(0)
        weights = [E.tensor(rng.standard_normal(tuple(o.shape))) for o in floats]
        grads = E.autograd.grad(floats, xs, weights, allow_unused=True) if floats else []
    return out, [g for g in grads if g is not None]


@pytest.mark.cuda
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_sample_and_gradients_match_cpu(cuda, sample):
    got, got_grads = _forward_and_grads(sample, "cuda")
    want, want_grads = _forward_and_grads(sample, "cpu")
    assert_same(got, want)
    assert_same(got_grads, want_grads)


GRADCHECK = ("add-broadcast_3x1_4", "mul-inplace_on_view", "div-broadcast", "pow-tensor_tensor",
             "exp-2x3", "log-inplace_on_view", "sigmoid-2x3", "gelu-none", "sum-dims_0_2",
             "max.dim-dim_1", "var-dim_1", "norm-p_3_dims_0_2", "softmax-dim_0",
             "logsumexp-dim_1", "sort-dim_-1", "matmul-batch_broadcast_both",
             "addmm-beta_alpha", "einsum-batched_three", "index-two_adv_broadcast",
             "index_put_-accumulate_repeated", "gather-dim_1_repeated",
             "scatter_add-repeated", "cat-dim_0_three", "expand-3x1_to_2x3x4",
             "_convolution-2d_pad_bias", "convolution_backward-1d_all_outputs",
             "max_pool2d_with_indices-overlap_pad_ceil")


@pytest.mark.cuda
@pytest.mark.parametrize("sample", [s for s in SAMPLES if s.id in GRADCHECK],
                         ids=lambda s: s.id)
def test_gradcheck_float64_on_the_gpu(cuda, sample):
    with default_device("cuda"):
        assert check_grad(sample)


def test_gradcheck_samples_exist():
    assert len([s for s in SAMPLES if s.id in GRADCHECK]) == len(GRADCHECK)


@pytest.mark.cuda
def test_device_moves(cuda):
    x = E.arange(6.0).reshape(2, 3).requires_grad_()
    y = x.to("cuda")
    assert y.device == E.Device("cuda", 0) and y.type().name == "CUDAFloatType"
    assert y.to("cuda") is y and y.to("cuda:0") is y and x.cuda().device.type == "cuda"
    assert x.cuda(0).device.index == 0
    assert (y.cpu().detach().numpy() == x.detach().numpy()).all()
    h = y.to(E.float16)
    assert h.device.type == "cuda" and h.type().name == "CUDAHalfType"
    back = y.to("cpu", E.float64)
    assert back.device.type == "cpu" and back.dtype is E.float64
    (y * y).sum().backward()  # the gradient flows back through the copy to the cpu leaf
    assert x.grad.device.type == "cpu" and (x.grad.numpy() == 2 * x.detach().numpy()).all()
    t = E.tensor([[1, 2], [3, 4]], device="cuda")
    assert t.device.type == "cuda" and t.tolist() == [[1, 2], [3, 4]] and t.sum().item() == 10
    assert E.zeros(2, 2, device="cuda:0").device == E.Device("cuda:0")


@pytest.mark.cuda
def test_copy_between_two_gpus(cuda):
    if E.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    x = E.arange(4.0, device="cuda:0")
    z = x.to("cuda:1")
    assert z.device == E.Device("cuda:1") and z.tolist() == x.tolist()
    assert (z + z).device == E.Device("cuda:1")
    assert x.clone().copy_(z * 2).tolist() == [0.0, 2.0, 4.0, 6.0]  # copy_ across GPUs
    with pytest.raises(DeviceMismatchError, match="cuda:0 and cuda:1"):
        x + z
    with pytest.raises(DeviceMismatchError):
        E.cat([x, z])


@pytest.mark.cuda
def test_mixing_cpu_and_cuda_raises(cuda):
    a, b = E.ones(3, device="cuda"), E.ones(3)
    for f in (lambda: a + b, lambda: b * a, lambda: E.matmul(a, b), lambda: E.cat([a, b]),
              lambda: E.where(a > 0, a, b), lambda: a[E.tensor([0, 1])],
              lambda: E.lerp(a, b, 0.5), lambda: E.gather(a, 0, E.tensor([0]))):
        with pytest.raises(DeviceMismatchError, match=r"cuda|cpu"):
            f()


@pytest.mark.cuda
def test_dlpack_with_cupy_shares_memory(cuda):
    cp = cuda.cupy
    c = cp.arange(6, dtype=cp.float32)
    t = E.from_dlpack(c)
    assert t.device.type == "cuda" and t.dtype is E.float32 and t.__dlpack_device__()[0] == 2
    c[0] = 42
    assert t[0].item() == 42
    back = cp.from_dlpack(t * 1)
    t2 = E.ones(3, device="cuda")
    view = cp.from_dlpack(t2)
    view[1] = -1
    assert t2.tolist() == [1.0, -1.0, 1.0] and back.dtype == cp.float32


@pytest.mark.cuda
def test_dlpack_with_torch_shares_memory(cuda):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    tt = torch.arange(4.0, device="cuda")
    e = E.from_dlpack(tt)
    tt[0] = 9.0
    torch.cuda.synchronize()
    assert e.device.type == "cuda" and e[0].item() == 9.0
    back = torch.from_dlpack(e)
    back[1] = -1.0
    torch.cuda.synchronize()
    assert e[1].item() == -1.0 and back.device.type == "cuda"
