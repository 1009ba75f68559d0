"""The ``into:<op>`` kernels of the generated in-place ops (``ops/codegen.py``'s fast path)
against the functional op, and the rewritten pointwise paths (sign, sigmoid, equal, the
one-block fmod/remainder/floor_divide) against float64 / numpy references, with special
values, for float16, bfloat16, float32 and float64."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ember

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DTYPES = {"float16": ember.float16, "bfloat16": ember.bfloat16, "float32": ember.float32,
          "float64": ember.float64}
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3e38, -3e38, 0.5, -0.5]

INPLACE = {  # name -> (in-place call, functional reference)
    "neg_": (lambda t: t.neg_(), ember.neg),
    "abs_": (lambda t: t.abs_(), ember.abs),
    "sigmoid_": (lambda t: t.sigmoid_(), ember.sigmoid),
    "relu_": (lambda t: t.relu_(), ember.relu),
    "clamp_": (lambda t: t.clamp_(-0.5, 0.5), lambda t: ember.clamp(t, -0.5, 0.5)),
    "clamp_min": (lambda t: t.clamp_(min=0.2), lambda t: ember.clamp(t, min=0.2)),
    "sqrt_": (lambda t: t.sqrt_(), ember.sqrt),
    "exp_": (lambda t: t.exp_(), ember.exp),
    "tanh_": (lambda t: t.tanh_(), ember.tanh),
    "mul_": (lambda t: t.mul_(ember.full_like(t, 3)), lambda t: t * 3),
    "mul_number": (lambda t: t.mul_(2.5), lambda t: t * 2.5),
    "add_": (lambda t: t.add_(1), lambda t: t + 1),
    "sub_alpha": (lambda t: t.sub_(ember.full_like(t, 1), alpha=2), lambda t: t - 2),
    "div_": (lambda t: t.div_(ember.full_like(t, 3)), lambda t: t / 3),
    "lerp_": (lambda t: t.lerp_(ember.full_like(t, 1), 0.7),
              lambda t: ember.lerp(t, ember.full_like(t, 1), 0.7)),
    "lerp_low": (lambda t: t.lerp_(ember.full_like(t, 1), 0.2),
                 lambda t: ember.lerp(t, ember.full_like(t, 1), 0.2)),
}


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("size", [1, 9, 70000])
@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_matches_functional(name, dtype, size):
    call, ref_fn = INPLACE[name]
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-3, 3, size), SPECIAL])
    t = ember.tensor(x).to(DTYPES[dtype])
    want = ref_fn(t.clone())
    version = t._version
    assert call(t) is t
    assert t._version == version + 1 and t.dtype == want.dtype
    np.testing.assert_array_equal(t.double().numpy(), want.double().numpy())


def test_inplace_writes_through_views_and_keeps_errors():
    base = ember.tensor([1.0, -2.0, 3.0, -4.0])
    base[1:3].mul_(ember.tensor([2.0, 2.0]))
    np.testing.assert_array_equal(base.numpy(), [1.0, -4.0, 6.0, -4.0])
    strided = ember.tensor([1.0, -2.0, 3.0, -4.0])
    strided[::2].neg_()
    np.testing.assert_array_equal(strided.numpy(), [-1.0, -2.0, -3.0, -4.0])
    with pytest.raises(RuntimeError, match="single memory location"):
        ember.tensor([1.0, 2.0]).expand(2, 2).mul_(2)
    x = ember.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        x.mul_(ember.ones(2, 2))
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])  # unchanged
    with pytest.raises(RuntimeError, match="without overflow"):
        x.clamp_(max=1e39)
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])


def test_inplace_under_autograd_still_records():
    w = ember.tensor([1.0, 2.0], requires_grad=True)
    z = w * 1
    z.mul_(w)
    z.sigmoid_()
    z.sum().backward()
    s = 1 / (1 + np.exp(-np.array([1.0, 4.0])))
    np.testing.assert_allclose(w.grad.numpy(), s * (1 - s) * 2 * np.array([1.0, 2.0]),
                               rtol=1e-5)


@pytest.mark.parametrize("dtype", sorted(DTYPES) + ["int64", "int8"])
def test_sign_gives_zero_for_nan(dtype):
    if dtype.startswith("int"):
        x = np.array([-5, 0, 7, -128 if dtype == "int8" else -2 ** 62], dtype=dtype)
        np.testing.assert_array_equal(ember.sign(ember.tensor(x)).numpy(), np.sign(x))
        return
    x = np.array([-2.0, -0.0, 0.0, 3.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40])
    got = ember.sign(ember.tensor(x).to(DTYPES[dtype]))
    assert got.dtype == DTYPES[dtype]
    np.testing.assert_array_equal(got.double().numpy(), [-1, 0, 0, 1, 1, -1, 0,
                                                         1 if dtype == "float64" else 0 if
                                                         dtype == "float16" else 1,
                                                         -1 if dtype == "float64" else 0 if
                                                         dtype == "float16" else -1])


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_sigmoid_against_float64(dtype):
    x = np.concatenate([np.linspace(-90, 90, 4001), SPECIAL])
    t = ember.tensor(x).to(DTYPES[dtype])
    xs = t.double().numpy()
    with np.errstate(all="ignore"):
        ref = 1 / (1 + np.exp(-xs))
    got = ember.sigmoid(t).double().numpy()
    tol = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 2.4e-7, "float64": 1e-15}[dtype]
    tiny = {"float32": 1.2e-38, "float64": 0.0}.get(dtype, 6.2e-5)  # flushed where exp(-x)
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tiny)           # overflows


def test_equal_same_type_fast_path():
    a = np.random.default_rng(0).standard_normal(100000).astype(np.float32)
    x = ember.tensor(a)
    assert ember.equal(x, x.clone())
    b = a.copy()
    b[-1] += 1
    assert not ember.equal(x, ember.tensor(b))
    assert not ember.equal(x, x[:10])
    assert not ember.equal(ember.tensor([np.nan]), ember.tensor([np.nan]))
    assert ember.equal(x[::3], x[::3].clone())
    assert ember.equal(x, x.double())  # different dtypes: the general path


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("size", [300, 5000])
def test_divmod_one_block_is_exact(dtype, size):
    rng = np.random.default_rng(3)
    sp = np.array(SPECIAL + [7.0, -7.0, 2.5, -2.5, 1e10, -1e10], np.float32)
    grid_a, grid_b = np.meshgrid(sp, sp)
    a = np.concatenate([(rng.standard_normal(size) * 100).astype(np.float32), grid_a.ravel()])
    b = np.concatenate([(rng.standard_normal(size) * 3).astype(np.float32), grid_b.ravel()])
    a, b = a.astype(dtype), b.astype(dtype)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        want = {"fmod": np.fmod(a32, b32), "remainder": np.remainder(a32, b32)}
    for op, ref in want.items():
        got = getattr(ember, op)(ember.tensor(a), ember.tensor(b)).numpy().astype(np.float32)
        ref = ref.astype(dtype).astype(np.float32)
        same = (np.abs(got) == np.abs(ref)) | (np.isnan(got) & np.isnan(ref))
        assert same.all(), (op, a[~same][:3], b[~same][:3], got[~same][:3], ref[~same][:3])
    # floor_divide: the float64 quotient's floor where exact, torch's steps elsewhere
    got = ember.floor_divide(ember.tensor(a), ember.tensor(b)).numpy().astype(np.float64)
    q = np.floor(a32.astype(np.float64) / b32.astype(np.float64))
    exact = {np.float32: 2 ** 20, np.float16: 2 ** 7}.get(dtype, 2 ** 4)  # torch's steps above
    ok = np.isfinite(q) & np.isfinite(b32) & (np.abs(q) < exact)
    np.testing.assert_array_equal(got[ok], q[ok])
