"""``ember.finfo`` / ``ember.iinfo`` (``ember/type_info.py``) against the IEEE-754 and
two's-complement limits written out by hand. Reference: torch.finfo, torch.iinfo."""
from __future__ import annotations

import pytest

import ember as E

# (dtype, bits, eps, max, smallest normal, resolution): the formats' definitions
FLOATS = [
    (E.float16, 16, 2.0 ** -10, (2 - 2.0 ** -10) * 2.0 ** 15, 2.0 ** -14, 1e-3),
    (E.bfloat16, 16, 2.0 ** -7, (2 - 2.0 ** -7) * 2.0 ** 127, 2.0 ** -126, 1e-2),
    (E.float32, 32, 2.0 ** -23, (2 - 2.0 ** -23) * 2.0 ** 127, 2.0 ** -126, 1e-6),
    (E.float64, 64, 2.0 ** -52, (2 - 2.0 ** -52) * 2.0 ** 1023, 2.0 ** -1022, 1e-15),
]


@pytest.mark.parametrize("dtype,bits,eps,big,tiny,resolution", FLOATS,
                         ids=[f[0].name for f in FLOATS])
def test_finfo_limits(dtype, bits, eps, big, tiny, resolution):
    fi = E.finfo(dtype)
    assert (fi.bits, fi.eps, fi.max, fi.min) == (bits, eps, big, -big)
    assert fi.tiny == fi.smallest_normal == tiny
    assert fi.resolution == pytest.approx(resolution, rel=1e-12)
    assert fi.dtype == dtype.name and isinstance(fi.eps, float)
    assert fi == E.finfo(dtype) and hash(fi) == hash(E.finfo(dtype))
    assert repr(fi).startswith("finfo(resolution=") and f"dtype={dtype.name})" in repr(fi)


def test_finfo_default_is_the_default_dtype():
    assert E.finfo().dtype == "float32"
    E.set_default_dtype(E.float64)
    try:
        assert E.finfo().dtype == "float64"
    finally:
        E.set_default_dtype(E.float32)


@pytest.mark.parametrize("dtype,lo,hi,bits", [
    (E.uint8, 0, 255, 8), (E.int8, -128, 127, 8), (E.int16, -2 ** 15, 2 ** 15 - 1, 16),
    (E.int32, -2 ** 31, 2 ** 31 - 1, 32), (E.int64, -2 ** 63, 2 ** 63 - 1, 64)])
def test_iinfo_limits(dtype, lo, hi, bits):
    ii = E.iinfo(dtype)
    assert (ii.min, ii.max, ii.bits, ii.dtype) == (lo, hi, bits, dtype.name)
    assert isinstance(ii.max, int) and repr(ii) == f"iinfo(min={lo}, max={hi}, dtype={dtype.name})"


def test_errors_name_the_other_function():
    with pytest.raises(TypeError, match="floating point input type. Use ember.iinfo"):
        E.finfo(E.int32)
    with pytest.raises(TypeError, match="integer input type. Use ember.finfo"):
        E.iinfo(E.float32)
    with pytest.raises(TypeError, match="ember.bool is not supported by ember.iinfo"):
        E.iinfo(E.bool)
    with pytest.raises(TypeError, match="must be ember.dtype, not int"):
        E.finfo(3)
