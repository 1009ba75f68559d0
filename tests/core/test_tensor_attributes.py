"""Memory and kind attributes (tensor_attributes.py): storage_offset, data_ptr, nbytes,
itemsize, is_cpu, get_device, is_same_size, is_signed, is_complex, is_nonzero, and the
top-level function forms; values checked against PyTorch 2.x."""
import numpy as np
import pytest

import ember as E


def test_memory_layout():
    x = E.arange(12.).reshape(3, 4)
    assert x.storage_offset() == 0 and x.t().storage_offset() == 0
    assert x[1:, 2:].storage_offset() == 6 and x[2].storage_offset() == 8
    assert x[1:][1:].storage_offset() == 8  # a view of a view counts from the root
    assert x.data_ptr() == x.numpy().__array_interface__["data"][0]
    assert x[1].data_ptr() == x.data_ptr() + 4 * x.itemsize
    assert x.nbytes == 48 and x[1:].nbytes == 32 and x.t()[1].nbytes == 12
    assert x.itemsize == x.element_size() == 4
    assert E.zeros(2, dtype=E.float64).nbytes == 16
    assert E.zeros(0).storage_offset() == 0


def test_device_and_size_queries():
    x = E.zeros(3, 4)
    assert x.is_cpu and x.get_device() == -1 and E.get_device(x) == -1
    assert x.is_same_size(E.ones(3, 4)) and not E.is_same_size(x, x.t())


@pytest.mark.parametrize("dtype, signed", [
    (E.float32, True), (E.float16, True), (E.bfloat16, True), (E.int8, True),
    (E.int64, True), (E.uint8, False), (E.bool_, False)])
def test_is_signed(dtype, signed):
    x = E.zeros(2, dtype=dtype)
    assert x.is_signed() is signed and E.is_signed(x) is signed
    assert x.is_complex() is False and E.is_complex(x) is False


def test_is_nonzero():
    assert E.tensor([2]).is_nonzero() and E.tensor(True).is_nonzero()
    assert not E.tensor([0.0]).is_nonzero() and not E.is_nonzero(E.tensor(-0.0))
    assert E.tensor(float("nan")).is_nonzero()
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        E.ones(2).is_nonzero()
    with pytest.raises(RuntimeError, match="no values is ambiguous"):
        E.ones(0).is_nonzero()


def test_function_forms():
    x = E.tensor(np.zeros((2, 3)))
    assert E.numel(x) == 6 and E.is_floating_point(x) and not E.is_floating_point(x.long())
