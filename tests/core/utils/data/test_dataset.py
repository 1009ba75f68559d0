"""Datasets, samplers and random_split (ember.utils.data.dataset / sampler)."""
import warnings

import numpy as np
import pytest
from helpers import to_np

import ember as E
from ember.utils.data import (BatchSampler, ConcatDataset, Dataset, IterableDataset,
                              RandomSampler, SequentialSampler, Subset, SubsetRandomSampler,
                              TensorDataset, random_split)


def _ds(n=10):
    x = E.tensor(np.arange(n * 3, dtype=np.float32).reshape(n, 3))
    y = E.tensor(np.arange(n, dtype=np.int64))
    return TensorDataset(x, y), x, y


# --- TensorDataset -----------------------------------------------------------------------

def test_tensor_dataset_items_and_len():
    ds, x, y = _ds(5)
    assert len(ds) == 5
    xi, yi = ds[3]
    np.testing.assert_array_equal(to_np(xi), [9, 10, 11])
    assert yi.item() == 3 and yi.shape == ()
    xs, ys = ds[1:3]
    assert xs.shape == (2, 3) and to_np(ys).tolist() == [1, 2]


def test_tensor_dataset_first_dims_must_match():
    with pytest.raises(E.ShapeError, match=r"same first dimension 4.*\(4, 2\), \(3,\)"):
        TensorDataset(E.zeros(4, 2), E.zeros(3))
    with pytest.raises(ValueError):  # ShapeError is a ValueError too
        TensorDataset(E.zeros(4, 2), E.zeros(5, 2))


def test_tensor_dataset_rejects_bad_inputs():
    with pytest.raises(TypeError, match="position 1"):
        TensorDataset(E.zeros(2), np.zeros(2))
    with pytest.raises(E.ShapeError, match="0-dim"):
        TensorDataset(E.tensor(1.0))
    with pytest.raises(ValueError, match="at least one"):
        TensorDataset()


def test_tensor_dataset_fetch_batch_matches_items():
    ds, x, y = _ds(8)
    xb, yb = ds._fetch_batch([5, 0, 7])
    np.testing.assert_array_equal(to_np(xb), to_np(x)[[5, 0, 7]])
    assert yb.dtype is E.int64 and to_np(yb).tolist() == [5, 0, 7]


# --- Subset, ConcatDataset, base classes -------------------------------------------------

def test_subset():
    ds, _, _ = _ds(6)
    sub = Subset(ds, [4, 1])
    assert len(sub) == 2
    assert sub[0][1].item() == 4 and sub[1][1].item() == 1


def test_concat_dataset_and_add():
    a, b = Subset(_ds(3)[0], [0, 1, 2]), _ds(2)[0]
    cat = a + b
    assert isinstance(cat, ConcatDataset) and len(cat) == 5
    assert [cat[i][1].item() for i in range(5)] == [0, 1, 2, 0, 1]
    assert cat[-1][1].item() == 1
    with pytest.raises(IndexError):
        cat[5]
    with pytest.raises(ValueError):
        ConcatDataset([])


def test_base_classes_say_what_to_define():
    with pytest.raises(NotImplementedError, match="__getitem__"):
        Dataset()[0]
    with pytest.raises(NotImplementedError, match="__iter__"):
        iter(IterableDataset())
    with pytest.raises(TypeError):
        ConcatDataset([IterableDataset()])


# --- samplers ----------------------------------------------------------------------------

def test_sequential_sampler():
    s = SequentialSampler(range(4))
    assert list(s) == [0, 1, 2, 3] and len(s) == 4


def test_random_sampler_is_a_permutation_and_repeats_with_seed():
    data = range(20)
    a = list(RandomSampler(data, generator=E.Generator().manual_seed(7)))
    b = list(RandomSampler(data, generator=E.Generator().manual_seed(7)))
    c = list(RandomSampler(data, generator=E.Generator().manual_seed(8)))
    assert sorted(a) == list(range(20))
    assert a == b and a != c
    assert all(type(i) is int for i in a)


def test_random_sampler_default_generator_follows_manual_seed():
    E.manual_seed(3)
    a = list(RandomSampler(range(15)))
    E.manual_seed(3)
    assert list(RandomSampler(range(15))) == a


def test_random_sampler_num_samples_and_replacement():
    g = E.Generator().manual_seed(0)
    s = RandomSampler(range(4), num_samples=10, generator=g)
    got = list(s)
    assert len(s) == 10 and len(got) == 10
    assert sorted(got[:4]) == sorted(got[4:8]) == [0, 1, 2, 3]  # whole permutations first
    r = list(RandomSampler(range(3), replacement=True, num_samples=50, generator=g))
    assert len(r) == 50 and set(r) <= {0, 1, 2}
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(TypeError, match="Generator"):
        RandomSampler(range(3), generator=np.random.default_rng(0))


def test_subset_random_sampler():
    s = SubsetRandomSampler([10, 20, 30], generator=E.Generator().manual_seed(1))
    assert sorted(s) == [10, 20, 30] and len(s) == 3


@pytest.mark.parametrize("drop_last,expected", [(False, [[0, 1], [2, 3], [4]]),
                                                (True, [[0, 1], [2, 3]])])
def test_batch_sampler(drop_last, expected):
    s = BatchSampler(SequentialSampler(range(5)), 2, drop_last)
    assert list(s) == expected and len(s) == len(expected)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, None])
def test_batch_sampler_rejects_bad_batch_size(bad):
    with pytest.raises(ValueError, match="batch_size"):
        BatchSampler(range(3), bad, False)


def test_batch_sampler_rejects_non_bool_drop_last():
    with pytest.raises(ValueError, match="drop_last"):
        BatchSampler(range(3), 2, 1)


# --- random_split ------------------------------------------------------------------------

def test_random_split_lengths_disjoint_and_seeded():
    ds, _, _ = _ds(10)
    a, b = random_split(ds, [7, 3], generator=E.Generator().manual_seed(0))
    assert len(a) == 7 and len(b) == 3
    assert sorted(list(a.indices) + list(b.indices)) == list(range(10))
    a2, _ = random_split(ds, [7, 3], generator=E.Generator().manual_seed(0))
    assert list(a2.indices) == list(a.indices)


def test_random_split_fractions_distribute_remainder():
    parts = random_split(range(10), [0.33, 0.33, 0.34], generator=E.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [4, 3, 3]  # floor gives 3,3,3; the 1 left goes first


def test_random_split_errors():
    with pytest.raises(ValueError, match="does not equal"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="non-negative"):
        random_split(range(3), [4, -1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="between 0 and 1"):
            random_split(range(3), [1.5, -0.5])


# --- negative indices through the batch fast path (issue 35, class 10) ---------------------

@pytest.mark.parametrize("indices", [[0, -1, -2], [-5, 4], [-1], [3, -3, 0, -5]])
@pytest.mark.parametrize("wrap", ["tensor dataset", "subset"])
def test_negative_indices_fetch_the_same_batch_as_per_sample_access(indices, wrap):
    ds = TensorDataset(E.arange(5.0), E.arange(5) * 10)
    if wrap == "subset":
        ds, indices = Subset(ds, indices), list(range(len(indices)))
    loader = E.utils.data.DataLoader(ds, sampler=indices, batch_size=len(indices))
    (x, y), = list(loader)
    want = [ds[i] for i in indices]
    assert x.tolist() == [w[0].item() for w in want]
    assert y.tolist() == [w[1].item() for w in want]


def test_a_negative_index_past_the_start_raises_index_error():
    ds = TensorDataset(E.arange(5.0))
    with pytest.raises(IndexError, match="-6 is out of range"):
        list(E.utils.data.DataLoader(ds, sampler=[0, -6], batch_size=2))
