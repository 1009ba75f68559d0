"""Tensor printing (``ember/_format.py``) against torch: ``repr(ember_tensor)`` equals
``repr(torch_tensor)`` with ``torch`` replaced by ``ember``, for the same values, dtype and
print options (precision, threshold, edgeitems, linewidth, sci_mode; ember keeps them in
``ember._format.OPTIONS``, torch in ``torch.printoptions``).

Allowed differences (not compared here):
* ``grad_fn=<...>`` names where ember records another backward node than torch (``x[0]``
  is ``IndexBackward0`` in ember, ``SelectBackward0`` in torch); the ops used here name
  theirs alike;
* complex tensors (ember has no complex dtypes) and the other torch-only kinds (sparse,
  quantized, nested, meta);
* ``device='cuda:0'``: checked for its text under the ``cuda`` marker, not against torch
  (the installed torch is CPU-only).
"""
from __future__ import annotations

import contextlib
import dataclasses

import numpy as np
import pytest
from helpers import requires_torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember as E
from ember import _format

try:
    import torch
except ImportError:   # the tests that use it are marked requires_torch: they skip
    torch = None

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
DTYPES = FLOATS + INTS + ["bool"]


@contextlib.contextmanager
def print_options(**kwargs):
    """The same print options in torch and ember, for one block."""
    old = dataclasses.replace(_format.OPTIONS)
    for k, v in kwargs.items():
        setattr(_format.OPTIONS, k, v)
    try:
        with torch._tensor_str.printoptions(**kwargs):
            yield
    finally:
        _format.OPTIONS = old


@contextlib.contextmanager
def default_dtype(name):
    old_e, old_t = E.get_default_dtype(), torch.get_default_dtype()
    E.set_default_dtype(getattr(E, name))
    torch.set_default_dtype(getattr(torch, name))
    try:
        yield
    finally:
        E.set_default_dtype(old_e)
        torch.set_default_dtype(old_t)


def pair(values: np.ndarray, dtype: str):
    """A torch tensor of ``dtype`` made from ``values`` and the ember tensor holding exactly
    its values (converted by torch once, so rounding to float16/bfloat16 is torch's)."""
    t = torch.from_numpy(np.ascontiguousarray(values)).to(getattr(torch, dtype))
    host = t.to(torch.float64).numpy() if t.dtype.is_floating_point else t.numpy()
    return t, E.tensor(host, dtype=getattr(E, "bool_" if dtype == "bool" else dtype))


def assert_same_repr(t, e):
    want = repr(t).replace("torch", "ember")
    assert repr(e) == want, f"\nember:\n{e!r}\ntorch:\n{want}"
    assert str(e) == want


# --- hypothesis: values x shapes x dtypes x options --------------------------------------
MAGNITUDES = st.sampled_from([1.0, 1e-6, 1e-3, 0.5, 10.0, 1e4, 1e9, 1e30])
SPECIALS = st.sampled_from([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 2.0, 100.0])


@st.composite
def float_values(draw, shape):
    scale = draw(MAGNITUDES)
    kind = draw(st.sampled_from(["any", "whole", "special-mixed"]))
    elements = st.floats(-1e3, 1e3, allow_nan=False, width=64)
    arr = draw(hnp.arrays(np.float64, shape, elements=elements)) * scale
    if kind == "whole":
        arr = np.round(arr)
    if kind == "special-mixed" and arr.size:
        flat = arr.reshape(-1)
        for i in draw(st.lists(st.integers(0, arr.size - 1), max_size=3)):
            flat[i] = draw(SPECIALS)
    return arr


@st.composite
def cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    big = draw(st.booleans())          # big dims + small threshold: summaries
    shape = tuple(draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0,
                                        max_side=12 if big else 5)))
    if dtype in FLOATS:
        values = draw(float_values(shape))
    elif dtype == "bool":
        values = draw(hnp.arrays(np.bool_, shape))
    else:
        info = np.iinfo(dtype)
        values = draw(hnp.arrays(np.int64, shape,
                                 elements=st.integers(int(info.min), int(info.max))))
    options = dict(precision=draw(st.integers(1, 8)),
                   threshold=draw(st.sampled_from([1000, 20, 7, 1])) if big else 1000,
                   edgeitems=draw(st.integers(1, 4)),
                   linewidth=draw(st.sampled_from([80, 40, 20, 120])),
                   sci_mode=draw(st.sampled_from([None, None, True, False])))
    grad = dtype in FLOATS and draw(st.sampled_from([None, "leaf", "mul"]))
    return values, dtype, options, grad, draw(st.sampled_from(["float32", "float64"]))


@requires_torch
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_repr_equals_torchs(case):
    values, dtype, options, grad, default = case
    with print_options(**options), default_dtype(default):
        t, e = pair(values, dtype)
        if grad:
            t, e = t.requires_grad_(), e.requires_grad_()
            if grad == "mul":
                t, e = t * 2, e * 2
        assert_same_repr(t, e)


# --- fixed cases: defaults, large tensors, suffix wrapping -------------------------------
@requires_torch
@pytest.mark.parametrize("shape", [(2000,), (40, 30), (11, 11, 11), (3, 1, 400), (1001,)],
                         ids=str)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "bool"])
def test_summaries_at_the_default_threshold(shape, dtype):
    rng = np.random.default_rng(0)
    values = rng.standard_normal(shape) * 50
    if dtype == "bool":
        values = values > 0
    t, e = pair(values, dtype)
    assert_same_repr(t, e)


@requires_torch
@pytest.mark.parametrize("values", [
    [1.5, np.nan], [0.0, np.nan, np.inf], [-0.0, 1.0], [np.nan], [-np.inf, 2.0, 1e-5],
    [1e8, 1.0], [123456789.0], [1e-4, 1.0], [0.1, 0.2, 1000.0], [1.0, 1000.0, 1001.0],
    [-1.5, 2.25, 3e5], [2.0 ** 60], [5e-324, 1.0]], ids=str)
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_formats(values, dtype):
    assert_same_repr(*pair(np.array(values), dtype))
    assert_same_repr(*pair(np.array(values[0]), dtype))          # 0-d


@requires_torch
@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 1)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
def test_empty_tensors_name_their_size_and_dtype(shape, dtype):
    assert_same_repr(*pair(np.zeros(shape), dtype))


@requires_torch
@pytest.mark.parametrize("n", [9, 10, 11, 12, 13, 17, 18, 19, 20, 21])
def test_suffixes_break_where_torchs_do(n):
    """Rows whose last line ends near column 80, then a dtype and requires_grad."""
    values = np.linspace(-1, 1, n) * 7.123
    for dtype in ("float64", "float16"):
        t, e = pair(values, dtype)
        assert_same_repr(t, e)
        assert_same_repr(t.requires_grad_(), e.requires_grad_())
        assert_same_repr(t * 3, e * 3)


@requires_torch
def test_grad_fn_and_requires_grad_suffixes():
    t, e = pair(np.array([[1.0, 2.0], [3.0, 4.0]]), "float32")
    t.requires_grad_()
    e.requires_grad_()
    assert_same_repr(t, e)
    assert_same_repr(t.sum(), e.sum())
    assert_same_repr(t + 1, e + 1)
    assert_same_repr((t * t).detach(), (e * e).detach())


@requires_torch
def test_only_the_shown_elements_are_formatted():
    """A summarized tensor is cut before it leaves the device: its format is chosen over
    the shown elements only (as torch's), so an unshown 1e-9 keeps fixed notation."""
    values = np.ones(3000)
    values[1500] = 1e-9
    t, e = pair(values, "float32")
    assert "e-" not in repr(e)
    assert_same_repr(t, e)


@pytest.mark.cuda
def test_cuda_tensors_name_their_device():
    x = E.tensor([1.5, 2.0], device="cuda")
    assert repr(x) == "tensor([1.5000, 2.0000], device='cuda:0')"
    big = E.arange(3000, device="cuda", dtype=E.int32)
    assert repr(big) == ("tensor([   0,    1,    2,  ..., 2997, 2998, 2999], device='cuda:0',\n"
                         "       dtype=ember.int32)")
