"""The flat-index paths of gather / scatter / scatter_add / scatter_reduce, the whole-mask
path of ``t[mask]`` / ``t[mask] = v``, masked_scatter through index_put_, index_copy's
expanded-vector scatter, combinations(r=2) from triu_indices and embedding_bag's
fixed-length bags (issue 30), each against a numpy reference (exact: they move values)."""
import itertools

import numpy as np
import pytest

import ember as E
from ember.autograd.gradcheck import gradcheck

rng = np.random.default_rng(7)


@pytest.mark.parametrize("shape,dim", [((10, 100), 1), ((10, 100), 0), ((3, 4, 5), 1),
                                       ((3, 4, 5), 2), ((3, 4, 5), 0), ((7,), 0)])
@pytest.mark.parametrize("idt", [np.int64, np.int32])
def test_gather_scatter_flat_match_numpy(shape, dim, idt):
    a = rng.standard_normal(shape).astype(np.float32)
    ishape = tuple(max(1, n - 1) if d != dim else n + 2 for d, n in enumerate(shape))
    idx = rng.integers(0, shape[dim], ishape).astype(idt)
    ref = np.take_along_axis(a[tuple(slice(0, n) if d != dim else slice(None)
                                     for d, n in enumerate(ishape))], idx, dim)
    np.testing.assert_array_equal(E.gather(E.tensor(a), dim, E.tensor(idx)).numpy(), ref)
    # scatter_add against np.add.at; scatter against a last-write loop on distinct indices
    src = rng.standard_normal(ishape).astype(np.float32)
    out = a.copy()
    coords = list(np.indices(ishape))
    coords[dim] = idx
    np.add.at(out, tuple(coords), src)
    got = E.scatter_add(E.tensor(a), dim, E.tensor(idx), E.tensor(src)).numpy()
    np.testing.assert_allclose(got, out, rtol=1e-6, atol=1e-6)
    got = E.scatter_reduce(E.tensor(a), dim, E.tensor(idx), E.tensor(src), "amax").numpy()
    out = a.copy()
    np.maximum.at(out, tuple(coords), src)
    np.testing.assert_array_equal(got, out)


def test_scatter_flat_and_expanded_vector():
    a = rng.standard_normal((6, 8)).astype(np.float32)
    perm = np.argsort(rng.random((6, 8)), axis=1)
    src = rng.standard_normal((6, 8)).astype(np.float32)
    out = a.copy()
    np.put_along_axis(out, perm, src, 1)
    np.testing.assert_array_equal(E.scatter(E.tensor(a), 1, E.tensor(perm),
                                            E.tensor(src)).numpy(), out)
    rows = rng.permutation(6)
    out = a.copy()
    out[rows] = src
    np.testing.assert_array_equal(E.index_copy(E.tensor(a), 0, E.tensor(rows),
                                               E.tensor(src)).numpy(), out)
    out = a.copy()
    out[:, [3, 1]] = src[:, :2]
    np.testing.assert_array_equal(
        E.index_copy(E.tensor(a), 1, E.tensor([3, 1]), E.tensor(src[:, :2])).numpy(), out)


def test_gather_bounds_errors():
    a = E.zeros(3, 4)
    for bad in (4, -1):
        with pytest.raises(IndexError, match="out of bounds"):
            E.gather(a, 1, E.tensor([[0, bad]]))
        with pytest.raises(IndexError, match="out of bounds"):
            E.scatter(a, 1, E.tensor([[0, bad]]), E.ones(1, 2))


@pytest.mark.parametrize("dtype", [E.float32, E.float64, E.float16, E.bfloat16, E.int64])
def test_mask_index_and_masked_scatter(dtype):
    a = E.tensor(rng.standard_normal((5, 7))).to(dtype)
    m = E.tensor(rng.random((5, 7)) > 0.4)
    np.testing.assert_array_equal(a[m].numpy(), a.numpy()[m.numpy()])
    src = E.tensor(rng.standard_normal(40)).to(dtype)
    ref = a.numpy().copy()
    ref[m.numpy()] = src.numpy()[:int(m.numpy().sum())]
    got = a.masked_scatter(m, src)
    assert got.dtype is dtype
    np.testing.assert_array_equal(got.numpy(), ref)
    row = E.tensor([True, False, True, False, False, False, True])  # broadcast mask
    ref = np.broadcast_to(a.numpy(), (5, 7)).copy()
    ref[np.broadcast_to(row.numpy(), (5, 7))] = src.numpy()[:15]
    np.testing.assert_array_equal(a.masked_scatter(row, src).numpy(), ref)
    with pytest.raises(RuntimeError, match="number of elements of source"):
        a.masked_scatter(m, src[:2])


def test_masked_scatter_gradcheck():
    x = E.tensor(rng.standard_normal((3, 4)), dtype=E.float64, requires_grad=True)
    s = E.tensor(rng.standard_normal(12), dtype=E.float64, requires_grad=True)
    m = E.tensor(rng.random((3, 4)) > 0.5)
    assert gradcheck(lambda x, s: x.masked_scatter(m, s), (x, s))


@pytest.mark.parametrize("n,r,rep", [(0, 2, False), (1, 2, False), (5, 2, False),
                                     (5, 2, True), (6, 3, False), (4, 3, True)])
def test_combinations_match_itertools(n, r, rep):
    a = np.arange(n, dtype=np.float32) * 1.5
    pick = itertools.combinations_with_replacement if rep else itertools.combinations
    ref = np.array([list(c) for c in pick(a.tolist(), r)], dtype=np.float32).reshape(-1, r)
    np.testing.assert_array_equal(E.combinations(E.tensor(a), r, rep).numpy(), ref)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_fixed_length_matches_reference(mode):
    w = rng.standard_normal((20, 6)).astype(np.float32)
    idx = rng.integers(0, 20, (7, 3))
    rows = w[idx]
    ref = {"sum": rows.sum(1), "mean": rows.mean(1), "max": rows.max(1)}[mode]
    got = E.nn.functional.embedding_bag(E.tensor(idx), E.tensor(w), mode=mode).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-6)
    psw = rng.random((7, 3)).astype(np.float32)
    if mode == "sum":
        got = E.nn.functional.embedding_bag(E.tensor(idx), E.tensor(w), mode="sum",
                                            per_sample_weights=E.tensor(psw)).numpy()
        np.testing.assert_allclose(got, (rows * psw[..., None]).sum(1), rtol=1e-6, atol=1e-6)
    wt = E.tensor(w.astype(np.float64), requires_grad=True)
    assert gradcheck(lambda t: E.nn.functional.embedding_bag(E.tensor(idx), t, mode=mode),
                     (wt,))
