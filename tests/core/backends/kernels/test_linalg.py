"""matmul, mm, bmm, addmm, dot, outer and einsum (kernels/linalg.py) against numpy float64."""
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from helpers import FLOAT_DTYPES, INT_DTYPES, LOW_FLOAT_DTYPES, assert_close, make

import ember as E

NUMERIC = INT_DTYPES + LOW_FLOAT_DTYPES + FLOAT_DTYPES
# torch.matmul's rank cases: (self shape, other shape)
MATMUL_CASES = [((4,), (4,)), ((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)),
                ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
                ((4,), (2, 4, 5)), ((2, 3, 4), (4,)), ((2, 1, 3, 4), (5, 4, 2)),
                ((0, 4), (4, 2)), ((3, 0), (0, 2))]


def tol(dtype):
    """Products of k=4 terms of size <= 3: float16 / bfloat16 round the result only."""
    return {"atol": 0.25} if dtype in LOW_FLOAT_DTYPES else {}


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("sa,sb", MATMUL_CASES)
def test_matmul_rank_cases(dtype, sa, sb):
    a, ra = make(sa, dtype)
    b, rb = make(sb, dtype, seed=1)
    expected = np.matmul(ra, rb)
    assert_close(E.matmul(a, b), expected, dtype, **tol(dtype))
    assert_close(a @ b, expected, dtype, **tol(dtype))
    assert_close(a.matmul(b), expected, dtype, **tol(dtype))


@settings(max_examples=50, deadline=None)
@given(batch_a=st.lists(st.integers(1, 3), max_size=3),
       batch_b=st.lists(st.integers(1, 3), max_size=3),
       n=st.integers(1, 4), k=st.integers(0, 4), m=st.integers(1, 4),
       drop_a=st.booleans(), drop_b=st.booleans())
def test_matmul_batch_broadcasting_fuzz(batch_a, batch_b, n, k, m, drop_a, drop_b):
    # Make the batch shapes broadcastable: where both have a dim, keep one side or use 1.
    for i in range(1, min(len(batch_a), len(batch_b)) + 1):
        if batch_a[-i] != batch_b[-i]:
            batch_b[-i] = 1
    sa = (k,) if drop_a else tuple(batch_a) + (n, k)
    sb = (k,) if drop_b else tuple(batch_b) + (k, m)
    a, ra = make(sa, E.float64)
    b, rb = make(sb, E.float64, seed=1)
    assert_close(a @ b, np.matmul(ra, rb), E.float64)


def test_matmul_promotes_and_keeps_ints():
    a, ra = make((2, 3), E.int32)
    b, rb = make((3, 2), E.float32, seed=1)
    assert_close(a @ b, ra @ rb, E.float32)
    c, rc = make((3, 2), E.uint8, seed=2)
    d, rd = make((2, 3), E.int8, seed=3)
    assert_close(d @ c, rd @ rc, E.int16)
    assert_close(E.dot(a[0], a[1]), ra[0] @ ra[1], E.int32)


def test_matmul_out():
    a, ra = make((2, 3), E.float32)
    b, rb = make((3, 4), E.float32, seed=1)
    out = E.empty(0)
    assert E.matmul(a, b, out=out) is out
    assert_close(out, ra @ rb)


def test_matmul_shape_errors():
    with pytest.raises(E.ShapeError, match=r"matmul\(\): mat1 and mat2 shapes cannot be "
                                           r"multiplied \(2x3 and 4x5\)"):
        E.ones((2, 3)) @ E.ones((4, 5))
    with pytest.raises(E.ShapeError, match=r"\(3 and 4\)"):
        E.ones(3) @ E.ones(4)
    with pytest.raises(E.ShapeError, match="at least 1 dimension.*0-D and 1-D"):
        E.matmul(E.tensor(1.0), E.ones(3))
    with pytest.raises(E.ShapeError, match=r"shapes do not broadcast: 'self' \[7, 2, 3\], "
                                           r"'other' \[6, 3, 5\]"):
        E.ones((7, 2, 3)) @ E.ones((6, 3, 5))
    with pytest.raises(TypeError, match="argument 'other' must be Tensor, not int"):
        E.matmul(E.ones((2, 2)), 2)


@pytest.mark.parametrize("op", ["matmul", "mm", "dot"])
def test_bool_products_are_refused_like_torch(op):
    a = E.ones(2, dtype=E.bool_) if op == "dot" else E.ones((2, 2), dtype=E.bool_)
    with pytest.raises(NotImplementedError, match=f"{op}: no kernel for CPUBoolType"):
        getattr(E, op)(a, a)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_mm_and_bmm(dtype):
    a, ra = make((3, 4), dtype)
    b, rb = make((4, 2), dtype, seed=1)
    assert_close(E.mm(a, b), ra @ rb, dtype, **tol(dtype))
    assert_close(a.mm(b), ra @ rb, dtype, **tol(dtype))
    p, rp = make((2, 3, 4), dtype)
    q, rq = make((2, 4, 5), dtype, seed=1)
    assert_close(E.bmm(p, q), rp @ rq, dtype, **tol(dtype))


def test_mm_bmm_errors():
    with pytest.raises(E.ShapeError, match=r"mm\(\): expected 'self' to be a 2-D tensor"):
        E.mm(E.ones(3), E.ones((3, 2)))
    with pytest.raises(E.ShapeError, match=r"mm\(\): mat1 and mat2 shapes cannot be "
                                           r"multiplied \(2x3 and 4x2\)"):
        E.mm(E.ones((2, 3)), E.ones((4, 2)))
    with pytest.raises(E.ShapeError, match=r"bmm\(\): expected 'mat2' to be a 3-D tensor"):
        E.bmm(E.ones((2, 2, 3)), E.ones((3, 2)))
    with pytest.raises(E.ShapeError, match="same batch size, got 2 and 3"):
        E.bmm(E.ones((2, 2, 3)), E.ones((3, 3, 2)))
    with pytest.raises(E.ShapeError, match=r"\(2x2x3 and 2x4x2\)"):
        E.bmm(E.ones((2, 2, 3)), E.ones((2, 4, 2)))


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("self_shape", [(3, 2), (2,), (3, 1), ()])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2), (0, -1)])
def test_addmm(dtype, self_shape, beta, alpha):
    c, rc = make(self_shape, dtype, seed=2)
    a, ra = make((3, 4), dtype)
    b, rb = make((4, 2), dtype, seed=1)
    if not dtype.is_floating_point:  # PyTorch truncates the scalars for integral dtypes
        beta, alpha = int(beta), int(alpha)
    expected = alpha * (ra @ rb) + (beta * rc if beta else 0)
    if not dtype.is_floating_point:  # wraps around like C (uint8: -1 -> 255)
        expected = expected.astype(np.int64).astype(dtype.numpy)
    assert_close(E.addmm(c, a, b, beta=beta, alpha=alpha), expected, dtype, **tol(dtype))


def test_addmm_beta_zero_ignores_nan_inplace_and_errors():
    a, ra = make((2, 3), E.float32)
    b, rb = make((3, 2), E.float32, seed=1)
    nan = E.full((2, 2), float("nan"))
    assert_close(E.addmm(nan, a, b, beta=0), ra @ rb)
    c, rc = make((2, 2), E.float32, seed=2)
    assert c.addmm_(a, b, alpha=2) is c
    assert_close(c, rc + 2 * (ra @ rb))
    with pytest.raises(E.ShapeError, match="shapes do not broadcast"):
        E.addmm(E.ones(4), a, b)
    before = E.ones((2, 1)).numpy().copy()
    small = E.ones((2, 1))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        small.addmm_(a, b)
    np.testing.assert_array_equal(small.numpy(), before)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_dot_and_outer(dtype):
    a, ra = make((5,), dtype)
    b, rb = make((5,), dtype, seed=1)
    assert_close(E.dot(a, b), ra @ rb, dtype, **tol(dtype))
    assert_close(a.dot(b), ra @ rb, dtype, **tol(dtype))
    c, rc = make((3,), dtype, seed=2)
    assert_close(E.outer(a, c), np.outer(ra, rc), dtype)


def test_dot_outer_errors_and_bool_outer():
    with pytest.raises(E.ShapeError, match="same number of elements, got 3 and 4"):
        E.dot(E.ones(3), E.ones(4))
    with pytest.raises(E.ShapeError, match="1-D tensors expected, but got 2-D and 1-D"):
        E.dot(E.ones((3, 1)), E.ones(3))
    with pytest.raises(E.ShapeError, match=r"outer\(\): expected 'vec2' to be a 1-D"):
        E.outer(E.ones(3), E.tensor(2.0))
    r = E.outer(E.tensor([True, False]), E.tensor([True, True]))
    assert r.dtype is E.bool_ and r.tolist() == [[True, True], [False, False]]


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii", [(3, 3)]),
    ("ij->ji", [(2, 3)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,i->", [(4,), (4,)]),
    ("...ij,...jk", [(5, 2, 3), (3, 4)]), ("i j , j k -> i k", [(2, 3), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("i,j->ij", [(40,), (200,)])])
def test_einsum(dtype, equation, shapes):
    pairs = [make(s, dtype, seed=i) for i, s in enumerate(shapes)]
    tensors, refs = [p[0] for p in pairs], [p[1] for p in pairs]
    expected = np.einsum(equation.replace(" ", ""), *refs)
    atol = {"atol": 0.5} if dtype in LOW_FLOAT_DTYPES else {}
    assert_close(E.einsum(equation, *tensors), expected, dtype, **atol)
    assert_close(E.einsum(equation, tensors), expected, dtype, **atol)


def test_einsum_promotes_and_never_returns_a_view():
    a, ra = make((2, 3), E.int32)
    b, rb = make((3, 4), E.float64, seed=1)
    assert_close(E.einsum("ij,jk->ik", a, b), ra @ rb, E.float64)
    t = E.einsum("ij->ji", b)
    assert not np.shares_memory(t.numpy(), b.numpy())


def test_einsum_errors():
    a = E.ones((2, 3))
    with pytest.raises(ValueError, match="names 2 operand.*1 tensor"):
        E.einsum("ij,jk->ik", a)
    with pytest.raises(E.ShapeError, match=r"subscripts in the equation \(3\) does not match "
                                           r"the number of dimensions \(2\) for operand 0"):
        E.einsum("ijk", a)
    with pytest.raises(E.ShapeError, match="subscript j has size 4 for operand 1 which does "
                                           "not broadcast with previously seen size 3"):
        E.einsum("ij,jk->ik", a, E.ones((4, 4)))
    with pytest.raises(ValueError, match="non-empty list"):
        E.einsum("ij")
    with pytest.raises(NotImplementedError, match="einsum: no kernel for CPUBoolType"):
        E.einsum("i,i", E.ones(2, dtype=E.bool_), E.ones(2, dtype=E.bool_))
    with pytest.raises(ValueError, match=r"einsum\(\):.*operand shapes \[\[2, 3\]\]"):
        E.einsum("ij->iz", a)


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16])
@pytest.mark.parametrize("op", ["matmul", "mm"])
def test_half_products_skip_the_fast_path(numpy_kernels, op, dtype):
    # float32 products rounded once, not numpy's own half-precision matmul
    rng = np.random.default_rng(0)
    a = rng.uniform(-2, 2, (3, 40)).astype(dtype.numpy)
    b = rng.uniform(-2, 2, (40, 2)).astype(dtype.numpy)
    r = numpy_kernels[op](a, b)
    expected = (a.astype(np.float32) @ b.astype(np.float32)).astype(dtype.numpy)
    assert r.dtype == dtype.numpy
    np.testing.assert_array_equal(r.view(np.uint16), expected.view(np.uint16))


def test_mm_fast_path_refuses_what_mm_refuses(numpy_kernels):
    mm = numpy_kernels["mm"]
    with pytest.raises(E.ShapeError, match=r"mm\(\): expected 'mat2' to be a 2-D tensor"):
        mm(np.ones((2, 3)), np.ones(3))  # numpy's matmul would take it
    with pytest.raises(E.ShapeError, match=r"^addmm\(\): mat1 and mat2 shapes cannot be "
                                           r"multiplied \(2x3 and 2x3\)"):
        mm(np.ones((2, 3)), np.ones((2, 3)), "addmm")
    with pytest.raises(TypeError, match="argument 'self' must be Tensor, not float"):
        mm(2.0, np.ones((2, 2)))


@pytest.mark.parametrize("op", ["matmul", "mm"])
def test_numpy_fast_path_fails_like_the_generic_kernels(numpy_kernels, generic_kernels,
                                                        assert_same, op):
    shapes = [(), (3,), (4,), (2, 3), (3, 2), (4, 2), (2, 2, 3), (3, 3, 2), (2, 3, 2)]
    for sa, sb in itertools.product(shapes, shapes):
        a = np.arange(math.prod(sa), dtype=np.float32).reshape(sa)
        b = np.arange(math.prod(sb), dtype=np.float32).reshape(sb) - 2
        outcomes = []
        for kernels in (numpy_kernels, generic_kernels):
            try:
                outcomes.append(kernels[op](a, b))
            except Exception as e:  # noqa: BLE001 - both paths must fail alike
                outcomes.append((type(e), str(e)))
        if isinstance(outcomes[1], tuple):
            assert outcomes[0] == outcomes[1], (sa, sb)
        else:
            assert_same(*outcomes)
