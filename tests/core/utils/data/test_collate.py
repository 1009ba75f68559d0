"""default_collate / default_convert (ember.utils.data.collate)."""
from collections import namedtuple

import numpy as np
import pytest
from helpers import to_np

import ember as E
from ember.utils.data import default_collate, default_convert

Point = namedtuple("Point", ["x", "y"])


def test_tensors_are_stacked():
    batch = [E.tensor([1.0, 2.0]), E.tensor([3.0, 4.0]), E.tensor([5.0, 6.0])]
    out = default_collate(batch)
    assert out.shape == (3, 2) and out.dtype is E.float32
    np.testing.assert_array_equal(to_np(out), [[1, 2], [3, 4], [5, 6]])


def test_numpy_arrays_keep_their_dtype():
    out = default_collate([np.ones((2, 2), np.float64), np.zeros((2, 2), np.float64)])
    assert isinstance(out, E.Tensor) and out.shape == (2, 2, 2) and out.dtype is E.float64
    out = default_collate([np.int16(3), np.int16(4)])
    assert out.dtype is E.int16 and to_np(out).tolist() == [3, 4]


def test_python_numbers_follow_pytorch_dtypes():
    f = default_collate([1.5, 2.5])
    assert f.dtype is E.float64 and to_np(f).tolist() == [1.5, 2.5]
    i = default_collate([1, 2, 3])
    assert i.dtype is E.int64 and to_np(i).tolist() == [1, 2, 3]
    b = default_collate([True, False])
    assert b.dtype is E.bool_


def test_strings_pass_through():
    assert default_collate(["a", "b"]) == ["a", "b"]


def test_nested_structures():
    batch = [{"img": E.ones(2), "meta": (1, "a"), "p": Point(1.0, [np.int64(2)])},
             {"img": E.zeros(2), "meta": (2, "b"), "p": Point(2.0, [np.int64(3)])}]
    out = default_collate(batch)
    assert set(out) == {"img", "meta", "p"}
    assert out["img"].shape == (2, 2)
    meta = out["meta"]
    assert isinstance(meta, list)  # tuples collate to lists, as in PyTorch
    assert to_np(meta[0]).tolist() == [1, 2] and meta[1] == ["a", "b"]
    assert isinstance(out["p"], Point)
    assert out["p"].x.dtype is E.float64
    assert isinstance(out["p"].y, list) and to_np(out["p"].y[0]).tolist() == [2, 3]


def test_tuple_samples_become_a_list_of_batches():
    out = default_collate([(E.tensor([1]), 0), (E.tensor([2]), 1)])
    assert isinstance(out, list) and out[0].shape == (2, 1) and out[1].dtype is E.int64


def test_unsupported_type_is_named():
    class Thing:
        pass

    with pytest.raises(TypeError, match="Thing"):
        default_collate([Thing(), Thing()])
    with pytest.raises(TypeError, match="NoneType"):
        default_collate([None, None])
    with pytest.raises(TypeError, match="dtype <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_size_mismatches_raise_shape_error():
    with pytest.raises(E.ShapeError, match=r"\(2,\).*\(3,\)|\(3,\).*\(2,\)"):
        default_collate([E.zeros(2), E.zeros(3)])
    with pytest.raises(E.ShapeError, match="same shape"):
        default_collate([np.zeros(2), np.zeros(3)])
    with pytest.raises(E.ShapeError, match="same length"):
        default_collate([[1, 2], [1]])
    with pytest.raises(ValueError, match="non-empty"):
        default_collate([])


def test_default_convert():
    out = default_convert({"a": np.arange(3), "b": (np.float32(1.0), "s")})
    assert isinstance(out["a"], E.Tensor) and out["a"].dtype is E.int64
    assert isinstance(out["b"], list) and out["b"][0].dtype is E.float32 and out["b"][1] == "s"
    t = E.ones(2)
    assert default_convert(t) is t
