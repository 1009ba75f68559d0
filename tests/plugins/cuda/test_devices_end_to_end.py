"""Device indices through ember's API: factories on ``cuda:1``, ``ember.tensor`` of a CuPy
array, ``copy_`` between cpu and cuda, and backward across devices.

Device-free (CI): the real ``make_backend`` on ``_fake_cupy.fake_cupy_gpus`` (two fake
devices whose arrays know where they were made), registered as the ``cuda`` backend for
the test. Values are compared with numpy. On a GPU (marked ``cuda``) the same on real
CuPy, the two-device checks only with two GPUs.

Reference: PyTorch's factories (``device=`` under a ``DeviceGuard``), ``torch.tensor`` /
``torch.as_tensor`` of a CuPy array (``__cuda_array_interface__``), ``Tensor.copy_``, the
autograd engine (``validate_outputs``, a node run under its device's guard).
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

import ember as E
from ember.backends import registry
from ember.errors import DeviceMismatchError
from ember.plugins import manager
from ember_cuda import memory

from ._fake_cupy import fake_cupy_gpus

FACTORIES = {
    "zeros": lambda d: E.zeros(2, 3, device=d),
    "ones": lambda d: E.ones(4, device=d),
    "empty": lambda d: E.empty(3, device=d),
    "full": lambda d: E.full((2,), 7, device=d),
    "arange": lambda d: E.arange(5, device=d),
    "linspace": lambda d: E.linspace(0, 1, 5, device=d),
    "eye": lambda d: E.eye(3, device=d),
    "rand": lambda d: E.rand(3, device=d),
    "randn": lambda d: E.randn(3, device=d),
    "randint": lambda d: E.randint(0, 5, (3,), device=d),
    "tensor": lambda d: E.tensor([1.0, 2.0], device=d),
}


@pytest.fixture
def gpus(monkeypatch):
    """Two fake GPUs behind the real cuda backend, registered as ``cuda`` for the test."""
    manager.ensure_loaded()  # before cupy is faked: the real plugin must not see the fake
    cp = fake_cupy_gpus(2)
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setattr(memory, "_tracker", None)
    # a fresh default generator: one made in another test drew from that test's fake
    monkeypatch.delitem(E.random._default_generators, "cuda", raising=False)
    from ember_cuda.backend import make_backend
    saved = registry._backends.get("cuda")
    registry.register(make_backend())
    yield cp
    registry.unregister("cuda")
    if saved is not None:
        registry._backends["cuda"] = saved


# ==== 1. factories allocate on the device they are given ========================================

@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_allocate_on_the_indexed_device(gpus, name):
    t = FACTORIES[name]("cuda:1")
    assert t.device == E.Device("cuda", 1) and t._data.data.device_id == 1
    assert gpus.current == 0                          # the guard restored the current device
    assert FACTORIES[name]("cuda").device == E.Device("cuda", 0)   # no index: current


def test_factory_values_and_likes_on_device_1(gpus):
    assert E.arange(5, device="cuda:1").cpu().numpy().tolist() == list(range(5))
    np.testing.assert_array_equal(E.eye(3, device="cuda:1").cpu().numpy(), np.eye(3))
    x = E.full((2, 2), 3.5, device="cuda:1")
    np.testing.assert_array_equal(x.cpu().numpy(), np.full((2, 2), 3.5, np.float32))
    for like in (E.zeros_like, E.ones_like, E.empty_like, E.rand_like, E.randn_like):
        assert like(x).device == E.Device("cuda:1"), like.__name__
    assert E.full_like(x, 2).device == E.Device("cuda:1")
    assert E.randint_like(x, 4).device == E.Device("cuda:1")
    assert (x + 1).device == E.Device("cuda:1")       # ops follow their operands' device


def test_default_device_index_is_honoured(gpus):
    registry.set_default_device("cuda:1")
    try:
        assert E.zeros(2).device == E.Device("cuda:1")
        assert E.tensor([1, 2]).device == E.Device("cuda:1")
    finally:
        registry._default.device = None


def test_factories_refuse_a_device_that_does_not_exist(gpus):
    with pytest.raises(ValueError, match=r"invalid CUDA device index 2: this machine has 2 "
                                         r"visible device\(s\), cuda:0 to cuda:1"):
        E.zeros(3, device="cuda:2")
    assert gpus.current == 0


# ==== 2. ember.tensor / as_tensor of a CuPy array ===============================================

def test_tensor_of_a_cupy_array_copies_it_on_its_device(gpus):
    with gpus.cuda.Device(1):
        a = gpus.asarray(np.arange(6.0).reshape(2, 3))
    assert a.data.device_id == 1
    t = E.tensor(a)
    assert t.device == E.Device("cuda:1") and t.dtype is E.float64 and t.shape == (2, 3)
    assert not np.shares_memory(t._data, a)            # torch.tensor copies
    a[0, 0] = 42.0
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(6.0).reshape(2, 3))
    h = E.tensor(a, dtype=E.float32, device="cpu", requires_grad=True)
    assert h.device == E.Device("cpu") and h.dtype is E.float32 and h.requires_grad
    assert h.is_leaf and h.tolist()[0] == [42.0, 1.0, 2.0]
    assert E.tensor(a, device="cuda:0").device == E.Device("cuda:0")
    assert E.tensor(a, dtype=E.int32).device == E.Device("cuda:1")


def test_as_tensor_of_a_cupy_array_shares_memory(gpus):
    with gpus.cuda.Device(1):
        a = gpus.asarray(np.arange(3, dtype=np.float32))
    t = E.as_tensor(a)
    assert t.device == E.Device("cuda:1") and t._data is a
    cast = E.as_tensor(a, dtype=E.float64)
    assert cast.device == E.Device("cuda:1") and cast.dtype is E.float64
    assert not np.shares_memory(cast._data, a)


# ==== 3. copy_ across devices ===================================================================

def test_copy_between_cpu_and_cuda_transfers(gpus):
    d = E.zeros(3, device="cuda:1")
    assert d.copy_(E.tensor([1.0, 2.0, 3.0])) is d
    assert d.device == E.Device("cuda:1") and d._data.data.device_id == 1
    np.testing.assert_array_equal(d.cpu().numpy(), [1.0, 2.0, 3.0])
    h = E.zeros(2, 3, dtype=E.int64)
    h.copy_(E.tensor([1.5, -2.5, 3.0], device="cuda:1"))    # broadcast and cast, as numpy
    np.testing.assert_array_equal(h.numpy(), np.broadcast_to(
        np.array([1.5, -2.5, 3.0]).astype(np.int64), (2, 3)))
    assert h._version == 1


def test_failed_copy_across_devices_leaves_self_unchanged(gpus):
    d = E.tensor([1.0, 2.0, 3.0], device="cuda:1")
    with pytest.raises(E.ShapeError, match=r"copy_\(\): src of shape \[4\] cannot be expanded "
                                           r"to the destination shape \[3\]"):
        d.copy_(E.ones(4))
    assert d.tolist() == [1.0, 2.0, 3.0] and d._version == 0


def test_copy_across_devices_propagates_gradients_to_the_source_device(gpus):
    src = E.tensor([1.0, 2.0, 3.0], requires_grad=True)
    d = E.zeros(3, device="cuda:1") * 1
    d.copy_(src)
    loss = (d * E.tensor([1.0, 2.0, 3.0], device="cuda:1")).sum()
    loss.backward()  # its seed gradient is made on cuda:1, not on the current cuda:0
    assert src.grad.device == E.Device("cpu") and src.grad.tolist() == [1.0, 2.0, 3.0]


def test_backward_of_a_loss_on_device_1_seeds_there(gpus):
    x = E.tensor([1.0, -2.0], device="cuda:1", requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.device == E.Device("cuda:1") and x.grad.tolist() == [2.0, -4.0]


def test_other_ops_still_refuse_mixed_devices(gpus):
    a, b = E.ones(3, device="cuda:1"), E.ones(3)
    for f in (lambda: a + b, lambda: b.add_(a), lambda: E.cat([a, b]),
              lambda: E.where(a > 0, a, b), lambda: b.masked_fill_(a > 0, 1.0)):
        with pytest.raises(DeviceMismatchError, match=r"cuda:1|cpu"):
            f()
    assert b.tolist() == [1.0, 1.0, 1.0]


# ==== 4. autograd across devices ===============================================================
# A gradient lands on the exact device of the tensor it is for, and each node's backward runs
# with its gradients' device current (PyTorch's engine: validate_outputs moves a gradient to
# InputMetadata's device; a node runs on its device's thread, under a DeviceGuard).

class OnesOnCurrentDevice(E.autograd.Function):
    """``x * 2`` whose backward allocates with ``device="cuda"``: the current device."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        two = E.ones(tuple(grad.shape), dtype=grad.dtype, device="cuda") * 2
        return grad * two + E.zeros(tuple(grad.shape), dtype=grad.dtype, device="cuda")


@pytest.mark.parametrize("to", ["cuda:0", "cpu"])
def test_gradient_returns_to_the_device_of_its_tensor(gpus, to):
    x = E.tensor([1.0, -2.0], dtype=E.float64, device="cuda:1", requires_grad=True)
    y = x.to(to, dtype=E.float32)
    (y * y).sum().backward()   # _to_copy passes the gradient through: the engine moves it
    assert x.grad.device == E.Device("cuda:1") and x.grad._data.device_id == 1
    assert x.grad.dtype is E.float64 and x.grad.tolist() == [2.0, -4.0]
    assert gpus.current == 0


def test_interior_gradient_is_moved_before_its_node_runs(gpus):
    x = E.tensor([1.0, 2.0, 3.0], device="cuda:1", requires_grad=True)
    w = E.tensor([4.0, 5.0, 6.0], device="cuda:1", requires_grad=True)
    (x * w).to("cuda:0").sum().backward()   # MulBackward multiplies by w on cuda:1
    assert x.grad.device == w.grad.device == E.Device("cuda:1")
    assert x.grad.tolist() == [4.0, 5.0, 6.0] and w.grad.tolist() == [1.0, 2.0, 3.0]
    (g,) = E.autograd.grad((x * w).cpu().sum(), [x])
    assert g.device == E.Device("cuda:1") and g.tolist() == [4.0, 5.0, 6.0]


def test_backward_allocations_land_on_the_gradients_device(gpus):
    x = E.tensor([1.0, -2.0], device="cuda:1", requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(E.ones(2, device="cuda").device) or g)
    (OnesOnCurrentDevice.apply(x) * x).sum().backward()
    assert x.grad.device == E.Device("cuda:1") and x.grad.tolist() == [4.0, -8.0]
    assert seen == [E.Device("cuda:1")]      # tensor hooks run under the guard too
    assert gpus.current == 0                 # and it is restored after each node


def test_given_gradient_on_another_device_index(gpus):
    # validate_outputs: a 0-dim gradient is moved to the output's device, index included;
    # any other raises naming both devices
    x = E.tensor([1.0, -2.0], device="cuda:1", requires_grad=True)
    (x * x).sum().backward(E.tensor(0.5, dtype=E.float64, device="cuda:0"))
    assert x.grad.device == E.Device("cuda:1") and x.grad._data.device_id == 1
    assert x.grad.dtype is E.float32 and x.grad.tolist() == [1.0, -2.0]
    with pytest.raises(DeviceMismatchError, match=r"invalid gradient at index 0 - expected "
                                                  r"device cuda:1 but got cuda:0; .*"
                                                  r"\.to\('cuda:1'\)"):
        (x * 2).backward(E.ones(2, device="cuda:0"))


def test_parameter_with_new_data_keeps_its_gradient_device(gpus):
    p = E.nn.Parameter(E.zeros(2, device="cuda:1"))
    p.data = E.tensor([3.0, 4.0], device="cuda:1")
    (p.to("cuda:0") * 2).sum().backward()
    assert p.grad.device == E.Device("cuda:1") and p.grad.tolist() == [2.0, 2.0]


# ==== on a GPU ==================================================================================

@pytest.fixture
def cupy():
    return pytest.importorskip("cupy")


@pytest.mark.cuda
def test_gpu_tensor_of_cupy_array_and_copy_across_devices(cupy):
    a = cupy.arange(6, dtype=cupy.float32).reshape(2, 3)
    t = E.tensor(a)
    assert t.device.type == "cuda" and t.dtype is E.float32
    a[0, 0] = 42
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    shared = E.as_tensor(a)
    a[0, 1] = -1
    assert shared[0, 1].item() == -1
    d = E.zeros(3, device="cuda")
    d.copy_(E.tensor([1.0, 2.0, 3.0]))
    h = E.zeros(3).copy_(d * 2)
    assert d.tolist() == [1.0, 2.0, 3.0] and h.tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(E.ShapeError):
        d.copy_(E.ones(4))
    assert d.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_gpu_factories_on_device_1(cupy, name):
    if E.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    t = FACTORIES[name]("cuda:1")
    assert t.device == E.Device("cuda:1") and t._data.data.device_id == 1
    assert E.cuda.current_device() == 0
    with cupy.cuda.Device(1):
        a = cupy.ones(3)
    assert E.tensor(a).device == E.Device("cuda:1")


def test_traced_graph_output_gradient_returns_to_its_device(gpus):
    # a DifferentiableGraph's outputs record their device index as eager outputs do: a
    # gradient arriving from cuda:0 goes back to cuda:1 before the graph's backward runs
    def fn(a, b):
        return (a * b).exp()
    x = E.tensor([0.5, -1.0], dtype=E.float64, device="cuda:1", requires_grad=True)
    w = E.tensor([2.0, 3.0], dtype=E.float64, device="cuda:1", requires_grad=True)
    traced = E.jit.trace(fn, (x, w))
    for _ in range(2):
        x.grad = w.grad = None
        traced(x, w).to("cuda:0").sum().backward()
        assert x.grad.device == w.grad.device == E.Device("cuda:1")
        want = (fn(x.detach(), w.detach()) * w.detach()).tolist()
        assert x.grad.tolist() == pytest.approx(want)


def test_traced_graph_on_two_devices_keeps_their_metas_apart(gpus):
    # the forward's metas (one cached MetaGroup) are keyed by device index too: the same
    # shapes on cuda:1, then cuda:0, then cuda:1 again reduce each gradient on its device
    def fn(a, b):
        return (a * b + a).exp()
    traced = None
    for device in ("cuda:1", "cuda:0", "cuda:1"):
        x = E.tensor([0.5, -1.0], dtype=E.float64, device=device, requires_grad=True)
        w = E.tensor([[2.0, 3.0]], dtype=E.float64, device=device, requires_grad=True)
        traced = traced or E.jit.trace(fn, (x, w))
        traced(x, w).sum().backward()
        assert x.grad.device == w.grad.device == E.Device(device)
        assert x.grad._data.device_id == w.grad._data.device_id == int(device[-1])
        assert list(w.grad.shape) == [1, 2]
        want = (fn(x.detach(), w.detach()) * x.detach()).tolist()[0]
        assert w.grad.tolist()[0] == pytest.approx(want)


@pytest.mark.parametrize("convert", [lambda t: t.float(), lambda t: t.to(dtype=E.float16),
                                     lambda t: t.to("cuda:1", dtype=E.float32, copy=True)])
def test_dtype_conversion_stays_on_the_tensors_device(gpus, convert):
    # CuPy's astype allocates on the current device (cuda:0 here): the cast runs on cuda:1
    x = E.tensor([1.0, 2.0], dtype=E.float64, device="cuda:1")
    y = convert(x)
    assert y.device == E.Device("cuda:1") and y._data.device_id == 1
    assert y.tolist() == [1.0, 2.0] and gpus.current == 0
