"""Bessel functions J0, J1, Y0, Y1, K0, K1 (and scaled), i0e, i1e, spherical j0
(kernels/special_bessel.py) against reference values computed with mpmath at 60 digits
(besselj, bessely, besselk, besseli), pasted below; points on both sides of each method's
switch (2 and 25 for J/Y, 2 for K, 30 for i0e/i1e) and in the tails. airy_ai's edges and
dtypes are checked here with the others; its values in test_special_airy.py."""
from __future__ import annotations

import math

import numpy as np
import pytest

import ember as E

S = E.special
inf, nan = math.inf, math.nan

# (x, f(x)) pairs, mpmath at 60 digits rounded to float64
J0 = [
    (1e-10, 1.0), (0.1, 0.99750156206604), (1.0, 0.7651976865579666),
    (1.99, 0.22966118404558944), (2.0, 0.22389077914123567),
    (2.404825557695773, -6.10876525973673e-17), (5.0, -0.1775967713143383),
    (10.0, -0.24593576445134835), (24.9, 0.0832459683530155), (25.0, 0.09626678327595811),
    (30.0, -0.08636798358104021), (100.0, 0.019985850304223122),
    (10000.0, -0.0070961603533888015),
]

J1 = [
    (1e-10, 5e-11), (0.1, 0.049937526036242), (1.0, 0.4400505857449335),
    (1.99, 0.5773494940468116), (2.0, 0.5767248077568734),
    (2.404825557695773, 0.5191474972894667), (5.0, -0.32757913759146523),
    (10.0, 0.04347274616886144), (24.9, -0.13485569953140886), (25.0, -0.1253502495802899),
    (30.0, -0.11875106261662294), (100.0, -0.07714535201411216),
    (10000.0, 0.0036474507555295803),
]

Y0 = [
    (1e-10, -14.732516272697241), (0.1, -1.5342386513503667), (1.0, 0.08825696421567696),
    (1.99, 0.5092771201920098), (2.0, 0.5103756726497451),
    (2.404825557695773, 0.509924383448479), (5.0, -0.30851762524903376),
    (10.0, 0.055671167283599395), (24.9, -0.13649918399676522), (25.0, -0.12724943226800614),
    (30.0, -0.11729573168666403), (100.0, -0.07724431336508315),
    (10000.0, 0.0036478055589866058),
]

Y1 = [
    (1e-10, -6366197723.675814), (0.1, -6.4589510947020266), (1.0, -0.7812128213002887),
    (1.99, -0.1126814084217741), (2.0, -0.10703243154093754),
    (2.404825557695773, 0.1027466824382596), (5.0, 0.14786314339122683),
    (10.0, 0.24901542420695388), (24.9, -0.08600255759555425), (25.0, -0.09882996478323741),
    (30.0, 0.08442557066174723), (100.0, -0.020372312002759792),
    (10000.0, 0.007096342752536495),
]

K0 = [
    (1e-10, 23.14178244559887), (0.1, 2.4270690247020164), (1.0, 0.42102443824070834),
    (2.0, 0.11389387274953344), (2.01, 0.11250436099872804), (5.0, 0.0036910983340425942),
    (30.0, 2.1324774964630563e-14), (700.0, 4.669776431685377e-306),
]

K1 = [
    (1e-10, 10000000000.0), (0.1, 9.853844780870606), (1.0, 0.6019072301972346),
    (2.0, 0.13986588181652243), (2.01, 0.1380408773192077), (5.0, 0.004044613445452165),
    (30.0, 2.1677320018915495e-14), (700.0, 4.6731107967079664e-306),
]

K0E = [
    (1e-10, 23.141782447913048), (0.1, 2.6823261022628944), (1.0, 1.144463079806895),
    (2.0, 0.8415682150707714), (2.01, 0.8396557490908678), (5.0, 0.547807564313519),
    (30.0, 0.22788666561625373), (700.0, 0.04736236945461357), (10000.0, 0.012532984717699286),
    (100000000.0, 0.00012533141357488575),
]

K1E = [
    (1e-10, 10000000001.0), (0.1, 10.890182683049696), (1.0, 1.6361534862632583),
    (2.0, 1.0334768470686886), (2.01, 1.0302428743356034), (5.0, 0.6002738587883126),
    (30.0, 0.2316541293777118), (700.0, 0.04739618765349454), (10000.0, 0.012533611351270506),
    (100000000.0, 0.0001253314142015428),
]

I0E = [
    (-10000.0, 0.003989472674604732), (-31.0, 0.07194649669698383), (-30.0, 0.0731459464822373),
    (-5.0, 0.18354081260932836), (-0.1, 0.9071009257823011), (0.0, 1.0),
    (0.5, 0.6450352704491501), (2.0, 0.30850832255367105), (29.9, 0.07326921904600191),
    (100.0, 0.03994437929909668), (1000000.0, 0.00039894233026924577),
]

I1E = [
    (-10000.0, -0.003989273195983662), (-31.0, -0.07077639283438568),
    (-30.0, -0.07191633059864755), (-5.0, -0.16397226694454237), (-0.1, -0.045298446808809324),
    (0.0, 0.0), (0.5, 0.1564208031848717), (2.0, 0.21526928924893765),
    (29.9, 0.07203337491186879), (100.0, 0.03974415302513025),
    (1000000.0, 0.0003989421307980308),
]


def _xw(table):
    return (E.tensor(np.array([t[0] for t in table])), np.array([t[1] for t in table]))


@pytest.mark.parametrize("fn, table", [(S.bessel_j0, J0), (S.bessel_j1, J1), (S.bessel_y0, Y0),
                                       (S.bessel_y1, Y1)], ids=["j0", "j1", "y0", "y1"])
def test_first_and_second_kind_match_mpmath(fn, table):
    # absolute precision: J0's zero at 2.4048... is in the table (relative error would be 1)
    x, want = _xw(table)
    np.testing.assert_allclose(fn(x).numpy(), want, rtol=2e-15, atol=3e-16)


@pytest.mark.parametrize("fn, table", [
    (S.modified_bessel_k0, K0), (S.modified_bessel_k1, K1), (S.scaled_modified_bessel_k0, K0E),
    (S.scaled_modified_bessel_k1, K1E), (S.i0e, I0E), (S.i1e, I1E)],
    ids=["k0", "k1", "k0e", "k1e", "i0e", "i1e"])
def test_modified_match_mpmath(fn, table):
    x, want = _xw(table)
    np.testing.assert_allclose(fn(x).numpy(), want, rtol=3e-15, atol=0)


def test_symmetry_and_relations():
    x = E.tensor(np.linspace(0.05, 40, 37))
    np.testing.assert_array_equal(S.bessel_j0(-x).numpy(), S.bessel_j0(x).numpy())
    np.testing.assert_array_equal(S.bessel_j1(-x).numpy(), -S.bessel_j1(x).numpy())
    np.testing.assert_array_equal(S.i1e(-x).numpy(), -S.i1e(x).numpy())
    # the Wronskian J1 Y0 - J0 Y1 = 2 / (pi x)
    w = S.bessel_j1(x) * S.bessel_y0(x) - S.bessel_j0(x) * S.bessel_y1(x)
    np.testing.assert_allclose(w.numpy(), 2 / (math.pi * x.numpy()), rtol=1e-13)
    # i0e = exp(-|x|) i0, i1e = exp(-|x|) i1, K scaled = exp(x) K
    np.testing.assert_allclose(S.i0e(x).numpy(), (E.i0(x) * (-x).exp()).numpy(), rtol=1e-14)
    np.testing.assert_allclose(S.i1e(x).numpy(), (S.i1(x) * (-x).exp()).numpy(), rtol=1e-14)
    np.testing.assert_allclose(S.scaled_modified_bessel_k1(x).numpy(),
                               (S.modified_bessel_k1(x) * x.exp()).numpy(), rtol=1e-14)
    # spherical j0 is sin(x) / x
    np.testing.assert_allclose(S.spherical_bessel_j0(x).numpy(), np.sin(x.numpy()) / x.numpy(),
                               rtol=1e-15)


def test_edges():
    e = E.tensor([-inf, -1.0, -0.0, 0.0, inf, nan], dtype=E.float64)
    rows = {
        # ours gives the limits at +-inf where PyTorch (Cephes) gives NaN (see the docstrings)
        S.bessel_j0: [0.0, 0.7651976865579666, 1.0, 1.0, 0.0, nan],
        S.bessel_j1: [0.0, -0.44005058574493355, 0.0, 0.0, 0.0, nan],
        S.bessel_y0: [nan, nan, -inf, -inf, 0.0, nan],
        S.bessel_y1: [nan, nan, -inf, -inf, 0.0, nan],
        S.modified_bessel_k0: [nan, nan, inf, inf, 0.0, nan],
        S.scaled_modified_bessel_k1: [nan, nan, inf, inf, 0.0, nan],
        S.i0e: [0.0, 0.46575960759364043, 1.0, 1.0, 0.0, nan],
        S.i1e: [0.0, -0.2079104153497085, 0.0, 0.0, 0.0, nan],
        S.spherical_bessel_j0: [0.0, 0.8414709848078965, 1.0, 1.0, 0.0, nan],
        S.airy_ai: [0.0, 0.5355608832923521, 0.3550280538878172, 0.3550280538878172, 0.0, nan],
    }
    for fn, want in rows.items():
        np.testing.assert_allclose(fn(e).numpy(), want, rtol=1e-15, err_msg=fn.__name__)


ALL = [S.bessel_j0, S.bessel_j1, S.bessel_y0, S.bessel_y1, S.modified_bessel_k0,
       S.modified_bessel_k1, S.scaled_modified_bessel_k0, S.scaled_modified_bessel_k1, S.i0e,
       S.i1e, S.spherical_bessel_j0, S.airy_ai]


FLOAT32_KERNELS = (S.bessel_j0, S.bessel_j1, S.bessel_y0, S.bessel_y1, S.i0e, S.i1e,
                   S.modified_bessel_k0, S.modified_bessel_k1, S.scaled_modified_bessel_k0,
                   S.scaled_modified_bessel_k1, S.spherical_bessel_j0, S.airy_ai)


@pytest.mark.parametrize("fn", ALL, ids=lambda f: f.__name__)
def test_dtypes_and_no_gradient(fn):
    x = E.tensor([0.5, 1.5, 7.0])
    for dt in (E.float16, E.bfloat16, E.float32):
        got = fn(x.to(dt))
        assert got.dtype is dt
        if fn in FLOAT32_KERNELS:  # float32 algorithms (errors in test_special_precision.py)
            wide = fn(x.to(dt).double()).numpy()
            np.testing.assert_allclose(got.double().numpy(), wide, atol=1e-6,
                                       rtol=2e-6 if dt is E.float32 else 1e-2)
            assert E.equal(got, fn(x.to(dt).float()).to(dt))  # float32, rounded once
        else:
            assert E.equal(got, fn(x.to(dt).double()).to(dt))
    assert fn(E.tensor([1, 2])).dtype is E.float32 and fn(E.tensor([True])).dtype is E.float32
    leaf = E.tensor([0.5, 1.5], dtype=E.float64, requires_grad=True)
    assert fn(leaf).requires_grad is (fn in (S.i0e, S.i1e))  # as PyTorch
