"""``interpolate(..., antialias=True)`` for bilinear and bicubic (issue 35, class 15):
forward and backward against values recorded from torch 2.13 (``_upsample_bilinear2d_aa``
/ ``_upsample_bicubic2d_aa``), and against an independent per-pixel loop of PIL's
resampling (support scaled by the downscale factor, weights normalized) over random
sizes, scales and align_corners."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import ShapeError

X0 = (np.arange(35).reshape(1, 1, 5, 7) % 6 - 2.5) ** 2 / 3

# (mode, size, scale_factor, align_corners, torch 2.13's output[0, 0] for X0)
FORWARD = [
    ("bilinear", (3, 4), None, False,
     [[0.994897959183673, 0.23952380952381, 1.207142857142857, 1.747732426303855],
      [0.263227513227513, 1.013703703703704, 1.60925925925926, 0.591269841269842],
      [0.990362811791384, 1.755714285714286, 0.578571428571428, 0.296485260770975]]),
    ("bilinear", (2, 9), None, True,
     [[0.700617283950617, 0.608024691358025, 0.66358024691358, 0.895061728395062,
       1.17283950617284, 1.311728395061728, 1.28395061728395, 1.089506172839506,
       0.756172839506173],
      [0.453703703703704, 1.055555555555556, 1.611111111111111, 1.861111111111111,
       1.416666666666667, 0.833333333333333, 0.388888888888889, 0.194444444444444,
       0.416666666666667]]),
    ("bicubic", (3, 3), None, False,
     [[0.745285359801489, 0.533538398923014, 1.821339950372208],
      [0.248024506126532, 1.588507917577686, 0.820030007501875],
      [1.302605459057072, 1.28657681349989, 0.175723738626964]]),
    ("bicubic", (4, 10), None, True,
     [[1.871341683728773, 1.255855431417418, 0.448936350538181, 0.088905839477922,
       0.018020594965675, 0.275902618866006, 0.909219001610306, 1.69927536231884,
       2.17344569013819, 1.845604103971278],
      [0.390293875482931, 0.18727613789198, 0.03407206845835, 0.254141596470116,
       0.876774969915764, 1.604419039978607, 2.153610108303248, 1.931347773766546,
       1.263849212577828, 0.48250019090653],
      [0.052893987104513, 0.304466230936819, 0.851446264640709, 1.667725150364039,
       2.074964387464388, 1.96409069325736, 1.192248338081672, 0.52857905982906,
       0.107804116385352, 0.091035615652683],
      [0.631489956775998, 1.340281329923274, 2.153851315083199, 2.22271873322598,
       1.529468599033817, 0.643974771873323, 0.131951154052604, -0.033454106280193,
       0.140941752617207, 0.643423820547786]]),
    ("bilinear", None, 0.6, False,
     [[1.062925170068027, 0.231481481481482, 1.05952380952381, 1.773809523809523],
      [0.231481481481482, 0.947530864197531, 1.675925925925926, 0.759259259259259],
      [0.913265306122449, 1.787037037037038, 0.69047619047619, 0.261904761904762]]),
    ("bicubic", None, (0.4, 1.5), False,
     [[1.083889629372431, 0.677026609750093, 0.216148234849023, 0.196904581747102,
       0.507661204511598, 1.00456755968567, 1.552044170154406, 1.800187983258849,
       1.679653955294057, 1.118696165625816],
      [0.221459026369926, 0.58704501166289, 1.167717914765159, 1.695950872131974,
       1.800187983258849, 1.552044170154406, 1.00456755968567, 0.507661204511598,
       0.206479452839748, 0.260874716271088]]),
]

# (mode, size, align_corners, torch 2.13's X0.grad for L = sum(out * (arange % 5 - 2)))
BACKWARD = [
    ("bilinear", (3, 4), False,
     [[-0.598639455782313, -0.604081632653061, -0.35156462585034, -0.16, 0.027210884353742,
       0.244897959183673, 0.299319727891156],
      [-0.216175359032502, -0.351473922902494, -0.473620559334845, -0.306666666666667,
       -0.095147392290249, 0.139229024943311, 0.224489795918367],
      [0.582010582010582, 0.253968253968254, -0.524867724867725, -0.466666666666667,
       -0.288888888888889, -0.111111111111111, 0.0],
      [0.4572940287226, 0.456689342403628, 0.256175359032502, -0.186666666666667,
       -0.581678004535147, -0.399546485260771, -0.224489795918367],
      [0.299319727891157, 0.473469387755102, 0.621496598639456, 0.0, -0.621496598639456,
       -0.473469387755102, -0.299319727891157]]),
    ("bicubic", (4, 10), True,
     [[-1.917515392137903, -0.280455117688768, 1.613356076063546, -0.67429960257906,
       -1.008404945909962, 0.902049788845244, 1.365269193406904],
      [-2.1082130702969, -0.308346492115456, 1.773804987717914, -0.741358969675975,
       -1.108691223984984, 0.991759003708343, 1.501045764647056],
      [-1.928008742024364, -0.28198987130244, 1.622184954239436, -0.677989618151907,
       -1.013923308874898, 0.906986137251191, 1.372740448862981],
      [-2.024380871162353, -0.296085224554952, 1.703270384241958, -0.71187914448577,
       -1.064604587402874, 0.952322127301611, 1.44135731606238],
      [-2.712141068971992, -0.39667678591045, 2.281936974643463, -0.953731924366549,
       -1.426291793625506, 1.275862654670546, 1.931041943560488]]),
]


@pytest.mark.parametrize("mode, size, sf, ac, expected", FORWARD)
def test_forward_matches_torch(mode, size, sf, ac, expected):
    out = F.interpolate(E.tensor(X0), size=size, scale_factor=sf, mode=mode,
                        align_corners=ac, antialias=True)
    np.testing.assert_allclose(out.numpy()[0, 0], expected, rtol=0, atol=2e-15)


@pytest.mark.parametrize("mode, size, ac, expected", BACKWARD)
def test_backward_matches_torch(mode, size, ac, expected):
    x = E.tensor(X0, requires_grad=True)
    out = F.interpolate(x, size=size, mode=mode, align_corners=ac, antialias=True)
    g = E.tensor(np.arange(out.numel()).reshape(tuple(out.shape)) % 5 - 2.0)
    (out * g).sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[0, 0], expected, rtol=0, atol=2e-15)


# --- an independent reference: PIL's ImagingResample, one output pixel at a time ----------

def _filter(mode, x):
    x = abs(x)
    if mode == "bilinear":
        return max(0.0, 1.0 - x)
    a = -0.5
    if x < 1:
        return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1
    if x < 2:
        return a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a
    return 0.0


def _resample_1d(v, n_out, mode, ac, scale):
    n_in = len(v)
    if ac:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        s = 1.0 / scale if scale else n_in / n_out
    support = (2.0 if mode == "bicubic" else 1.0) * max(s, 1.0)
    out = []
    for i in range(n_out):
        c = s * (i + 0.5)
        lo, hi = max(int(c - support + 0.5), 0), min(int(c + support + 0.5), n_in)
        w = [_filter(mode, (j - c + 0.5) / max(s, 1.0)) for j in range(lo, hi)]
        total = sum(w)
        out.append(sum(wk / total * v[j] for wk, j in zip(w, range(lo, hi))))
    return out


def _reference(x, size, mode, ac, scales):
    (oh, ow), (sh, sw) = size, scales
    rows = [_resample_1d(r, ow, mode, ac, sw) for r in x]
    cols = [_resample_1d([r[j] for r in rows], oh, mode, ac, sh) for j in range(ow)]
    return np.array(cols).T


@settings(max_examples=40, deadline=None)
@given(h=st.integers(1, 9), w=st.integers(1, 9), oh=st.integers(1, 12), ow=st.integers(1, 12),
       mode=st.sampled_from(["bilinear", "bicubic"]), ac=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_sizes_against_the_reference(h, w, oh, ow, mode, ac, seed):
    x = np.random.default_rng(seed).standard_normal((h, w))
    out = F.interpolate(E.tensor(x).reshape(1, 1, h, w), size=(oh, ow), mode=mode,
                        align_corners=ac, antialias=True)
    np.testing.assert_allclose(out.numpy()[0, 0], _reference(x, (oh, ow), mode, ac,
                                                              (None, None)), atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(h=st.integers(2, 12), w=st.integers(2, 12), sh=st.floats(0.15, 3.0),
       sw=st.floats(0.15, 3.0), mode=st.sampled_from(["bilinear", "bicubic"]))
def test_scale_factors_against_the_reference(h, w, sh, sw, mode):
    oh, ow = math.trunc(h * sh), math.trunc(w * sw)
    if oh < 1 or ow < 1:
        return
    x = np.cos(np.arange(h * w, dtype=np.float64)).reshape(h, w)
    out = F.interpolate(E.tensor(x).reshape(1, 1, h, w), scale_factor=(sh, sw), mode=mode,
                        antialias=True)
    np.testing.assert_allclose(out.numpy()[0, 0], _reference(x, (oh, ow), mode, False,
                                                              (sh, sw)), atol=1e-12)


def test_weights_are_normalized_so_constants_stay():
    x = E.full((2, 3, 11, 13), 2.5, dtype=E.float64)
    for mode in ("bilinear", "bicubic"):
        for size in ((3, 4), (1, 1), (20, 5), (11, 13)):
            out = F.interpolate(x, size=size, mode=mode, antialias=True)
            np.testing.assert_allclose(out.numpy(), 2.5, rtol=1e-14)


def test_upscaling_bilinear_is_the_plain_op():
    # no downscale: the antialiased triangle is the ordinary bilinear filter (torch agrees)
    x = E.tensor(np.random.default_rng(1).standard_normal((1, 2, 4, 5)))
    aa = F.interpolate(x, size=(8, 10), mode="bilinear", antialias=True)
    plain = F.interpolate(x, size=(8, 10), mode="bilinear", antialias=False)
    np.testing.assert_allclose(aa.numpy(), plain.numpy(), atol=1e-14)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_gradcheck_and_gradgradcheck(mode):
    x = E.tensor(np.random.default_rng(2).standard_normal((1, 2, 6, 5)), requires_grad=True)

    def fn(t):
        return F.interpolate(t, size=(3, 7), mode=mode, antialias=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_float32_follows_float64():
    x = np.random.default_rng(3).standard_normal((2, 3, 17, 19))
    for mode in ("bilinear", "bicubic"):
        a = F.interpolate(E.tensor(x, dtype=E.float32), size=(5, 6), mode=mode,
                          antialias=True)
        b = F.interpolate(E.tensor(x), size=(5, 6), mode=mode, antialias=True)
        assert a.dtype == E.float32
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=2e-6)


def test_errors():
    x = E.zeros(1, 2, 3, 4)
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(x, size=5, mode="nearest", antialias=True)
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(E.zeros(1, 2, 3), size=5, mode="linear", antialias=True)
    with pytest.raises(ShapeError, match="greater than 0"):
        F.interpolate(x, size=0, mode="bilinear", antialias=True)
    with pytest.raises(NotImplementedError, match="floating"):
        F.interpolate(E.zeros(1, 1, 3, 4, dtype=E.int64), size=2, mode="bicubic",
                      antialias=True)
