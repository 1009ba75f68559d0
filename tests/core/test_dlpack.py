"""DLPack both ways against torch (``ember.from_dlpack``, ``Tensor.__dlpack__``): every
ember dtype, bfloat16 included (``ember/_dlpack.py``), contiguous or strided, 0-d and
empty; values equal bit for bit and memory shared, as ``torch.from_dlpack`` shares it."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import requires_torch

import ember as E
import ember.types as T

try:
    import torch
except ImportError:   # the tests that use it are marked requires_torch: they skip
    torch = None

DTYPES = [T.bool_, T.uint8, T.int8, T.int16, T.int32, T.int64, T.float16, T.bfloat16,
          T.float32, T.float64]
SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 4)]


def _torch_dtype(st):
    return getattr(torch, st.name)


def _torch_tensor(st, shape, seed=0):
    """Random bytes as a torch tensor of ``st``: for floats every bit pattern (nan, inf,
    subnormals and -0.0 included); bools are 0 or 1."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if st is T.bool_:
        return torch.from_numpy(rng.integers(0, 2, n).astype(bool)).reshape(shape)
    raw = np.frombuffer(rng.bytes(n * st.itemsize), dtype=np.uint8).copy()
    if n == 0:
        return torch.empty(shape, dtype=_torch_dtype(st))
    return torch.from_numpy(raw).view(_torch_dtype(st)).reshape(shape)


def _bits(t):
    """A torch tensor's bytes, so nan payloads and -0.0 compare too."""
    if t.numel() == 0:
        return b""
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def _ember_bits(e):
    return e.contiguous().numpy().tobytes()


@requires_torch
@pytest.mark.parametrize("st", DTYPES, ids=lambda s: s.name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_torch_to_ember_shares_memory(st, shape):
    src = _torch_tensor(st, shape)
    e = E.from_dlpack(src)
    assert e.dtype is st and tuple(e.shape) == shape
    assert e.numpy().tobytes() == _bits(src)
    if src.numel():
        assert e.numpy().__array_interface__["data"][0] == src.data_ptr()   # no copy


@requires_torch
@pytest.mark.parametrize("st", DTYPES, ids=lambda s: s.name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_ember_to_torch_shares_memory(st, shape):
    e = E.from_dlpack(_torch_tensor(st, shape, seed=1)).clone()
    t = torch.from_dlpack(e)
    assert t.dtype == _torch_dtype(st) and tuple(t.shape) == shape
    assert _bits(t) == e.numpy().tobytes()
    if t.numel():
        assert t.data_ptr() == e.numpy().__array_interface__["data"][0]


@requires_torch
@pytest.mark.parametrize("st", [T.bfloat16, T.float16, T.int32], ids=lambda s: s.name)
def test_strided_views_both_ways(st):
    base = _torch_tensor(st, (4, 6), seed=2)
    for view in (base.t(), base[:, ::2], base[1:, 2:5].t(), base[2]):
        e = E.from_dlpack(view)
        assert tuple(e.shape) == tuple(view.shape) and tuple(e.stride()) == view.stride()
        assert _ember_bits(e) == _bits(view)
    e = E.from_dlpack(_torch_tensor(st, (4, 6), seed=3)).clone()
    for view in (e.t(), e[:, ::2], e[1:, 2:5].t(), e[2]):
        t = torch.from_dlpack(view)
        assert tuple(t.shape) == tuple(view.shape) and t.stride() == tuple(view.stride())
        assert _bits(t) == _ember_bits(view)


@requires_torch
def test_bfloat16_writes_show_through_both_ways():
    src = torch.tensor([1.5, -2.0, 3.25], dtype=torch.bfloat16)
    e = E.from_dlpack(src)
    src[0] = 7.0
    assert e.tolist() == [7.0, -2.0, 3.25]
    back = torch.from_dlpack(e)
    back[1] = 0.5
    assert e.tolist() == [7.0, 0.5, 3.25] and src.tolist() == [7.0, 0.5, 3.25]
    zero_d = E.tensor(2.5).to(E.bfloat16)
    t = torch.from_dlpack(zero_d)
    t.fill_(-1.0)
    assert zero_d.item() == -1.0 and t.dim() == 0


@requires_torch
def test_bfloat16_round_trip_keeps_the_tensor_the_same_memory():
    src = torch.arange(6, dtype=torch.bfloat16).reshape(2, 3)
    again = torch.from_dlpack(E.from_dlpack(src))
    assert again.data_ptr() == src.data_ptr() and torch.equal(again, src)


class _LegacyProducer:
    """A pre-1.0 DLPack producer: ``__dlpack__(stream=None)`` only, an unversioned
    ``"dltensor"`` capsule (consumers retry without ``max_version``)."""

    def __init__(self, t):
        self.t = t

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__()


@requires_torch
def test_bfloat16_through_unversioned_capsules_both_ways():
    src = torch.tensor([[1.5, -2.0], [3.25, 0.0]], dtype=torch.bfloat16)
    e = E.from_dlpack(_LegacyProducer(src.t()))   # (read-only: numpy's rule for these)
    assert e.tolist() == src.t().tolist() and e.dtype is E.bfloat16
    assert e.numpy().__array_interface__["data"][0] == src.data_ptr()
    mine = E.from_dlpack(src).t()
    capsule = mine.__dlpack__()                     # no max_version: a "dltensor" capsule
    back = torch.utils.dlpack.from_dlpack(capsule)
    assert back.dtype == torch.bfloat16 and torch.equal(back, src.t())
    assert back.data_ptr() == src.data_ptr()


def test_numpy_still_refuses_bfloat16_with_its_own_error():
    """numpy has no bfloat16: its own ``from_dlpack`` of an ember bfloat16 tensor fails
    as it does for torch's; ember's does not."""
    e = E.ones(2, dtype=E.bfloat16)
    with pytest.raises((RuntimeError, BufferError, TypeError)):
        np.from_dlpack(e)
    assert E.from_dlpack(e).tolist() == [1.0, 1.0]


@pytest.mark.cuda
def test_bfloat16_on_cuda_both_ways():
    x = E.arange(6, device="cuda").to(E.bfloat16).reshape(2, 3)
    y = E.from_dlpack(x.t())
    assert y.device == x.device and y.dtype is E.bfloat16
    assert y.cpu().tolist() == x.t().cpu().tolist()
    y.add_(1)
    assert x.cpu().tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_a_bfloat16_export_that_cannot_be_relabelled_raises(monkeypatch):
    # the capsule carries the 16-bit pattern as uint16 until relabelled: if that fails, a
    # consumer would read bfloat16 data as integers, so the export raises instead
    from ember import _dlpack
    monkeypatch.setattr(_dlpack, "_relabel", lambda capsule, src, dst: False)
    with pytest.raises(RuntimeError, match="could not mark the exported capsule as bfloat16"):
        E.ones(3, dtype=E.bfloat16).__dlpack__()
