"""ScalarType promotion (PyTorch's table and result_type rules), can_cast, Device, Type."""
import pytest

import ember as E
from ember import types as T

B, U8, I8, I16, I32, I64 = E.bool_, E.uint8, E.int8, E.int16, E.int32, E.int64
F16, BF16, F32, F64 = E.float16, E.bfloat16, E.float32, E.float64

# (a, b, promote_types(a, b)): checked by hand against torch.promote_types.
PROMOTE = [
    (B, B, B), (B, U8, U8), (B, F16, F16), (U8, I8, I16), (U8, I16, I16), (U8, I64, I64),
    (I8, I16, I16), (I32, I64, I64), (I64, F16, F16), (I64, BF16, BF16), (F16, BF16, F32),
    (BF16, F32, F32), (F16, F64, F64), (I32, F32, F32), (U8, F16, F16),
]


@pytest.mark.parametrize("a, b, expected", PROMOTE)
def test_promote_types_matches_pytorch_table(a, b, expected):
    assert E.promote_types(a, b) is expected
    assert E.promote_types(b, a) is expected


def test_promotion_is_symmetric_and_bool_is_identity():
    for a in T.all_scalar_types:
        assert E.promote_types(B, a) is a
        for b in T.all_scalar_types:
            assert E.promote_types(a, b) is E.promote_types(b, a)


@pytest.mark.parametrize("operands, expected", [
    ((E.ones(2, dtype=I8), 1000), I8),          # python ints never upcast int tensors
    ((E.ones(2, dtype=F16), 2.5), F16),          # nor floats a float tensor
    ((E.ones(2, dtype=I32), 2.5), F32),          # int tensor + float -> default dtype
    ((E.ones(2, dtype=B), 2), I64),              # bool tensor + int -> int64
    ((E.ones(2, dtype=B), True), B),
    ((E.ones(2, dtype=F16), E.ones((), dtype=F64)), F16),   # zero-dim doesn't upcast
    ((E.ones(2, dtype=I32), E.ones((), dtype=F64)), F64),   # ...unless higher category
    ((E.ones((), dtype=I32), 2.5), F32),
    ((E.ones(2, dtype=U8), E.ones(2, dtype=I8)), I16),
])
def test_result_type_priority_groups(operands, expected):
    assert E.result_type(*operands) is expected


def test_default_dtype_drives_float_scalars():
    try:
        E.set_default_dtype(E.float64)
        assert E.result_type(E.ones(2, dtype=I32), 2.5) is F64
        assert E.tensor([1.5]).dtype is F64
    finally:
        E.set_default_dtype(E.float32)
    with pytest.raises(TypeError, match="expected a floating dtype"):
        E.set_default_dtype(E.int32)


@pytest.mark.parametrize("src, dst, ok", [
    (F32, I64, False), (I64, B, False), (I64, F16, True), (B, U8, True), (F64, F16, True),
    (I64, I8, True),
])
def test_can_cast_follows_categories(src, dst, ok):
    assert E.can_cast(src, dst) is ok


def test_scalar_type_names_and_aliases():
    assert (F32.type_name, F32.itemsize, F32.is_floating_point) == ("Float", 4, True)
    assert E.float is F32 and E.double is F64 and E.long is I64 and E.half is F16
    assert repr(BF16) == "ember.bfloat16" and BF16.numpy.name == "bfloat16"
    assert not U8.is_signed and I8.is_signed


def test_device_parsing():
    assert E.Device("cuda:1") == E.Device("cuda", 1)
    assert str(E.Device("cuda:1")) == "cuda:1" and E.Device("cpu").index is None
    assert E.Device("cpu") == "cpu" and E.Device("cpu:0") == E.Device("cpu")
    for bad in ("cuda:x", "cuda:-1", "cuda:1:2"):
        with pytest.raises(ValueError, match="invalid device string"):
            E.Device(bad)
    with pytest.raises(TypeError, match="expected a device string"):
        E.Device(3)


def test_one_type_object_per_backend_and_scalar_type():
    x, y = E.ones(2), E.zeros(3)
    assert x.type() is y.type() and x.type().name == "CPUFloatType"
    assert E.ones(1, dtype=E.int64).type().name == "CPULongType"
    assert E.ones(1, dtype=F16).type().name == "CPUHalfType"
    # the kernel cache resolves once
    k = x.type().kernels["add"]
    assert x.type().kernels["add"] is k


def test_missing_kernel_is_not_implemented_with_who_has_it():
    with pytest.raises(NotImplementedError, match="no_such_op: no kernel for CPUFloatType.*"
                                                  "no installed backend implements it"):
        E.ones(1).type().kernels["no_such_op"]


def test_the_missing_kernel_error_is_handed_down_by_dispatch(monkeypatch):
    """types sits below dispatch (docs/architecture.md): it imports nothing of it, and a
    Type raises the error dispatch set at import (who has the op, the way out)."""
    import ast
    import pathlib

    from ember import dispatch
    tree = ast.parse(pathlib.Path(T.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any("dispatch" in (m or "") for m in imported), imported
    typ = E.ones(1, dtype=F16).type()
    with pytest.raises(NotImplementedError) as info:
        typ.kernels["linalg_cholesky"]
    assert str(info.value) == str(dispatch.missing_kernel_error("linalg_cholesky", typ))
    assert str(info.value).startswith("linalg_cholesky: no kernel for CPUHalfType (ember."
                                      "float16 on 'cpu'); it is implemented for: ")
    # before dispatch hands its error down, a Type still raises, with the bare facts
    monkeypatch.setattr(T, "_missing_kernel_error", T._missing_kernel_error)
    T.set_missing_kernel_error(T._no_kernel_error)
    with pytest.raises(NotImplementedError) as info:
        typ.kernels["no_such_op"]
    assert str(info.value) == "no_such_op: no kernel for CPUHalfType (ember.float16 on 'cpu')"
