"""The generated call path: argument checks, promotion, device checks, out= and in-place."""
import numpy as np
import pytest

import ember as E
from ember import dispatch
from ember.backends import registry


def test_device_mismatch_names_both_devices_and_the_way_out(alt):
    x, y = E.ones(2), E.ones(2, device="alt")
    assert y.type().name == "AltFloatType" and y.device == E.Device("alt")
    with pytest.raises(E.DeviceMismatchError, match=r"add\(\): expected all tensors on one "
                       r"device, but 'self' is on cpu and 'other' is on alt; move one with "
                       r"\.to\('cpu'\)"):
        x + y
    assert (x + y.to("cpu")).tolist() == [2.0, 2.0]
    assert y.to("cpu").device == E.Device("cpu")


def test_out_argument_writes_resizes_and_checks_dtype():
    x = E.tensor([1.0, 2.0])
    out = E.empty(2)
    assert E.add(x, x, out=out) is out and out.tolist() == [2.0, 4.0]
    small = E.empty(0)
    E.add(x, 1, out=small)
    assert small.tolist() == [2.0, 3.0]
    wide = E.zeros(2, dtype=E.float64)
    E.add(x, x, out=wide)
    assert wide.dtype is E.float64 and wide.tolist() == [2.0, 4.0]
    bad = E.zeros(2, dtype=E.int64)
    with pytest.raises(E.DtypeError, match="result type float32 can't be cast to the desired "
                                           "output type int64"):
        E.add(x, x, out=bad)
    assert bad.tolist() == [0, 0]
    assert out._version == 1


def test_failed_inplace_leaves_tensor_unchanged():
    x = E.tensor([1, 2, 3])
    with pytest.raises(E.DtypeError, match="can't be cast to the desired output type int64"):
        x.add_(0.5)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the "
                                           r"broadcast shape \[2, 3\]"):
        x.add_(E.ones(2, 3, dtype=E.int64))
    with pytest.raises(E.ShapeError, match="shapes do not broadcast"):
        x.add_(E.ones(2, dtype=E.int64))
    assert x.tolist() == [1, 2, 3] and x._version == 0
    x += 1
    assert x.tolist() == [2, 3, 4] and x._version == 1


def test_views_share_memory_and_version_counter():
    base = E.zeros(2, 3)
    v = base.view(6)
    v.add_(1)
    assert base.tolist() == [[1.0] * 3] * 2
    assert base._version == v._version == 1
    assert v._base is base and base.view(3, 2).view(6)._base is base
    d = base.detach()
    d.add_(1)
    assert base._version == 2


def test_scalar_operands_follow_result_type():
    i8 = E.tensor([1, 2], dtype=E.int8)
    assert (i8 + 3).dtype is E.int8 and (i8 + 2.5).dtype is E.float32
    assert (E.tensor([True]) + 1).dtype is E.int64
    assert (E.tensor([1.0], dtype=E.float16) + E.tensor(1.0, dtype=E.float64)).dtype \
        is E.float16
    assert (2 - E.tensor([1.0, 5.0])).tolist() == [1.0, -3.0]
    assert E.rsub(E.tensor([1.0]), 3, alpha=2).tolist() == [1.0]


def test_argument_type_errors():
    x = E.ones(3)
    with pytest.raises(TypeError, match=r"sum\(\): argument 'keepdim' \(position 3\) must be "
                                        r"bool, not str"):
        x.sum(0, "yes")
    with pytest.raises(TypeError, match=r"argument 'dim' \(position 2\) must be tuple of ints"):
        x.sum(0.5)
    with pytest.raises(IndexError, match=r"dimension out of range \(expected to be in range "
                                         r"of \[-1, 0\], but got 3\)"):
        x.sum(3)
    with pytest.raises(TypeError, match="must be ember.dtype"):
        x.sum(dtype="float")


def test_overload_dispatcher_lists_signatures_on_mismatch():
    names = [n for n in dir(E.Tensor) if not n.startswith("_")]
    if "max" not in names:
        pytest.skip("max overloads not declared")
    with pytest.raises(TypeError, match=r"max\(\) received an invalid combination of "
                                        r"arguments - got \(Tensor, str\), but expected one of"):
        E.max(E.ones(2), "x")


def test_wrap_normalizes_numpy_scalars_to_arrays():
    b = registry.get_backend("cpu")
    t = dispatch.wrap(np.float32(2.0), b)
    assert isinstance(t._data, np.ndarray) and t.shape == () and t.dtype is E.float32
