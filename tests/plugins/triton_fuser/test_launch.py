"""launch.py: CuPy arrays as Triton pointers, and Triton's driver on CuPy's device/stream.

Device-free (CI): the pointer shim against ``triton.runtime.jit.mangle_type``, capability
parsing and the installed driver on ``_fake_cupy.FakeGPUs`` (two fake devices, streams
per device), with Triton's ``CudaUtils`` (it compiles against libcuda) replaced by a stub
and torch hidden from ``sys.modules``. Marked ``cuda``: the real driver launching a kernel
on a CuPy stream.
"""
import os
import sys
import threading
import types

import numpy as np
import pytest

import ember as E
from ember_triton_fuser import launch
from ember_triton_fuser.launch import (DevicePointer, DriverUnavailable, as_pointer,
                                       device_capability, ensure_driver, pointer_dtype_name,
                                       restore_driver, stream_getter)

from ..cuda._fake_cupy import FakeGPUs

MANGLED = {"bool": "*i8", "uint8": "*u8", "int8": "*i8", "int16": "*i16", "int32": "*i32",
           "int64": "*i64", "float16": "*fp16", "bfloat16": "*bf16", "float32": "*fp32",
           "float64": "*fp64"}


def fake_array(dtype, ptr=0x7F0000001000, device=0):
    """What DevicePointer reads of a CuPy array: ``.data.ptr``, ``.data.device_id``,
    ``.dtype``."""
    return types.SimpleNamespace(data=types.SimpleNamespace(ptr=ptr, device_id=device),
                                 dtype=np.dtype(dtype))


# ---- the pointer shim -----------------------------------------------------------------------
@pytest.mark.parametrize("st", E.types.all_scalar_types, ids=lambda s: s.name)
def test_pointer_dtype_and_mangled_type(st):
    from triton.runtime.jit import mangle_type
    p = as_pointer(fake_array(st.numpy))
    assert p.dtype == pointer_dtype_name(st) == pointer_dtype_name(st.numpy)
    assert p.dtype == ("int8" if st is E.bool_ else st.name)
    assert mangle_type(p) == MANGLED[st.name]


def test_data_ptr_and_device():
    arr = fake_array(np.float32, ptr=0x7F0000001234, device=1)
    p = DevicePointer(arr)
    assert p.data_ptr() == 0x7F0000001234 and isinstance(p.data_ptr(), int)
    assert p.device_index == 1 and p.array is arr
    assert repr(p) == "DevicePointer(0x7f0000001234, dtype=float32)"
    assert as_pointer(arr, 16).data_ptr() == 0x7F0000001244  # a piece's byte offset


def test_pointer_refuses_host_arrays_and_other_dtypes():
    with pytest.raises(TypeError, match="expected a CuPy ndarray.*numpy.ndarray"):
        as_pointer(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match="no Triton pointer type for dtype 'complex64'"):
        as_pointer(fake_array(np.complex64))
    with pytest.raises(TypeError, match="'float128'"):
        pointer_dtype_name("float128")


# ---- CuPy stand-in ------------------------------------------------------------------------
@pytest.fixture
def gpus(monkeypatch):
    """FakeGPUs as ``cupy``: devices 0 and 1 of compute capability 9.0 and 8.6; the null
    stream's handle is 0, as CUDA's legacy default stream is."""
    fake = FakeGPUs(count=2)
    fake.cuda.Stream.null.ptr = 0
    fake.caps = {0: "90", 1: "86"}
    fake.cuda.Device.compute_capability = property(lambda d: fake.caps[d.id])
    monkeypatch.setitem(sys.modules, "cupy", fake)
    return fake


@pytest.mark.parametrize("cc, expected", [("90", (9, 0)), ("86", (8, 6)), ("120", (12, 0)),
                                          ("100", (10, 0)), ("75", (7, 5))])
def test_device_capability(gpus, cc, expected):
    gpus.caps[1] = cc
    assert device_capability(1) == expected
    assert device_capability(0) == (9, 0)


def test_device_capability_errors(gpus):
    with pytest.raises(ValueError, match="index 2: 2 visible"):
        device_capability(2)
    with pytest.raises(TypeError, match="got bool"):
        device_capability(True)
    gpus.caps[0] = "sm_90"
    with pytest.raises(RuntimeError, match="'sm_90'"):
        device_capability(0)


def test_no_cupy(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    with pytest.raises(DriverUnavailable, match="needs CuPy"):
        device_capability(0)


# ---- the stream Triton launches on --------------------------------------------------------
def test_stream_follows_cupy(gpus, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # torch not installed
    get = stream_getter(gpus, lambda: pytest.fail("no torch: nothing to defer to"))
    assert get(0) == 0
    s = gpus.cuda.Stream()
    with s:
        assert get(0) == s.ptr != 0
        assert get(1) == 0  # streams are per device
    assert get(0) == 0


def test_stream_defers_to_torch_only_on_the_null_stream(gpus, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    asked = []
    get = stream_getter(gpus, lambda: asked.append(1) or (lambda device: 1000 + device))
    assert get(0) == 1000 and get(1) == 1001 and asked == [1]  # chosen once
    s = gpus.cuda.Stream()
    with s:
        assert get(0) == s.ptr
    cpu_torch = stream_getter(gpus, lambda: None)  # torch without CUDA: keep CuPy's
    assert cpu_torch(0) == 0


def test_torch_stream_function_prefers_previous_driver(monkeypatch):
    previous = types.SimpleNamespace(get_current_stream=lambda d: 7)
    assert launch._torch_stream_function(previous) is previous.get_current_stream
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(
        version=types.SimpleNamespace(cuda=None)))
    assert launch._torch_stream_function(None) is None


# ---- the installed driver -----------------------------------------------------------------
class StubCudaUtils:
    """Triton's CudaUtils compiles driver.c against libcuda; the driver only stores it."""

    made = 0

    def __init__(self):
        StubCudaUtils.made += 1


@pytest.fixture
def triton_driver(gpus, monkeypatch):
    """Triton's driver config with a stub CudaUtils, restored after the test, and
    launch.py's record of what it installed reset."""
    import triton.backends.nvidia.driver as nvidia
    from triton.runtime.driver import driver as config
    monkeypatch.setattr(nvidia, "CudaUtils", StubCudaUtils)
    StubCudaUtils.made = 0
    for name in ("_installed", "_previous"):
        monkeypatch.setattr(launch, name, None)
    saved = dict(vars(config))
    yield config
    vars(config).clear()
    vars(config).update(saved)


def test_driver_uses_cupy_without_torch(triton_driver, gpus, monkeypatch):
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.driver import CudaDriver
    monkeypatch.setitem(sys.modules, "torch", None)  # any `import torch` would raise
    ensure_driver()
    d = triton_driver.active
    assert isinstance(d, CudaDriver) and isinstance(d.utils, StubCudaUtils)
    assert d.launcher_cls is not None
    assert d.get_current_device() == 0
    d.set_current_device(1)
    assert gpus.current == 1 and d.get_current_device() == 1
    assert d.get_device_capability(1) == (8, 6)
    assert d.get_current_target() == GPUTarget("cuda", 86, 32)
    s = gpus.cuda.Stream()
    with s:
        assert d.get_current_stream(1) == s.ptr
        assert d.get_current_stream(0) == 0
    assert d.get_current_stream(1) == 0
    assert sys.modules["torch"] is None


def test_driver_installed_once_and_again_after_replacement(triton_driver):
    threads = [threading.Thread(target=ensure_driver) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ours = triton_driver.active
    assert StubCudaUtils.made == 1
    ensure_driver()
    assert triton_driver.active is ours and StubCudaUtils.made == 1
    other = types.SimpleNamespace(get_current_stream=lambda d: 5)
    triton_driver.set_active(other)
    ensure_driver()
    assert triton_driver.active is not other and triton_driver.active.previous is other
    restore_driver()
    assert triton_driver.active is other


def test_restore_without_previous_defers_default(triton_driver, monkeypatch):
    monkeypatch.setitem(vars(triton_driver), "_active", None)
    ensure_driver()
    restore_driver()
    assert vars(triton_driver)["_active"] is None  # Triton builds its default on next use
    restore_driver()  # nothing installed: no-op


def test_torch_users_keep_their_stream(triton_driver, gpus, monkeypatch):
    # A bare module: GPUDriver.__init__ would fail on `torch.cuda`. With torch imported,
    # Triton 3.9's CudaDriver.__init__ calls super().__init__() as 3.4-3.8 always do, so
    # this also checks that the driver skips GPUDriver.__init__.
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    triton_driver.set_active(types.SimpleNamespace(get_current_stream=lambda d: 4242))
    ensure_driver()
    d = triton_driver.active
    assert d.get_current_stream(0) == 4242
    s = gpus.cuda.Stream()
    with s:
        assert d.get_current_stream(0) == s.ptr


def test_unavailable_driver(triton_driver, monkeypatch):
    import triton.backends.nvidia.driver as nvidia

    def no_libcuda():
        raise AssertionError("libcuda.so cannot found!")
    monkeypatch.setattr(nvidia, "CudaUtils", no_libcuda)
    with pytest.raises(DriverUnavailable, match="AssertionError: libcuda.so cannot found"):
        ensure_driver()
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(DriverUnavailable, match="needs CuPy"):
        ensure_driver()


# ---- on a GPU -----------------------------------------------------------------------------
def _double_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def double(x_ptr, out_ptr, flag_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        x = tl.load(x_ptr + i, mask=m)
        tl.store(out_ptr + i, x * 2, mask=m)
        tl.store(flag_ptr + i, (x > 0).to(tl.int8), mask=m)
    return double


@pytest.mark.cuda
@pytest.mark.skipif(os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"),
                    reason="TRITON_INTERPRET runs kernels on host memory")
def test_launch_on_cupy_stream():
    import cupy
    import triton.runtime.driver as rd
    ensure_driver()
    x = cupy.arange(-500, 500, dtype=cupy.float32)
    out, flag = cupy.empty_like(x), cupy.empty(x.shape, dtype=cupy.bool_)
    double = _double_kernel()
    with cupy.cuda.Stream(non_blocking=True) as s:
        assert rd.driver.active.get_current_stream(cupy.cuda.runtime.getDevice()) == s.ptr
        double[(4,)](as_pointer(x), as_pointer(out), as_pointer(flag), x.size, BLOCK=256)
    s.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(out), cupy.asnumpy(x) * 2)
    np.testing.assert_array_equal(cupy.asnumpy(flag), cupy.asnumpy(x) > 0)
    major, minor = device_capability(cupy.cuda.runtime.getDevice())
    assert rd.driver.active.get_current_target().arch == major * 10 + minor
