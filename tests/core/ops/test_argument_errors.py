"""Misused arguments of the generated wrappers (issue 35, class 11 and the writes of 14).

``None`` where a Tensor is required is the wrapper's TypeError naming the op and the
argument, as PyTorch says it (``atan2(): argument 'other' (position 2) must be Tensor, not
NoneType``), for every required Tensor argument of every op in native_functions.yaml, never
an AttributeError or a numpy message. Writing into a tensor that cannot be written (an
``expand()``-ed tensor, a read-only numpy array shared through ``from_numpy``), in place or
through ``out=``, is the RuntimeError of ``dispatch.check_writable`` (PyTorch: "more than
one element of the written-to tensor refers to a single memory location. Please clone()
the tensor before performing the operation."), and leaves the memory unchanged.
"""
import operator
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from ember.ops import FUNCTIONS, codegen

_PLAUSIBLE = {"int": 0, "SymInt": 0, "float": 1, "Scalar": 1, "bool": False, "str": "sum"}


def _plausible(a):
    """A value for argument ``a`` that its type check accepts (... for 'use the default')."""
    t = a.type
    if a.has_default:
        return ...
    if t.base == "Tensor":
        if t.is_list:
            return [E.ones(2, 2)]
        return None if t.optional else E.ones(2, 2)
    v = _PLAUSIBLE.get(t.base)
    return [1] if t.is_list and v is not None else v


def _call(nf, inplace, replace: dict, **extra):
    """Call the wrapper of ``nf`` with plausible arguments, ``replace`` by name."""
    fn = codegen.NAMESPACE[codegen.wrapper_name(nf, inplace)]
    pos, kw = [], dict(extra)
    for a in nf.schema.arguments:
        v = replace[a.name] if a.name in replace else _plausible(a)
        if v is ...:
            continue
        if a.kwarg_only:
            kw[a.name] = v
        else:
            pos.append(v)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*pos, **kw)


def _none_cases():
    """(declaration, in place?, argument index, argument) for every required Tensor
    argument (not a list, not optional) of every wrapper."""
    out = []
    for nf in FUNCTIONS:
        for inplace in [False] + ([True] if nf.inplace_schema is not None else []):
            for i, a in enumerate(nf.schema.arguments):
                if a.type.is_tensor and not a.type.optional:
                    name = codegen.wrapper_name(nf, inplace)
                    out.append(pytest.param(nf, inplace, i, a, id=f"{name}-{a.name}"))
    return out


_NONE_CASES = _none_cases()


def test_the_none_cases_cover_every_op_with_a_tensor_argument():
    assert len(_NONE_CASES) > 800
    names = {p.values[0].name for p in _NONE_CASES}
    assert {"add", "atan2", "where", "mul", "matmul", "pow", "addcmul", "rsub",
            "float_power", "clamp_min", "searchsorted", "special_zeta"} <= names


@pytest.mark.parametrize("nf, inplace, i, a", _NONE_CASES)
def test_none_for_a_required_tensor_is_the_wrapper_type_error(nf, inplace, i, a):
    op = nf.name + ("_" if inplace else "")
    want = f"{op}(): argument '{a.name}' (position {i + 1}) must be Tensor, not NoneType"
    with pytest.raises(TypeError, match=re.escape(want)):
        _call(nf, inplace, {a.name: None})


X = E.tensor([1.0, 2.0, 3.0])
C = X > 1.5


@pytest.mark.parametrize("call, op, name, pos", [
    (lambda: X + None, "add", "other", 2),
    (lambda: None + X, "add", "other", 2),
    (lambda: X - None, "sub", "other", 2),
    (lambda: None - X, "rsub", "other", 2),
    (lambda: X * None, "mul", "other", 2),
    (lambda: X / None, "div", "other", 2),
    (lambda: X // None, "floor_divide", "other", 2),
    (lambda: X % None, "remainder", "other", 2),
    (lambda: X ** None, "pow", "exponent", 2),
    (lambda: X @ None, "matmul", "other", 2),
    (lambda: X < None, "lt", "other", 2),
    (lambda: X >= None, "ge", "other", 2),
    (lambda: C & None, "bitwise_and", "other", 2),
    (lambda: operator.iadd(X.clone(), None), "add_", "other", 2),
    (lambda: X.clone().mul_(None), "mul_", "other", 2),
    (lambda: E.atan2(X, None), "atan2", "other", 2),
    (lambda: E.add(None, X), "add", "self", 1),
    (lambda: E.where(C, X, None), "where", "other", 3),
    (lambda: E.where(C, None, X), "where", "self", 2),
    (lambda: E.where(None, X, X), "where", "condition", 1),
    (lambda: E.maximum(X, None), "maximum", "other", 2),
    (lambda: E.fmod(X, None), "fmod", "other", 2),
    (lambda: E.clamp_min(X, None), "clamp_min", "min", 2),
    (lambda: E.float_power(X, None), "float_power", "exponent", 2),
    (lambda: E.addcmul(X, None, X), "addcmul", "tensor1", 2),
    (lambda: X.eq(None), "eq", "other", 2),
])
def test_none_through_the_public_api_names_op_and_argument(call, op, name, pos):
    want = re.escape(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not NoneType")
    if op == "where":  # an op with overloads may answer as PyTorch's does for where
        want += r"|where\(\) received an invalid combination of arguments - got \(.*NoneType"
    with pytest.raises(TypeError, match=want):
        call()


def test_none_compares_unequal_as_in_python():
    # == and != keep Python's meaning for None (torch: x == None is False)
    assert (X == None) is False  # noqa: E711
    assert (X != None) is True  # noqa: E711


_DTYPES = [E.float32, E.float64, E.int64, E.int32, E.bool]
_BINARY = [("add", 2), ("sub", 2), ("mul", 2), ("div", 2), ("atan2", 2), ("maximum", 2),
           ("pow", 2), ("fmod", 2), ("eq", 2), ("lt", 2), ("hypot", 2), ("xlogy", 2),
           ("logaddexp", 2), ("copysign", 2), ("remainder", 2), ("minimum", 2)]


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(_BINARY), dtype=st.sampled_from(_DTYPES),
       shape=st.lists(st.integers(0, 3), max_size=3), none_first=st.booleans())
def test_none_beside_any_tensor_is_refused(case, dtype, shape, none_first):
    """Any dtype (one that promotes, one the op refuses) and shape (0-d, empty) of the
    other operand: the None is named first, before promotion or a kernel sees it."""
    op, _ = case
    t = E.zeros(tuple(shape), dtype=dtype)
    args, (name, pos) = ((None, t), ("self", 1)) if none_first else ((t, None), (None, 2))
    fn = getattr(E, op)
    with pytest.raises(TypeError, match=r"must be Tensor, not NoneType") as info:
        fn(*args)
    msg = str(info.value)
    assert msg.startswith(f"{op}(): argument ")
    if name is not None:
        assert f"'{name}' (position {pos})" in msg
    else:
        assert f"(position {pos})" in msg


def test_numbers_and_optional_none_still_work():
    """The None checks refuse only None in a required Tensor place."""
    np.testing.assert_allclose(E.add(X, 2).numpy(), [3, 4, 5])
    np.testing.assert_allclose(E.add(2, X).numpy(), [3, 4, 5])
    np.testing.assert_allclose((E.arange(3) + 0.5).numpy(), [0.5, 1.5, 2.5])  # promotes
    np.testing.assert_allclose(E.clamp(X, None, 2.0).numpy(), [1, 2, 2])
    np.testing.assert_allclose(E.where(C, X, 0.0).numpy(), [0, 2, 3])
    np.testing.assert_allclose(E.rsub(X, 1).numpy(), [0, -1, -2])
    np.testing.assert_allclose(E.float_power(X, 2).numpy(), [1, 4, 9])


def test_a_composite_keeps_its_own_error_when_no_argument_is_none():
    # the composite's failure path looks for None, then re-raises what it caught
    with pytest.raises(RuntimeError, match="broadcast|shape"):
        E.rsub(E.ones(2), E.ones(3))


# --- writes that cannot be done: read-only numpy memory, expanded tensors ------------------

def _read_only(shape=(2, 2)):
    a = np.ones(shape, np.float32)
    a.flags.writeable = False
    return E.from_numpy(a), a


def _expanded():
    base = E.ones(1, 2)
    return base.expand(2, 2), base


def _write_cases():
    out = []
    for nf in FUNCTIONS:
        if nf.inplace_schema is not None:
            out.append(pytest.param(nf, "inplace", id=f"{nf.name}_"))
        if "out" in nf.structured:
            out.append(pytest.param(nf, "out", id=f"{nf.name}-out"))
    return out


_READ_ONLY_MSG = r"written-to tensor is read-only|more than one element of the written-to"


@pytest.mark.parametrize("nf, mode", _write_cases())
@pytest.mark.parametrize("target", ["read_only", "expanded"])
def test_a_write_that_cannot_be_done_is_refused_in_ember_words(nf, mode, target):
    """Every in-place op and every out= op: into a read-only from_numpy tensor or an
    expanded tensor of the result's shape. Either the op refuses for another reason first
    (a dtype, an argument) or it raises the RuntimeError naming the op; never numpy's
    "assignment destination is read-only", never a write into the shared memory."""
    t, keep = _read_only() if target == "read_only" else _expanded()
    before = keep.copy() if isinstance(keep, np.ndarray) else keep.numpy().copy()
    replace, extra = ({"self": t}, {}) if mode == "inplace" else ({}, {"out": t})
    try:
        _call(nf, mode == "inplace", replace, **extra)
    except Exception as e:  # noqa: BLE001 - the kind of error is what is checked
        msg = str(e)
        assert "assignment destination is read-only" not in msg
        if "read-only" in msg or "single memory location" in msg:
            assert isinstance(e, RuntimeError)
            assert re.search(_READ_ONLY_MSG, msg), msg
            assert re.match(r"\w+\(\): ", msg), msg  # names the op
    # (numpy refuses writes to both kinds of array: memory that changed was written by
    # flipping the flag, which must not happen; out= of another shape is reallocated)
    after = keep if isinstance(keep, np.ndarray) else keep.numpy()
    np.testing.assert_array_equal(after, before)


@pytest.mark.parametrize("write, op", [
    (lambda t: t.add_(1), "add_"),
    (lambda t: t.mul_(E.ones(2, 2)), "mul_"),
    (lambda t: t.neg_(), "neg_"),
    (lambda t: t.clamp_(0, 0.5), "clamp_"),
    (lambda t: E.add(E.ones(2, 2), 1, out=t), "add"),
    (lambda t: E.neg(E.ones(2, 2), out=t), "neg"),
    (lambda t: E.matmul(E.ones(2, 2), E.ones(2, 2), out=t), "matmul"),
    (lambda t: E.sum(E.ones(3, 2), 0, out=t[0]), "sum"),
])
def test_writing_into_a_read_only_numpy_array_names_the_op(write, op):
    t, a = _read_only()
    version = t._version
    with pytest.raises(RuntimeError, match=re.escape(f"{op}(): the written-to tensor is "
                                                     f"read-only")) as info:
        write(t)
    assert "clone()" in str(info.value) and "from_numpy" in str(info.value)
    np.testing.assert_array_equal(a, np.ones((2, 2), np.float32))
    assert t._version == version


@pytest.mark.parametrize("call, op", [
    (lambda out: E.add(E.ones(3), E.ones(3), out=out), "add"),
    (lambda out: E.mul(E.ones(3), 2.0, out=out), "mul"),
    (lambda out: E.exp(E.zeros(3), out=out), "exp"),
    (lambda out: E.where(E.ones(3) > 0, E.ones(3), 0.0, out=out), "where"),
])
def test_out_an_expanded_tensor_is_pytorchs_error(call, op):
    base = E.zeros(1)
    out = base.expand(3)
    with pytest.raises(RuntimeError, match=re.escape(
            f"{op}(): unsupported operation: more than one element of the written-to tensor "
            f"refers to a single memory location")) as info:
        call(out)
    assert "Please clone() the tensor before performing the operation." in str(info.value)
    assert base.item() == 0


def test_out_of_another_shape_is_still_resized_not_refused():
    t, a = _read_only((2, 2))
    E.add(E.ones(3), 1, out=t)  # resized (reallocated), as PyTorch: the array is untouched
    np.testing.assert_allclose(t.numpy(), [2, 2, 2])
    np.testing.assert_array_equal(a, np.ones((2, 2), np.float32))
