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


def test_wrap_view_marks_only_views_and_chains_to_the_root():
    b = registry.get_backend("cpu")
    base = E.ones(2, 3)
    v = dispatch.wrap_view(base._data[0], b, base)
    assert v._base is base and v._vc is base._vc and v._view_fn is None
    assert v._view_version == base._version and not v.requires_grad
    vv = dispatch.wrap_view(v._data[1:], b, v, "op", (1,))
    assert vv._base is base and vv._vc is base._vc
    assert dispatch.wrap_view(base._data.copy(), b, base)._base is None  # a view-or-copy's copy
    s = dispatch.wrap_view(np.float32(1.0), b, base)
    assert s._base is None and isinstance(s._data, np.ndarray) and s.dtype is E.float32


def test_promote_list_one_type_subclasses_mixed_types_and_errors():
    a, b = E.ones(2), E.zeros(2)
    typ, arrays = dispatch.promote_list("cat", (a, b), "tensors")
    assert typ is a.type() and arrays == [a._data, b._data] and isinstance(arrays, list)
    p = E.nn.Parameter(E.ones(2))
    assert dispatch.promote_list("cat", [p, a], "tensors")[0] is a.type()
    typ, arrays = dispatch.promote_list("cat", [a, E.ones(2, dtype=E.float64)], "tensors")
    assert typ.scalar_type is E.float64 and [x.dtype for x in arrays] == [np.float64] * 2
    assert E.cat([a, E.tensor([1, 2])]).dtype is E.float32
    with pytest.raises(TypeError, match=r"^cat\(\): expected Tensor as element 1 in argument "
                                        r"'tensors', but got int$"):
        E.cat([a, 1])
    with pytest.raises(TypeError, match=r"must be tuple or list of Tensors, not Tensor"):
        E.cat(a)
    with pytest.raises(ValueError, match=r"cat\(\): expected a non-empty list of Tensors"):
        E.cat([])


def test_write_inplace_takes_an_equal_dtype_of_another_object():
    x = E.zeros(2)
    r = np.ones(2, dtype=np.dtype(np.float32, metadata={"from": "a kernel"}))
    assert r.dtype is not x._data.dtype and r.dtype == x._data.dtype
    assert dispatch.write_inplace("add_", x, r) is x
    assert x.tolist() == [1.0, 1.0] and x._version == 1 and x.dtype is E.float32


# ---- issue 36: missing-kernel messages say what to do ---------------------------------

def test_a_dtype_a_backend_excludes_says_to_convert():
    with pytest.raises(NotImplementedError, match=r"^abs: no kernel for CPUBoolType "
                       r"\(ember.bool on 'cpu'\); it is implemented for: CPUByteType.*; 'cpu' "
                       r"computes abs in other dtypes: convert the inputs with \.to\(dtype\)\.$"):
        E.tensor([True]).abs()


def test_a_kernel_a_custom_backend_lacks_names_the_table_and_who_has_it():
    from ember.plugins.kernel_table import KernelTable
    from ember.types import Backend
    b = Backend(name="tablet", xp=np, kernels={}, type_prefix="Tablet",
                array_type=np.ndarray, to_numpy=lambda a: a, from_numpy=lambda a, i: a)
    with pytest.raises(NotImplementedError, match=r"^exp: no kernel for TabletFloatType "
                       r"\(ember.float32 on 'tablet'\); it is implemented for: .*CPUFloatType"
                       r".*; add 'exp' to the kernel table of backend 'tablet' \(docs/"
                       r"plugins\.md, 'The minimal kernel set'\), or move the tensors to a "
                       r"backend that has it\.$"):
        b.type(E.float32).kernels["exp"]
    table = KernelTable({"add": np.add}, b)
    assert "exp" not in table and table.get("exp") is None and table["add"] is np.add
    with pytest.raises(NotImplementedError, match=r"^full: backend 'tablet' has no kernel "
                                                  r"'full'; backends that have it: cpu"):
        table["full"]
