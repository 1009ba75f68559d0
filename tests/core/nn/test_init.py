"""ember.nn.init: bounds and statistics on large tensors, fans, gains, dirac, orthogonality,
sparsity, deprecated spellings, errors, generators."""
import math
import warnings

import numpy as np
import pytest
from helpers import to_np

import ember as E
from ember.nn import init


def test_calculate_gain():
    assert init.calculate_gain("linear") == 1
    assert init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="negative_slope"):
        init.calculate_gain("leaky_relu", "x")


def test_fans():
    assert init._calculate_fan_in_and_fan_out(E.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(E.empty(8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(E.empty(5))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(E.empty(5))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_normal_(E.empty(3, 3), mode="fan_avg")


def test_uniform_and_normal_statistics():
    t = E.empty(200, 250)
    out = init.uniform_(t, -2.0, 3.0)
    assert out is t
    a = to_np(t)
    assert a.min() >= -2.0 and a.max() < 3.0
    assert abs(a.mean() - 0.5) < 0.05
    init.normal_(t, mean=1.0, std=2.0)
    a = to_np(t)
    assert abs(a.mean() - 1.0) < 0.03 and abs(a.std() - 2.0) < 0.03


def test_constant_ones_zeros_eye():
    t = E.empty(2, 3, dtype=E.float64)
    assert to_np(init.constant_(t, 2.5)).tolist() == [[2.5] * 3] * 2
    assert to_np(init.ones_(t)).sum() == 6
    assert to_np(init.zeros_(t)).sum() == 0
    assert to_np(init.eye_(t)).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert t.dtype is E.float64


def test_xavier_statistics():
    t = E.empty(300, 200)
    init.xavier_uniform_(t, gain=2.0)
    bound = 2.0 * math.sqrt(6 / 500)
    a = to_np(t)
    assert a.max() <= bound and a.min() >= -bound and a.max() > 0.95 * bound
    init.xavier_normal_(t)
    assert abs(to_np(t).std() - math.sqrt(2 / 500)) < 0.02 * math.sqrt(2 / 500) * 5


@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
def test_kaiming_statistics(mode):
    t = E.empty(64, 32, 3, 3)  # fan_in 288, fan_out 576
    fan = 288 if mode == "fan_in" else 576
    init.kaiming_uniform_(t, a=math.sqrt(5), mode=mode)
    bound = math.sqrt(3) * init.calculate_gain("leaky_relu", math.sqrt(5)) / math.sqrt(fan)
    a = to_np(t)
    assert a.max() <= bound and a.min() >= -bound and a.max() > 0.95 * bound
    init.kaiming_normal_(t, mode=mode, nonlinearity="relu")
    assert abs(to_np(t).std() / (math.sqrt(2 / fan)) - 1) < 0.03


def test_kaiming_on_empty_tensor_warns():
    t = E.empty(0, 3)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert init.kaiming_uniform_(t) is t
    assert "no-op" in str(w[0].message)


def test_trunc_normal_bounds():
    t = E.empty(100, 100)
    init.trunc_normal_(t, mean=0.0, std=1.0, a=-0.5, b=1.0)
    a = to_np(t)
    assert a.min() >= -0.5 and a.max() <= 1.0 and a.std() > 0.3
    with pytest.raises(ValueError):
        init.trunc_normal_(t, a=1.0, b=0.0)


def test_generator_makes_it_repeatable():
    g = E.Generator().manual_seed(7)
    x = to_np(init.normal_(E.empty(10), generator=g)).copy()
    g.manual_seed(7)
    y = to_np(init.normal_(E.empty(10), generator=g))
    np.testing.assert_array_equal(x, y)
    g.manual_seed(7)
    u1 = to_np(init.kaiming_uniform_(E.empty(4, 4), generator=g)).copy()
    g.manual_seed(7)
    u2 = to_np(init.kaiming_uniform_(E.empty(4, 4), generator=g))
    np.testing.assert_array_equal(u1, u2)


def test_in_place_without_grad_and_bumps_version():
    p = E.nn.Parameter(E.empty(3, 4))
    v = p._version
    init.uniform_(p)
    assert p._version > v and p.is_leaf and p.grad_fn is None and p.requires_grad
    for dt in (E.float64, E.float16):
        t = init.normal_(E.empty(5, dtype=dt))
        assert t.dtype is dt


@pytest.mark.parametrize("shape, groups", [((4, 4, 3), 1), ((6, 4, 3, 3), 2), ((2, 3, 3, 5, 1), 1)])
def test_dirac_passes_the_input_through(shape, groups):
    w = init.dirac_(E.empty(*shape, dtype=E.float64), groups=groups)
    expected = np.zeros(shape)
    per_group = shape[0] // groups
    centre = tuple(k // 2 for k in shape[2:])
    for g in range(groups):
        for d in range(min(per_group, shape[1])):
            expected[(g * per_group + d, d) + centre] = 1
    np.testing.assert_array_equal(w.numpy(), expected)
    if groups == 1 and shape[0] == shape[1] and len(shape) == 4:
        x = E.randn(2, shape[1], 5, 5, dtype=E.float64)
        y = E.nn.functional.conv2d(x, w, padding=(shape[2] // 2, shape[3] // 2))
        np.testing.assert_allclose(y.numpy(), x.numpy())


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 2, 3), (6, 6)])
def test_orthogonal_is_orthogonal_times_gain(shape):
    w = init.orthogonal_(E.empty(*shape, dtype=E.float64), gain=2.0)
    m = w.numpy().reshape(shape[0], -1)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, 4.0 * np.eye(len(gram)), atol=1e-12)


def test_orthogonal_half_precision_and_generator():
    a = init.orthogonal_(E.empty(4, 4, dtype=E.float16), generator=E.Generator().manual_seed(3))
    b = init.orthogonal_(E.empty(4, 4, dtype=E.float16), generator=E.Generator().manual_seed(3))
    assert a.dtype == E.float16
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    m = a.numpy().astype(np.float64)
    np.testing.assert_allclose(m @ m.T, np.eye(4), atol=5e-3)


def test_sparse_zeroes_a_fraction_of_each_column():
    w = init.sparse_(E.empty(10, 6, dtype=E.float64), sparsity=0.25, std=0.5)
    zeros = (w.numpy() == 0).sum(axis=0)
    np.testing.assert_array_equal(zeros, np.full(6, 3))  # ceil(0.25 * 10)
    assert 0.2 < w.numpy()[w.numpy() != 0].std() < 1.0


@pytest.mark.parametrize("fn, args, match", [
    ("dirac_", ((3, 3),), "3, 4, or 5 dimensions"),
    ("dirac_", ((3, 3, 3), 2), "divisible by groups"),
    ("orthogonal_", ((3,),), "2 or more dimensions"),
    ("sparse_", ((3, 3, 3), 0.1), "2 dimensions"),
])
def test_shape_errors(fn, args, match):
    shape, *rest = args
    with pytest.raises(ValueError, match=match):
        getattr(init, fn)(E.empty(*shape), *rest)


@pytest.mark.parametrize("old", ["uniform", "normal", "constant", "eye", "dirac",
                                 "xavier_uniform", "xavier_normal", "kaiming_uniform",
                                 "kaiming_normal", "orthogonal", "sparse"])
def test_deprecated_spellings_warn_and_work(old):
    args = {"constant": (0.5,), "sparse": (0.1,)}.get(old, ())
    shape = (3, 3, 3) if old == "dirac" else (4, 3)
    with pytest.warns(FutureWarning, match=f"nn.init.{old}` is now deprecated"):
        out = getattr(init, old)(E.empty(*shape), *args)
    assert out.shape == shape and getattr(init, old).__name__ == old
