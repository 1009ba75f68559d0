"""``t[index]`` and ``t[index] = value`` (ember/_indexing.py) against numpy float64.

Basic indexing must give views (shared memory and version counter); anything with a
list, array, bool or tensor gives a copy. Where PyTorch differs from numpy (ints are
applied before arrays; negative steps are refused) the expected values are written out."""
import numpy as np
import pytest
from helpers import ALL_DTYPES, assert_close, make, to_np

import ember as E

SOME_DTYPES = [E.bool_, E.uint8, E.int32, E.int64, E.bfloat16, E.float16, E.float32,
               E.float64]


def np_index(index):
    """The numpy spelling of an ember index (Tensors become arrays)."""
    if isinstance(index, tuple):
        return tuple(np_index(i) for i in index)
    return index.numpy() if isinstance(index, E.Tensor) else index


BASIC = [0, -1, 2, slice(None), slice(1, 3), slice(None, None, 2), slice(-2, None),
         slice(5, 1), slice(-10, 10), (1, 2), (1, -1, 0), (slice(None), 1), (Ellipsis, 1),
         (1, Ellipsis), (None, 1), (Ellipsis, None), (slice(1, None), None, slice(None, 2), 3),
         (), Ellipsis, (None, Ellipsis, None), (0, slice(None), slice(1, 4, 2))]


@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("index", BASIC, ids=repr)
def test_basic_indexing_is_a_view(dtype, index):
    x, ref = make((3, 4, 5), dtype)
    r = x[index]
    assert_close(r, ref[index], dtype)
    assert r._base is x
    if r.numel():
        assert np.shares_memory(r.numpy(), x.numpy())
        before = x._version
        r.fill_(0)
        zeroed = x.numpy().copy()
        r.fill_(1)
        assert (x.numpy() != zeroed).any()  # written through to x
        assert x._version == r._version == before + 2


@pytest.mark.parametrize("index", [(), Ellipsis, None, (None, None), (Ellipsis, None)], ids=repr)
def test_0d(index):
    x = E.tensor(5.0)
    assert_close(x[index], np.array(5.0)[index])
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        x[0]


# Index builders: tensors are made inside the test, not at collection time.
ADVANCED = {
    "list": lambda: [0, 2], "nested list": lambda: [[0, 1], [2, 2]], "empty list": lambda: [],
    "int64": lambda: E.tensor([2, 0, 2]), "int32": lambda: E.tensor([2, 0, 2]).int(),
    "0-d int": lambda: E.tensor(1), "numpy": lambda: np.array([1, 2]),
    "mask": lambda: E.tensor([True, False, True]), "bool list": lambda: [True, False, True],
    "2-d mask": lambda: E.tensor(np.random.default_rng(0).random((3, 4)) > 0.5),
    "slice, list": lambda: (slice(None), [3, 0]),
    "slice, 2-d, slice": lambda: (slice(None), E.tensor([[0], [3]]), slice(1, 3)),
    "two lists": lambda: ([0, 2], [1, 3]),
    "list, slice, list": lambda: ([0, 2], slice(None), [1, 3]),
    "mask, ..., int": lambda: (E.tensor([True, False, True]), Ellipsis, 0),
    "..., mask": lambda: (Ellipsis, E.tensor([True, False, True, True, False])),
    "None, list": lambda: (None, [1, 2]), "list, None, list": lambda: ([0, 1], None, [1, 2]),
    "True": lambda: True, "False": lambda: False, "0-d mask, int": lambda: (E.tensor(True), 0),
    "int, bool list": lambda: (1, [True, False, True, True]),
    "tuple in tuple": lambda: ((0, 2),),
    "empty int64": lambda: (E.tensor([], dtype=E.int64), slice(None)),
    "negative": lambda: ([-1, -3],)}


@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("case", ADVANCED)
def test_advanced_indexing_copies(dtype, case):
    x, ref = make((3, 4, 5), dtype)
    index = ADVANCED[case]()
    npi = np_index(index)
    if isinstance(npi, list) and npi == []:
        npi = np.array([], dtype=np.int64)
    expected = ref[npi]
    r = x[index]
    assert_close(r, expected, dtype)
    assert r._base is None
    if r.numel():
        assert not np.shares_memory(r.numpy(), x.numpy())
    r.fill_(0)
    assert_close(x, ref, dtype)


def test_ints_apply_before_arrays_like_torch():
    # numpy moves the array dim first when a slice separates it from the int; torch does not
    x, ref = make((2, 3, 4), E.int64)
    assert_close(x[0, :, [0, 1]], ref[0][:, [0, 1]], E.int64)
    assert x[0, :, [0, 1]].shape == (3, 2)
    assert_close(x[[0, 1], :, 0], ref[:, :, 0][[0, 1]], E.int64)
    assert x[None, [0, 1], None, [0, 1]].shape == (2, 1, 1, 4)
    assert x[True, 0].shape == (1, 3, 4)


def test_uint8_index_is_a_deprecated_mask():
    x, ref = make((3, 2), E.float32)
    with pytest.warns(DeprecationWarning, match="uint8"):
        r = x[E.tensor([1, 0, 1], dtype=E.uint8)]
    assert_close(r, ref[[True, False, True]])


def test_slice_bounds_may_be_tensors():
    x, ref = make((5,), E.float32)
    assert_close(x[E.tensor(1):E.tensor(4)], ref[1:4])


@pytest.mark.parametrize("items", [(1, slice(None, 2)), (-3, slice(1, None)), (),
                                   (slice(None),), (2, 3)], ids=repr)
def test_plain_indices_skip_normalizing(items):
    from ember._indexing import _plain
    assert _plain(items, (3, 4)) is items


@pytest.mark.parametrize("items", [(3,), (-4,), (0, 4), (True,), (1.0,), (None,), (Ellipsis,),
                                   (slice(0, 2, 1),), (slice(0.5, None),), (slice(None, [2]),),
                                   (0, 0, 0), ([0],)], ids=repr)
def test_other_indices_take_the_general_path(items):
    from ember._indexing import _plain
    assert _plain(items, (3, 4)) is None


@pytest.mark.parametrize("index,exc,match", [
    (5, IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (-4, IndexError, "index -4 is out of bounds for dimension 0 with size 3"),
    ((0, 4), IndexError, "index 4 is out of bounds for dimension 1 with size 4"),
    ([0, 3], IndexError, "index 3 is out of bounds for dimension 0 with size 3"),
    (lambda: (slice(None), E.tensor([-5])), IndexError,
     "index -5 is out of bounds for dimension 1"),
    ((0, 0, 0), IndexError, "too many indices for tensor of dimension 2"),
    (1.5, IndexError, r"valid indices \(got float\)"),
    ("a", IndexError, r"valid indices \(got str\)"),
    ({1}, IndexError, r"valid indices \(got set\)"),
    (lambda: E.tensor([0.0]), IndexError, "tensors used as indices must be"),
    (lambda: E.tensor([0], dtype=E.int16), IndexError, "tensors used as indices must be"),
    ([0.5], IndexError, "tensors used as indices must be"),
    (slice(None, None, -1), ValueError, "step must be greater than zero"),
    (slice(None, None, 0), ValueError, "slice step cannot be zero"),
    (slice(0.5, None), TypeError, "slice indices must be integers"),
    ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
    (lambda: E.tensor([True, False]), IndexError,
     r"shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor "
     r"\[3, 4\] at index 0"),
    (lambda: E.ones(3, 5, dtype=E.bool_), IndexError, r"mask \[3, 5\] at index 1"),
])
def test_getitem_errors(index, exc, match):
    x = E.zeros(3, 4)
    index = index() if callable(index) else index
    with pytest.raises(exc, match=match):
        x[index]


# --- setitem -------------------------------------------------------------------------------------

SET_CASES = {
    "int": lambda: 0, "ints": lambda: (1, 2), "slice": lambda: slice(1, None),
    "..., int": lambda: (Ellipsis, 0), "slice, list": lambda: (slice(None), [0, 3]),
    "list": lambda: [2, 0], "mask": lambda: E.tensor([True, False, True]),
    "two tensors": lambda: (E.tensor([0, 2]), E.tensor([1, 1])), "None, int": lambda: (None, 1),
    "2-d mask": lambda: E.tensor(np.random.default_rng(2).random((3, 4)) > 0.5)}


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("case", SET_CASES)
def test_setitem_scalar(dtype, case):
    x, ref = make((3, 4), dtype)
    index = SET_CASES[case]()
    value = True if dtype is E.bool_ else 2
    expected = ref.copy()
    expected[np_index(index)] = value
    x[index] = value
    assert_close(x, expected, dtype)
    assert x._version == 1


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("src_dtype", [E.bool_, E.int64, E.float64])
@pytest.mark.parametrize("case", SET_CASES)
def test_setitem_tensor_broadcasts_and_casts(dtype, src_dtype, case):
    x, ref = make((3, 4), dtype)
    index = SET_CASES[case]()
    target_shape = ref[np_index(index)].shape
    value, vref = make(target_shape[-1:], src_dtype, low=0, seed=3)
    expected = ref.copy()
    expected[np_index(index)] = vref.astype(value.dtype.numpy).astype(dtype.numpy)
    x[index] = value
    assert_close(x, to_np(E.tensor(expected.astype(dtype.numpy))), dtype)
    assert x._version == 1


def test_setitem_through_views_and_versions():
    x = E.zeros(3, 4)
    row = x[1]
    col = x.t()[2]
    x[1] = 5.0
    assert row.tolist() == [5.0] * 4 and row._version == x._version == col._version == 1
    col[:] = E.tensor([1.0, 2.0, 3.0])
    assert to_np(x)[:, 2].tolist() == [1.0, 2.0, 3.0]
    assert x._version == 2
    x[0, 0] = E.tensor(9)  # 0-d tensor value
    x[0] = E.ones(1, 1, 4)  # extra leading size-1 dims are allowed
    assert x[0].tolist() == [1.0] * 4


def test_setitem_casts_like_torch():
    x = E.zeros(2, 3, dtype=E.uint8)
    x[0] = -1
    assert x[0].tolist() == [255] * 3
    y = E.zeros(3, dtype=E.int32)
    y[:] = 1.7
    y[0] = E.tensor(-2.9)
    assert y.tolist() == [-2, 1, 1]
    b = E.zeros(2, dtype=E.bool_)
    b[0] = 0.5
    assert b.tolist() == [True, False]


@pytest.mark.parametrize("index,value,exc,match", [
    (5, 1.0, IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    ([0, 3], 1.0, IndexError, "index 3 is out of bounds"),
    (slice(None, None, -1), 1.0, ValueError, "step must be greater than zero"),
    (0, lambda: E.ones(5), E.ShapeError,
     r"value of shape \[5\] cannot be expanded to the destination shape \[4\]"),
    (0, lambda: E.ones(2, 4), E.ShapeError, "cannot be expanded"),
    ([0, 1], lambda: E.ones(3, 4), E.ShapeError, "shape mismatch: value tensor of shape"),
    (lambda: E.ones(3, 4, dtype=E.bool_), lambda: E.arange(11.0), E.ShapeError,
     "shape mismatch"),
    (0, 300, RuntimeError, "cannot be converted to type uint8 without overflow"),
    (0, [1, 2, 3, 4], TypeError, "can't assign a list"),
    (0, "a", TypeError, "can't assign a str"),
    (0, None, TypeError, "can't assign a NoneType"),
])
def test_setitem_errors_leave_tensor_unchanged(index, value, exc, match):
    x, ref = make((3, 4), E.uint8)
    index = index() if callable(index) else index
    value = value() if callable(value) else value
    with pytest.raises(exc, match=match):
        x[index] = value
    assert_close(x, ref, E.uint8)
    assert x._version == 0


def test_setitem_on_expanded_tensor_raises():
    base = E.zeros(1, 4)
    e = base.expand(3, 4)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e[0] = 1.0
    assert base.sum().item() == 0
