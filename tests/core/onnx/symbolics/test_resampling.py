"""ONNX export of resampling (``ember/onnx/symbolics/resampling.py``): ``F.interpolate``'s
nearest and bilinear modes on 4-D input (Resize; Gather where Resize's nearest rule picks
other cells than ember's), by size and by scale, up and down, both align_corners, with
dynamic batch and spatial axes; ``pixel_shuffle`` / ``pixel_unshuffle`` (DepthToSpace, or
Reshape-Transpose-Reshape) in several dtypes and ranks."""
from __future__ import annotations

import numpy as np
import pytest

import ember.nn as nn
import ember.nn.functional as F
import ember.onnx as eo
from ember.onnx.symbolics.resampling import _ember_nearest, _onnx_nearest

from .._check import check_export, ops_in
from ._shared import export_checked_only, randint, randn

SIZES = [dict(scale_factor=2), dict(scale_factor=3), dict(scale_factor=(1.5, 2.5)),
         dict(scale_factor=0.5), dict(scale_factor=1 / 3), dict(size=(9, 4)),
         dict(size=(13, 21)), dict(size=(1, 1)), dict(size=(5, 7)),
         dict(scale_factor=1.7, recompute_scale_factor=True)]


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("mode,align_corners", [("nearest", None), ("bilinear", False),
                                                ("bilinear", True)])
@pytest.mark.parametrize("case", range(len(SIZES)))
def test_interpolate(case, mode, align_corners, opset):
    kw = SIZES[case]
    fn = lambda x: F.interpolate(x, mode=mode, align_corners=align_corners, **kw)
    m = check_export(fn, (randn(2, 3, 5, 7),), opset_version=opset)
    assert ops_in(m)[-1] == "Resize"
    node = m.graph.node[-2]
    attrs = {a.name: a.s.decode() for a in node.attribute if a.s}
    assert attrs["coordinate_transformation_mode"] == (
        "asymmetric" if mode == "nearest" else "align_corners" if align_corners
        else "half_pixel")


def test_nearest_gathers_where_resize_differs():
    """n = 2 -> 82: ember steps by float32(2 / 82), Resize divides by float32(82 / 2)."""
    assert not np.array_equal(_ember_nearest(2, 82, None),
                              _onnx_nearest(2, 82, np.float32(41.0)))
    m = check_export(lambda x: F.interpolate(x, size=(3, 82)), (randn(1, 2, 3, 2),))
    assert ops_in(m) == ["Constant", "Gather"]


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32, np.uint8])
def test_nearest_dtypes(dtype):
    x = randn(2, 3, 4, 5, dtype=dtype) if dtype == np.float64 else \
        randint(0, 100, (2, 3, 4, 5), dtype)
    m = check_export(lambda x: F.interpolate(x, scale_factor=2), (x,))
    assert ops_in(m)[-1] == ("Resize" if dtype in (np.int32, np.uint8) else "Gather")


def test_bilinear_float64_checks():
    # no float64 Resize kernel in onnxruntime's CPU provider: checker only
    export_checked_only(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
                        (randn(1, 2, 3, 4, dtype=np.float64),))


@pytest.mark.parametrize("layer", [
    lambda: nn.Upsample(scale_factor=2), lambda: nn.Upsample(scale_factor=3),
    lambda: nn.Upsample(scale_factor=2, mode="bilinear"),
    lambda: nn.Upsample(scale_factor=(2, 1.5), mode="bilinear", align_corners=True)])
def test_interpolate_dynamic_spatial(layer):
    check_export(layer(), (randn(2, 3, 5, 7),), dynamic_axes={0: [0, 2, 3]},
                 more_inputs=(randn(3, 3, 4, 9, seed=1),))


def test_interpolate_dynamic_batch_by_size():
    for mode in ("nearest", "bilinear"):
        m = check_export(nn.Upsample(size=(6, 9), mode=mode), (randn(2, 3, 5, 7),),
                         dynamic_axes={0: [0]}, more_inputs=(randn(4, 3, 5, 7, seed=1),))
        assert "Shape" in ops_in(m)


def test_interpolate_size_over_dynamic_spatial_fails():
    with pytest.raises(eo.OnnxExportError, match="upsample_nearest2d over a dynamic spatial"):
        eo.export(nn.Upsample(size=(6, 9)), (randn(2, 3, 5, 7),), None, input_names=["x"],
                  dynamic_axes={"x": [2]})


@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_pixel_shuffle(dtype, opset):
    make = (lambda *s: randn(*s, dtype=dtype)) if np.dtype(dtype).kind == "f" else \
        (lambda *s: randint(0, 2, s).to(dtype))
    m = check_export(lambda x: F.pixel_shuffle(x, 2), (make(2, 8, 3, 4),), opset_version=opset)
    assert ops_in(m) == (["DepthToSpace"] if np.dtype(dtype).kind == "f" else
                         ["Constant", "Reshape", "Transpose", "Constant", "Reshape"])
    m = check_export(lambda x: F.pixel_unshuffle(x, 2), (make(2, 2, 4, 6),),
                     opset_version=opset)
    assert "SpaceToDepth" not in ops_in(m)        # its channel order is not ember's


def test_pixel_shuffle_ranks_and_dynamic():
    check_export(lambda x: F.pixel_shuffle(x, 3), (randn(9, 2, 3),))
    check_export(lambda x: F.pixel_unshuffle(x, 3), (randn(1, 3, 6),))
    for fn, shape, more in ((lambda x: F.pixel_shuffle(x, 2), (2, 2, 4, 2, 3), (3, 1, 4, 2, 3)),
                            (lambda x: F.pixel_unshuffle(x, 2), (2, 2, 3, 4, 2),
                             (3, 1, 3, 4, 2))):
        check_export(fn, (randn(*shape),), dynamic_axes={0: [0, 1]},
                     more_inputs=(randn(*more, seed=1),))
    check_export(nn.PixelShuffle(2), (randn(2, 8, 3, 4),), dynamic_axes={0: [0, 2, 3]},
                 more_inputs=(randn(3, 8, 5, 2, seed=1),))
    check_export(nn.PixelUnshuffle(2), (randn(2, 2, 4, 6),), dynamic_axes={0: [0]},
                 more_inputs=(randn(3, 2, 4, 6, seed=1),))
    with pytest.raises(eo.OnnxExportError, match="dynamic channel or spatial"):
        eo.export(nn.PixelUnshuffle(2), (randn(2, 2, 4, 6),), None, input_names=["x"],
                  dynamic_axes={"x": [2]})
