"""ONNX export of ember's comparisons, logical and bitwise ops
(ember/onnx/symbolics/comparison.py, with the shared _operands.py): each symbolic exported,
checked and run in onnxruntime against ember, in float32, float64, int64, uint8 and bool
where onnxruntime has the kernels, at opsets 13 and 17 (18 and 20 where the symbolics
branch), with broadcasting, Python-number operands, nan, and every g.fail path."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.onnx as eo

from .._check import check_export, ops_in
from ._shared import COMPARE, _rng, export_only, ints, t, uniform

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


# ---- comparisons, logical, bitwise -------------------------------------------------------

# COMPARE (in _shared.py): name -> fn of two operands


def _compare_operands(dtype):
    if dtype == np.bool_:
        return t(_rng.random((3, 4)) > 0.5), t(_rng.random(4) > 0.5)
    if dtype == np.int64:
        return ints((3, 4), -2, 3), ints((4,), -2, 3)
    a = np.round(_rng.uniform(-2, 2, (3, 4))).astype(dtype)
    a[0, :2] = np.nan
    return t(a), t(np.array([0.0, 1.0, np.nan, -1.0]), dtype)


@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
@pytest.mark.parametrize("name", list(COMPARE))
def test_comparisons(name, dtype, opset):
    a, b = _compare_operands(dtype)
    check_export(COMPARE[name], (a, b), opset_version=opset)


@pytest.mark.parametrize("name", list(COMPARE))
def test_comparisons_with_numbers(name):
    fn = COMPARE[name]
    check_export(lambda a: fn(a, 1), (ints((3, 4), -2, 3),))
    check_export(lambda a: fn(a, 0.5), (ints((3, 4), -2, 3),))          # compares in float
    check_export(lambda a: fn(a, 0.5), (uniform((3, 4)),))
    check_export(lambda a: fn(a, True), (t(_rng.random(5) > 0.5),))


LOGICAL = {"and": lambda a, b: E.logical_and(a, b), "or": lambda a, b: E.logical_or(a, b),
           "xor": lambda a, b: E.logical_xor(a, b)}


@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("name", list(LOGICAL))
def test_logical(name, opset):
    b1, b2 = t(_rng.random((3, 4)) > 0.5), t(_rng.random(4) > 0.5)
    f = t(np.array([0.0, np.nan, -1.5, 0.0]), np.float32)             # nan counts as True
    i = t(np.array([[0, 3], [-1, 0]]))
    fn = LOGICAL[name]
    check_export(fn, (b1, b2), opset_version=opset)
    check_export(fn, (f, b1), opset_version=opset)
    check_export(fn, (i, f.double()[:2]), opset_version=opset)


def test_logical_not():
    check_export(lambda a: E.logical_not(a), (t(_rng.random(5) > 0.5),))
    check_export(lambda a: E.logical_not(a), (t([0.0, np.nan, 2.0, -0.0], np.float32),))
    check_export(lambda a: E.logical_not(a), (ints((5,)),), opset_version=13)


BITWISE = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}


@pytest.mark.parametrize("opset", [18, 20])
@pytest.mark.parametrize("name", list(BITWISE))
def test_bitwise_integers(name, opset):
    fn = BITWISE[name]
    m = check_export(fn, (ints((3, 4), -100, 100), ints((4,), -100, 100)), opset_version=opset)
    assert f"Bitwise{name.capitalize()}" in ops_in(m)
    check_export(lambda a: fn(a, 6), (ints((5,)),), opset_version=opset)
    check_export(fn, (t([1, 200, 255], np.uint8), t([3, 15, 128], np.uint8)), opset_version=opset)


@pytest.mark.parametrize("opset", [13, 17, 18])
@pytest.mark.parametrize("name", list(BITWISE))
def test_bitwise_bools(name, opset):
    m = check_export(BITWISE[name], (t(_rng.random((3, 4)) > 0.5), t(_rng.random(4) > 0.5)),
                     opset_version=opset)
    assert ops_in(m) == [name.capitalize()]


def test_bitwise_not():
    assert ops_in(check_export(lambda a: ~a, (ints((5,)),), opset_version=18)) == ["BitwiseNot"]
    assert ops_in(check_export(lambda a: ~a, (t([True, False]),), opset_version=13)) == ["Not"]


@pytest.mark.parametrize("opset", [13, 17])
def test_shifts_uint8(opset):
    a = t([1, 2, 255, 128, 77, 3], np.uint8)
    b = t([0, 1, 7, 8, 9, 200], np.uint8)          # counts of 8 or more give 0
    for fn in (lambda a, b: a << b, lambda a, b: a >> b,
               lambda a, b: E.bitwise_left_shift(a, b), lambda a, b: E.bitwise_right_shift(a, b)):
        assert "BitShift" in ops_in(check_export(fn, (a, b), opset_version=opset))
    check_export(lambda a: a << 3, (a,), opset_version=opset)
    check_export(lambda a: a >> 300, (a,), opset_version=opset)        # 300 wraps to 44


# ---- special values -----------------------------------------------------------------------

PREDICATES = {"isnan": E.isnan, "isinf": E.isinf, "isposinf": E.isposinf,
              "isneginf": E.isneginf, "isfinite": E.isfinite}


@pytest.mark.parametrize("opset", [13, 17, 20])
@pytest.mark.parametrize("name", list(PREDICATES))
def test_predicates(name, opset):
    fn = PREDICATES[name]
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0, 1e308])
    for dtype in (np.float32, np.float64):
        m = check_export(fn, (t(special, dtype),), opset_version=opset)
        assert ops_in(m)[0] in ("IsNaN", "IsInf")
    # integers and bools have no NaN or infinity: Equal(x, x) (isfinite) or its Not
    for x in (ints((3, 4)), t([True, False]), ints((2, 2), dtype=np.int32)):
        assert ops_in(check_export(fn, (x,), opset_version=opset))[0] == "Equal"
    check_export(fn, (uniform((2, 3)),), dynamic_axes={0: [0]}, opset_version=opset,
                 more_inputs=(uniform((4, 3)),))
    check_export(fn, (ints((2, 3)),), dynamic_axes={0: [0, 1]}, opset_version=opset,
                 more_inputs=(ints((4, 5)),))


def test_isposinf_isneginf_attributes():
    m = check_export(E.isposinf, (t([np.inf, -np.inf, 1.0], np.float32),))
    attrs = {a.name: a.i for a in m.graph.node[0].attribute}
    assert attrs == {"detect_negative": 0}


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16])
def test_predicates_half_precision_check(dtype):
    for fn in PREDICATES.values():      # IsInf takes halves from opset 20: float32 before
        for opset in (13, 20):
            export_only(fn, (uniform((3,)).to(dtype),), opset)


# ---- g.fail paths -------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [lambda a: a & 3, lambda a: a | a, lambda a: a ^ a,
                                lambda a: ~a], ids=["and", "or", "xor", "not"])
def test_bitwise_integers_before_opset18_fail(fn):
    with pytest.raises(eo.OnnxExportError, match="opset 18"):
        eo.export(fn, (ints((3,)),), None, opset_version=17)


@pytest.mark.parametrize("dtype", [np.int64, np.int8, np.int32])
def test_signed_shifts_fail(dtype):
    for fn in (lambda a: a << 1, lambda a: a >> 1):
        with pytest.raises(eo.OnnxExportError, match="unsigned integers only"):
            eo.export(fn, (ints((3,), dtype=dtype),), None)
    with pytest.raises(eo.OnnxExportError, match="unsigned"):     # uint8 << int64 is int64
        eo.export(lambda a, b: a << b, (t([1], np.uint8), ints((1,), 0, 3)), None)
