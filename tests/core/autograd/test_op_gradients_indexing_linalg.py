"""Derivatives of the indexing and linear-algebra ops and of the hand-written ones
(``Tensor.to``, ``t[...]``, ``t[...] = v``) against closed-form numpy float64 values.
gradcheck/gradgradcheck of every sample run in test_op_gradients.py."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from helpers import assert_close

def leaf(x, dtype=E.float64):
    return E.tensor(np.asarray(x, dtype=np.float64), dtype=dtype, requires_grad=True)


A = np.array([[0.3, -1.2, 2.0], [-0.7, 0.9, 1.4]])
B = np.array([[1.1, -0.4], [0.2, 0.8], [-0.5, 1.3]])
G = np.array([[1.0, -2.0], [0.5, 3.0]])  # the incoming gradient of A @ B


def test_matmul_gradients_are_g_bt_and_at_g():
    a, b = leaf(A), leaf(B)
    (a @ b).backward(E.tensor(G))
    assert_close(a.grad, G @ B.T)
    assert_close(b.grad, A.T @ G)


def test_batched_matmul_sums_the_broadcast_batch():
    batch = np.stack([A, 2 * A])  # (2, 2, 3) @ (3, 2): b's gradient sums over the batch
    a, b = leaf(batch), leaf(B)
    (a @ b).sum().backward()
    ones = np.ones((2, 2, 2))
    assert_close(a.grad, ones @ B.T)
    assert_close(b.grad, (batch.transpose(0, 2, 1) @ ones).sum(0))


def test_einsum_matches_closed_form():
    a, b = leaf(A), leaf(B)
    E.einsum("ij,jk->ik", a, b).backward(E.tensor(G))
    assert_close(a.grad, G @ B.T)
    assert_close(b.grad, A.T @ G)


def test_addmm_scales_by_beta_and_alpha():
    c, m1, m2 = leaf(np.ones(2)), leaf(A), leaf(B)
    E.addmm(c, m1, m2, beta=0.5, alpha=-2.0).backward(E.tensor(G))
    assert_close(c.grad, 0.5 * G.sum(0))
    assert_close(m1.grad, -2.0 * G @ B.T)
    assert_close(m2.grad, -2.0 * A.T @ G)


def test_getitem_with_repeated_indices_accumulates():
    a = leaf(A)
    a[[0, 1, 0], 1:].sum().backward()
    assert_close(a.grad, np.array([[0.0, 2.0, 2.0], [0.0, 1.0, 1.0]]))


def test_setitem_gradients_skip_overwritten_positions():
    a, v = leaf(A), leaf([[5.0], [6.0]])
    y = a * 1
    y[:, 1:] = v  # v (2, 1) broadcasts to (2, 2): its gradient sums the 2 columns
    (y * E.tensor(np.arange(6.0).reshape(2, 3))).sum().backward()
    assert_close(a.grad, np.array([[0.0, 0.0, 0.0], [3.0, 0.0, 0.0]]))
    assert_close(v.grad, np.array([[1.0 + 2.0], [4.0 + 5.0]]))


def test_gather_and_index_select_scatter_back_with_repeats():
    a = leaf(A)
    (E.gather(a, 1, E.tensor([[2, 2], [0, 1]])).sum() +
     E.index_select(a, 1, E.tensor([0, 0])).sum()).backward()
    assert_close(a.grad, np.array([[2.0, 0.0, 2.0], [3.0, 1.0, 0.0]]))


@pytest.mark.parametrize("index, expected", [
    ([[-1, 0]], [[1.0, 0.0, 1.0]]),
    ([[2, -3]], [[1.0, 0.0, 1.0]]),
], ids=["minus_1", "minus_size"])
def test_take_along_dim_negative_indices_count_from_the_end(index, expected):
    a = leaf(A[:1])
    E.take_along_dim(a, E.tensor(index), 1).sum().backward()
    assert_close(a.grad, np.array(expected))


@pytest.mark.parametrize("dtype", [E.float32, E.float16])
def test_to_copy_casts_the_gradient_back_to_the_input_dtype(dtype):
    a = leaf(A)
    y = a.to(dtype)
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y * 3).sum().backward()
    assert a.grad.dtype is E.float64
    assert_close(a.grad, np.full(A.shape, 3.0))
