"""The random fills and sampling ops (kernels/sampling.py): distributions at fixed seeds,
reproducibility, dtypes, and errors that leave the tensor and its version as they were.

Statistical bounds: N = 10^5 draws; a mean is within 5 standard errors of its expectation
and a Kolmogorov-Smirnov distance below 2.7 / sqrt(N) (a p-value of about 1e-6 for a
correct sampler). The seeds are fixed, so the checks cannot flake; each one fails for a
sampler with the wrong parameter (a shift of a few standard errors)."""
import math

import numpy as np
import pytest
from helpers import to_np

import ember as E
from ember.errors import DtypeError, ShapeError

N = 100_000


def _draw(fill, dtype=E.float64, n=N, seed=0):
    return to_np(fill(E.empty(n, dtype=dtype), E.Generator().manual_seed(seed))).astype(float)


def _assert_mean(x, mean, sd):
    assert abs(x.mean() - mean) <= 5 * sd / math.sqrt(x.size), (x.mean(), mean)


def _assert_ks(x, cdf):
    x = np.sort(x)
    f = cdf(x)
    n = x.size
    d = max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))
    assert d < 2.7 / math.sqrt(n), d


_erf = np.vectorize(math.erf)


def _normal_cdf(mean, std):
    return lambda x: 0.5 * (1 + _erf((x - mean) / (std * math.sqrt(2))))


CONTINUOUS = {  # fill, its CDF
    "normal_": (lambda t, g: t.normal_(1.5, 2.0, generator=g), _normal_cdf(1.5, 2.0)),
    "uniform_": (lambda t, g: t.uniform_(-1, 3, generator=g), lambda x: (x + 1) / 4),
    "exponential_": (lambda t, g: t.exponential_(2.0, generator=g),
                     lambda x: 1 - np.exp(-2 * x)),
    "log_normal_": (lambda t, g: t.log_normal_(0.5, 0.75, generator=g),
                    lambda x: _normal_cdf(0.5, 0.75)(np.log(x))),
    "cauchy_": (lambda t, g: t.cauchy_(1.0, 2.0, generator=g),
                lambda x: 0.5 + np.arctan((x - 1) / 2) / math.pi),
}


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_fills_follow_their_distribution(name):
    fill, cdf = CONTINUOUS[name]
    _assert_ks(_draw(fill), cdf)
    with pytest.raises(AssertionError):  # the check can fail: another seed's shifted draws
        _assert_ks(_draw(fill, seed=1) + 0.1, cdf)


def test_discrete_fills_follow_their_distribution():
    b = _draw(lambda t, g: t.bernoulli_(0.3, generator=g))
    assert set(np.unique(b)) == {0.0, 1.0}
    _assert_mean(b, 0.3, math.sqrt(0.3 * 0.7))
    k = _draw(lambda t, g: t.geometric_(0.3, generator=g), dtype=E.int64)
    assert k.min() == 1
    _assert_mean(k, 1 / 0.3, math.sqrt(0.7) / 0.3)
    for j in range(1, 6):  # P(K = j) = 0.7^(j-1) 0.3
        p = 0.7 ** (j - 1) * 0.3
        _assert_mean(k == j, p, math.sqrt(p * (1 - p)))
    r = _draw(lambda t, g: t.random_(-2, 5, generator=g), dtype=E.int64)
    assert set(np.unique(r)) == set(range(-2, 5))
    for j in range(-2, 5):
        _assert_mean(r == j, 1 / 7, math.sqrt(6) / 7)


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16, E.float32, E.float64])
def test_fills_keep_dtype_and_uniform_stays_below_to(dtype):
    x = E.empty(N, dtype=dtype).uniform_(0, 1, generator=E.Generator().manual_seed(0))
    v = to_np(x)
    assert x.dtype is dtype and v.min() >= 0 and v.max() < 1  # no draw rounds up to `to`
    for fill in ("normal_", "exponential_", "log_normal_", "cauchy_"):
        assert getattr(E.empty(4, dtype=dtype), fill)().dtype is dtype
    assert E.full((3,), 2.0, dtype=dtype).uniform_(5, 5).tolist() == [5, 5, 5]


def test_fills_repeat_under_manual_seed_and_generator():
    E.manual_seed(11)
    a = E.empty(6).normal_()
    b = E.empty(6).normal_()
    E.manual_seed(11)
    assert E.empty(6).normal_().tolist() == a.tolist() and a.tolist() != b.tolist()
    g = E.Generator().manual_seed(3)
    state = g.get_state()
    c = E.empty(6, dtype=E.int32).random_(100, generator=g)
    g.set_state(state)
    assert E.empty(6, dtype=E.int32).random_(100, generator=g).tolist() == c.tolist()
    E.manual_seed(11)  # an explicit generator leaves the default one alone
    E.empty(3).uniform_(generator=E.Generator().manual_seed(0))
    assert E.empty(6).normal_().tolist() == a.tolist()


@pytest.mark.parametrize("dtype,lo,hi", [(E.int8, 0, 127), (E.uint8, 0, 255), (E.bool_, 0, 1),
                                         (E.float16, 0, 2048), (E.bfloat16, 0, 256),
                                         (E.int32, 0, 2**31 - 1)])
def test_random_defaults_per_dtype(dtype, lo, hi):
    x = to_np(E.empty(20_000, dtype=dtype).random_(generator=E.Generator().manual_seed(0)))
    assert x.min() >= lo and x.max() <= hi and np.all(x == np.floor(x))
    if hi <= 256:  # every value is hit, the top one included
        assert x.min() == lo and x.max() == hi
    big = to_np(E.empty(1000, dtype=E.int64).random_())
    assert big.min() >= 0 and big.max() > 2 ** 62
    f32 = to_np(E.empty(1000).random_())
    assert f32.max() <= 2 ** 24 and f32.max() > 2 ** 23
    top = to_np(E.empty(20_000, dtype=E.int8).random_(120, None))
    assert top.min() == 120 and top.max() == 127
    assert E.empty(50, dtype=E.int64).random_(3).max().item() == 2


def test_uniform_and_random_take_the_keyword_from():
    g = E.Generator().manual_seed(0)
    x = E.empty(100).uniform_(**{"from": -3, "to": -2}, generator=g)
    assert x.min().item() >= -3 and x.max().item() < -2
    y = E.empty(100, dtype=E.int64).random_(**{"from": 7, "to": 9})
    assert set(y.tolist()) == {7, 8}
    with pytest.raises(TypeError, match="both 'from' and 'from_'"):
        E.empty(2).uniform_(**{"from": 0, "from_": 1})


BAD_FILLS = [
    (lambda x: x.normal_(0, -1), RuntimeError, r"std >= 0.0, but got std=-1"),
    (lambda x: x.normal_(0, math.nan), RuntimeError, "std >= 0.0"),
    (lambda x: x.uniform_(1, 0), RuntimeError, "from <= to, but got from=1 > to=0"),
    (lambda x: x.uniform_(0, math.inf), RuntimeError, "finite range"),
    (lambda x: x.bernoulli_(1.5), RuntimeError, r"p in \[0, 1\], but got p=1.5"),
    (lambda x: x.bernoulli_(E.tensor([0.5, 2.0, 0.1])), RuntimeError, r"in \[0, 1\]"),
    (lambda x: x.bernoulli_(E.tensor([0.5, 0.5])), ShapeError, "cannot be expanded"),
    (lambda x: x.exponential_(0), RuntimeError, "lambd > 0.0, but got lambd=0"),
    (lambda x: x.geometric_(1), RuntimeError, r"p in \(0, 1\), but got p=1"),
    (lambda x: x.log_normal_(1, 0), RuntimeError, "std > 0.0, but got std=0"),
    (lambda x: x.cauchy_(0, -1), RuntimeError, "sigma > 0.0, but got sigma=-1"),
    (lambda x: x.random_(3, 3), RuntimeError, "from=3 >= to=3"),
    (lambda x: x.random_(-5), RuntimeError, "from=0 >= to=-5"),
    (lambda x: x.random_(2.5), TypeError, "random_"),
    (lambda x: x.normal_(generator=E.Generator("cuda")), RuntimeError, "'cpu' generator"),
]


@pytest.mark.parametrize("call,err,msg", BAD_FILLS)
def test_bad_arguments_leave_the_tensor_as_it_was(call, err, msg):
    x = E.tensor([1.0, 2.0, 3.0])
    v = x._version
    with pytest.raises(err, match=msg):
        call(x)
    assert x.tolist() == [1.0, 2.0, 3.0] and x._version == v


def test_dtype_and_bounds_errors():
    i = E.tensor([1, 2, 3])
    for fill in ("normal_", "uniform_", "exponential_", "log_normal_", "cauchy_"):
        with pytest.raises(DtypeError, match="expected a floating-point 'self'.*int64"):
            getattr(i, fill)()
    assert i.tolist() == [1, 2, 3]
    assert set(i.bernoulli_(0.5).tolist()) <= {0, 1} and i.geometric_(0.5).min().item() >= 1
    u8 = E.zeros(3, dtype=E.uint8)
    with pytest.raises(RuntimeError, match="'from' within uint8's range"):
        u8.random_(-1, 5)
    with pytest.raises(RuntimeError, match="'to - 1' within uint8's range"):
        u8.random_(0, 300)
    with pytest.raises(RuntimeError, match="'from' <= 127"):
        E.zeros(3, dtype=E.int8).random_(200, None)


def test_fills_bump_the_version_and_refuse_expanded_and_leaves():
    x = E.zeros(3)
    x.normal_()
    x.random_(4)
    assert x._version == 2
    with pytest.raises(RuntimeError, match="expand"):
        E.zeros(1).expand(3).uniform_()
    leaf = E.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf.normal_()
    with E.no_grad():
        leaf.normal_()  # what nn.init does
    y = leaf * 2
    y.exponential_().sum().backward()
    assert leaf.grad.tolist() == [0.0, 0.0, 0.0]  # PyTorch's zero formula


def test_bernoulli_functional_and_tensor_p():
    p = E.tensor([0.0, 1.0, 0.25] * (N // 3))
    b = E.bernoulli(p, generator=E.Generator().manual_seed(0))
    v = to_np(b).reshape(-1, 3)
    assert b.dtype is E.float32 and b.shape == p.shape
    assert np.all(v[:, 0] == 0) and np.all(v[:, 1] == 1)
    _assert_mean(v[:, 2], 0.25, math.sqrt(0.25 * 0.75))
    h = E.zeros(2, N // 2, dtype=E.float16).bernoulli_(E.tensor([[0.1], [0.9]]))
    assert h.dtype is E.float16
    _assert_mean(to_np(h[1]), 0.9, 0.3)
    _assert_mean(to_np(h[0]), 0.1, 0.3)
    c = E.zeros(N, dtype=E.int64).bernoulli(0.7)  # bernoulli.p: self's dtype, not its values
    assert c.dtype is E.int64
    _assert_mean(to_np(c), 0.7, math.sqrt(0.21))
    with pytest.raises(RuntimeError, match=r"every probability in \[0, 1\].*NaN"):
        E.bernoulli(E.tensor([0.5, math.nan]))
    with pytest.raises(DtypeError, match="'input'"):
        E.bernoulli(E.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="p=2.0"):
        E.bernoulli(E.zeros(2), 2.0)


def test_normal_overloads_shapes_dtypes_and_statistics():
    g = E.Generator().manual_seed(0)
    mean = E.tensor([-5.0, 0.0, 5.0], dtype=E.float64)
    std = E.tensor([[0.5], [2.0]]).expand(2, 3).repeat(N // 2, 1)
    x = E.normal(mean, std, generator=g)
    assert x.shape == (N, 3) and x.dtype is E.float64  # mean's dtype, broadcast shape
    v = to_np(x).reshape(N // 2, 2, 3)
    for i, s in enumerate((0.5, 2.0)):
        for j, m in enumerate((-5.0, 0.0, 5.0)):
            _assert_mean(v[:, i, j], m, s)
            assert abs(v[:, i, j].std() - s) < 5 * s / math.sqrt(N)  # SE of sd ~ s / sqrt(2n)
    assert E.normal(mean, 2.0).shape == (3,)
    assert E.normal(1.0, E.ones(2, dtype=E.float16)).dtype is E.float16
    f = E.normal(2.0, 3.0, (N,), generator=g)
    assert f.dtype is E.float32
    _assert_ks(to_np(f).astype(float), _normal_cdf(2.0, 3.0))
    d = E.normal(0, 1, size=(2, 3), dtype=E.float64, requires_grad=True)
    assert d.shape == (2, 3) and d.dtype is E.float64 and d.requires_grad and d.is_leaf
    E.manual_seed(5)
    a = E.normal(mean, 1.0)
    E.manual_seed(5)
    assert E.normal(mean, 1.0).tolist() == a.tolist()


def test_normal_gradients_are_zero_like_pytorch():
    m = E.zeros(3, requires_grad=True)
    s = E.ones(3, requires_grad=True)
    y = E.normal(m, s)
    assert y.requires_grad
    (y * 3).sum().backward()
    assert m.grad.tolist() == [0.0] * 3 and s.grad.tolist() == [0.0] * 3


def test_normal_errors():
    with pytest.raises(RuntimeError, match="std >= 0.0, but got std=-1"):
        E.normal(E.zeros(2), -1.0)
    with pytest.raises(RuntimeError, match="every element of std >= 0.0"):
        E.normal(E.zeros(2), E.tensor([1.0, -1.0]))
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        E.normal(0.0, -1.0, (2,))
    with pytest.raises(DtypeError, match="'mean'"):
        E.normal(E.tensor([0, 1]), E.ones(2))
    with pytest.raises(DtypeError, match="int64"):
        E.normal(0.0, 1.0, (2,), dtype=E.int64)
    with pytest.raises(ShapeError, match="broadcast"):
        E.normal(E.zeros(2), E.ones(3))
    with pytest.raises(TypeError, match="invalid combination"):
        E.normal(0.0, 1.0)


@pytest.mark.parametrize("rate", [0.0, 0.5, 4.0, 9.99, 10.0, 30.0, 1000.0])
def test_poisson_moments(rate):
    k = to_np(E.poisson(E.full((N,), rate, dtype=E.float64),
                        generator=E.Generator().manual_seed(0)))
    assert np.all(k == np.floor(k)) and k.min() >= 0
    if rate == 0:
        assert k.max() == 0
        return
    _assert_mean(k, rate, math.sqrt(rate))
    # the sample variance: its SE is sqrt((mu4 - sigma^4) / n) = sqrt((rate + 2 rate^2) / n)
    assert abs(k.var() - rate) < 5 * math.sqrt((rate + 2 * rate * rate) / N)
    if rate < 40:  # the probabilities themselves, on both sides of the algorithm switch
        for j in range(int(rate) - 2, int(rate) + 3):
            if j >= 0:
                p = math.exp(-rate + j * math.log(rate) - math.lgamma(j + 1))
                _assert_mean(k == j, p, math.sqrt(p * (1 - p)))


def test_poisson_dtype_errors_and_reproducibility():
    r = E.tensor([[1.0, 2.0], [3.0, 50.0]], dtype=E.float16)
    assert E.poisson(r).dtype is E.float16 and E.poisson(r).shape == (2, 2)
    g = E.Generator().manual_seed(4)
    a = E.poisson(r, g)  # generator may be positional, as in torch.poisson
    assert E.poisson(r, E.Generator().manual_seed(4)).tolist() == a.tolist()
    with pytest.raises(RuntimeError, match="non-negative"):
        E.poisson(E.tensor([1.0, -1.0]))
    with pytest.raises(RuntimeError, match="non-negative"):
        E.poisson(E.tensor([math.nan]))
    with pytest.raises(RuntimeError, match="finite"):
        E.poisson(E.tensor([math.inf]))
    with pytest.raises(DtypeError):
        E.poisson(E.tensor([1, 2]))


def test_multinomial_with_replacement_matches_the_weights():
    w = E.tensor([[1.0, 0.0, 3.0, 6.0], [0.0, 0.0, 0.0, 2.0]])  # unnormalized weights
    s = E.multinomial(w, N, replacement=True, generator=E.Generator().manual_seed(0))
    assert s.dtype is E.int64 and s.shape == (2, N)
    counts = np.stack([np.bincount(r, minlength=4) for r in s.numpy()]) / N
    assert counts[0, 1] == 0 and counts[1].tolist() == [0, 0, 0, 1]
    for j, p in enumerate((0.1, 0.0, 0.3, 0.6)):
        _assert_mean(s.numpy()[0] == j, p, math.sqrt(p * (1 - p)))
    assert E.tensor([0.2, 0.8]).multinomial(3, True).shape == (3,)


def test_multinomial_without_replacement_draws_distinct_indices_by_weight():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    s = E.multinomial(E.tensor(p).expand(N, 4), 2, generator=E.Generator().manual_seed(0))
    first, second = s.numpy()[:, 0], s.numpy()[:, 1]
    assert np.all(first != second)
    # P(first = j) = p_j; P(second = j) = sum_i p_i p_j / (1 - p_i) over i != j
    for j in range(4):
        _assert_mean(first == j, p[j], math.sqrt(p[j] * (1 - p[j])))
        q = sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j)
        _assert_mean(second == j, q, math.sqrt(q * (1 - q)))
    perm = E.multinomial(E.tensor([0.5, 1.0, 0.0, 2.0, 0.1]), 5)
    assert sorted(perm.tolist()) == [0, 1, 2, 3, 4] and perm[-1].item() == 2  # zero weight last
    assert E.multinomial(E.ones(0, 3), 2).shape == (0, 2)


def test_multinomial_repeats_under_the_seed():
    w = E.tensor([0.3, 0.3, 0.4])
    E.manual_seed(2)
    a = E.multinomial(w, 3)
    E.manual_seed(2)
    assert E.multinomial(w, 3).tolist() == a.tolist()


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial_errors(replacement):
    cases = [(E.tensor(0.5), 1, ShapeError, "1-D or 2-D"),
             (E.ones(1, 1, 2), 1, ShapeError, "1-D or 2-D"),
             (E.tensor([1, 2]), 1, DtypeError, "floating-point"),
             (E.tensor([0.2, 0.8]), 0, RuntimeError, "num_samples > 0"),
             (E.tensor([-0.2, 0.8]), 1, RuntimeError, "`inf`, `nan` or element < 0"),
             (E.tensor([math.inf, 0.8]), 1, RuntimeError, "`inf`, `nan` or element < 0"),
             (E.tensor([math.nan, 0.8]), 1, RuntimeError, "`inf`, `nan` or element < 0"),
             (E.tensor([[0.0, 0.0], [1.0, 1.0]]), 1, RuntimeError, "sum of probabilities <= 0")]
    for w, n, err, msg in cases:
        with pytest.raises(err, match=msg):
            E.multinomial(w, n, replacement)
    if not replacement:
        with pytest.raises(RuntimeError, match="num_samples <= 2 categories without"):
            E.multinomial(E.tensor([0.2, 0.8]), 3)
    with pytest.raises(TypeError, match="num_samples"):
        E.multinomial(E.tensor([0.2, 0.8]), 1.0, replacement)
