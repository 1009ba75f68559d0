"""``Tensor.copy_`` between devices (the ``cross_device`` key of native_functions.yaml):
``src`` is transferred to self's device first, as ``torch.Tensor.copy_`` does, while every
other op keeps refusing tensors of two devices. Device-free: a second numpy-backed backend
named ``alt`` stands in for another device; values are compared with numpy."""
import numpy as np
import pytest

import ember as E
from ember.ops import codegen
from ember.ops.native import load
from ember.ops.schema import SchemaError


def test_copy_from_another_device_transfers_broadcasts_and_casts(alt):
    dst = E.zeros(2, 3, device="alt")
    src = E.tensor([1.5, -2.5, 3.0], dtype=E.float64)
    assert dst.copy_(src) is dst and dst.device == E.Device("alt")
    want = np.broadcast_to(np.array([1.5, -2.5, 3.0]).astype(np.float32), (2, 3))
    np.testing.assert_array_equal(dst.to("cpu").numpy(), want)
    back = E.zeros(3, dtype=E.int64)
    back.copy_(E.tensor([7.9, -1.2, 0.5], device="alt"))
    np.testing.assert_array_equal(back.numpy(), np.array([7.9, -1.2, 0.5]).astype(np.int64))
    assert dst._version == 1 and back._version == 1
    src[0] = 100.0  # a copy, not a view of src
    assert dst.tolist()[0][0] == 1.5


def test_failed_copy_across_devices_leaves_self_unchanged(alt):
    dst = E.tensor([1.0, 2.0, 3.0], device="alt")
    with pytest.raises(E.ShapeError, match=r"copy_\(\): src of shape \[2\] cannot be expanded "
                                           r"to the destination shape \[3\]"):
        dst.copy_(E.ones(2))
    view = E.zeros(1, device="alt").expand(3)
    with pytest.raises(RuntimeError, match="expand"):
        view.copy_(E.ones(3))
    assert dst.tolist() == [1.0, 2.0, 3.0] and dst._version == 0
    assert view.tolist() == [0.0, 0.0, 0.0]


def test_gradient_flows_back_to_the_source_device(alt):
    src = E.tensor([1.0, 2.0, 3.0], requires_grad=True)
    dst = E.zeros(3, device="alt", requires_grad=True) * 1
    dst.copy_(src)
    w = np.array([1.0, -2.0, 0.5], np.float32)
    (dst * E.tensor(w, device="alt")).sum().backward()
    assert src.grad.device == E.Device("cpu")
    np.testing.assert_array_equal(src.grad.numpy(), w)


def test_other_ops_still_refuse_two_devices(alt):
    a, b = E.ones(3, device="alt"), E.ones(3)
    for f in (lambda: a + b, lambda: b.add_(a), lambda: E.cat([a, b]),
              lambda: b.masked_fill_(a > 0, 2.0), lambda: E.where(b > 0, a, b)):
        with pytest.raises(E.DeviceMismatchError, match=r"alt|cpu"):
            f()
    assert b.tolist() == [1.0, 1.0, 1.0]


def test_only_copy_is_declared_cross_device():
    declared = {nf.name: nf.cross_device for nf in load() if nf.cross_device}
    assert declared == {"copy_": ("src",)}
    assert "src = _to_device_of(_T, src, self)" in codegen.source_of("copy_")
    assert "_to_device_of" not in codegen.source_of("add")


@pytest.mark.parametrize("entry,words", [
    ("- func: f(Tensor self, Tensor src) -> Tensor\n  cross_device: other\n",
     "cross_device names 'other', which is not a Tensor argument of f"),
    ("- func: f(Tensor self, Tensor src) -> Tensor\n  cross_device: self\n",
     "cross_device names 'self'"),
])
def test_cross_device_entries_are_validated(entry, words):
    with pytest.raises(SchemaError, match=words):
        load("bad.yaml", text=entry)
