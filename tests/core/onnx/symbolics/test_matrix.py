"""ONNX export of ``tril``/``triu`` (``ember/onnx/symbolics/matrix.py``): Trilu against
onnxruntime for every diagonal sign, batched matrices, the dtypes onnxruntime runs and
those that go through a wider one, a dynamic batch and rows, and the opset-13 refusal."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.onnx as eo

from .._check import check_export, ops_in
from ._shared import randint, randn


@pytest.mark.parametrize("opset", [14, 17])
@pytest.mark.parametrize("diagonal", [0, 1, -2, 7, -7])
@pytest.mark.parametrize("fn", [E.tril, E.triu], ids=["tril", "triu"])
def test_trilu(fn, diagonal, opset):
    m = check_export(lambda x: fn(x, diagonal), (randn(2, 4, 5),), opset_version=opset)
    assert ops_in(m) == ["Constant", "Trilu"]
    check_export(lambda x: fn(x, diagonal), (randn(5, 3),), opset_version=opset)


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.bool_, np.int32, np.int8, np.uint8])
@pytest.mark.parametrize("fn", [E.tril, E.triu], ids=["tril", "triu"])
def test_trilu_dtypes(fn, dtype):
    x = randn(3, 4, dtype=dtype) if dtype == np.float64 else \
        randint(0, 2, (3, 4)).to(E.bool_) if dtype == np.bool_ else randint(-9, 9, (3, 4), dtype)
    m = check_export(lambda x: fn(x, 1), (x,))
    assert ("Cast" in ops_in(m)) == (dtype in (np.int32, np.int8, np.uint8))


def test_trilu_dynamic_and_method():
    check_export(lambda x: x.tril(-1), (randn(2, 3, 4),), dynamic_axes={0: [0, 1, 2]},
                 more_inputs=(randn(3, 6, 2, seed=1),))
    check_export(lambda x: x.triu(), (randn(4, 4),), dynamic_axes={0: [0]},
                 more_inputs=(randn(2, 4, seed=1),))


def test_trilu_before_opset14_fails():
    for fn in (E.tril, E.triu):
        with pytest.raises(eo.UnsupportedOperatorError, match=r"needs opset_version >= 14"):
            eo.export(fn, (randn(3, 3),), None, opset_version=13)
