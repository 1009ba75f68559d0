"""Upsample layers: they call F.interpolate with their arguments; defaults and repr."""
import numpy as np
import pytest
from helpers import assert_close, make, to_np

import ember as E
import ember.nn.functional as F
from ember import nn


@pytest.mark.parametrize("kwargs", [dict(scale_factor=2), dict(size=(3, 5), mode="bilinear"),
                                    dict(scale_factor=(1.5, 0.5), mode="bicubic",
                                         align_corners=True),
                                    dict(scale_factor=0.5, mode="bilinear",
                                         recompute_scale_factor=True)])
def test_upsample_is_interpolate(kwargs):
    x, _ = make((1, 2, 4, 4), E.float64)
    assert_close(nn.Upsample(**kwargs)(x), to_np(F.interpolate(x, **kwargs)))


def test_nearest_2d_repeats_cells():
    x, xn = make((1, 1, 2, 3), E.float32)
    out = nn.UpsamplingNearest2d(scale_factor=2)(x)
    assert_close(out, np.repeat(np.repeat(xn, 2, 2), 2, 3))


def test_bilinear_2d_aligns_corners():
    x = E.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    out = to_np(nn.UpsamplingBilinear2d(size=3)(x))[0, 0]
    np.testing.assert_allclose(out, [[1.0, 1.5, 2.0], [2.0, 2.5, 3.0], [3.0, 3.5, 4.0]])


def test_attributes_and_repr():
    m = nn.Upsample(scale_factor=2)
    assert m.scale_factor == 2.0 and isinstance(m.scale_factor, float)
    assert repr(m) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert repr(nn.Upsample(size=(3, 4), mode="bilinear")) == \
        "Upsample(size=(3, 4), mode='bilinear')"
    assert nn.Upsample(scale_factor=(2, 3)).scale_factor == (2.0, 3.0)
    b = nn.UpsamplingBilinear2d(scale_factor=2)
    assert (b.mode, b.align_corners) == ("bilinear", True)
    assert repr(nn.UpsamplingNearest2d(size=4)) == "UpsamplingNearest2d(size=4, mode='nearest')"


def test_errors_surface_from_interpolate():
    with pytest.raises(ValueError, match="either size or scale_factor"):
        nn.Upsample()(E.zeros(1, 1, 2, 2))
