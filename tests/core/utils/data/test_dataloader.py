"""DataLoader (ember.utils.data.dataloader)."""
import numpy as np
import pytest
from helpers import to_np

import ember as E
from ember.utils.data import (BatchSampler, DataLoader, Dataset, IterableDataset, Subset,
                              TensorDataset, default_collate)


def _ds(n=10):
    x = E.tensor(np.arange(n * 2, dtype=np.float32).reshape(n, 2))
    y = E.tensor(np.arange(n, dtype=np.int64))
    return TensorDataset(x, y)


class Squares(Dataset):
    """A plain map-style dataset (no batch fast path)."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return {"x": np.array([i, i * i], dtype=np.float32), "i": i}

    def __len__(self):
        return self.n


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def _labels(loader):
    return [to_np(yb).tolist() for _, yb in loader]


@pytest.mark.parametrize("drop_last,sizes", [(False, [4, 4, 2]), (True, [4, 4])])
def test_batches_in_order(drop_last, sizes):
    loader = DataLoader(_ds(10), batch_size=4, drop_last=drop_last)
    batches = list(loader)
    assert len(loader) == len(sizes) == len(batches)
    assert [b[1].shape[0] for b in batches] == sizes
    assert isinstance(batches[0], list) and batches[0][0].shape == (4, 2)
    assert batches[0][1].dtype is E.int64
    assert sum(_labels(loader), []) == list(range(sum(sizes)))


def test_fast_path_matches_default_collate():
    ds = _ds(9)
    g1, g2 = E.Generator().manual_seed(5), E.Generator().manual_seed(5)
    fast = list(DataLoader(ds, batch_size=4, shuffle=True, generator=g1))
    slow = list(DataLoader(ds, batch_size=4, shuffle=True, generator=g2,
                           collate_fn=default_collate))
    assert len(fast) == len(slow) == 3
    for (xf, yf), (xs, ys) in zip(fast, slow):
        assert xf.dtype is xs.dtype and yf.dtype is ys.dtype
        np.testing.assert_array_equal(to_np(xf), to_np(xs))
        np.testing.assert_array_equal(to_np(yf), to_np(ys))


def test_shuffle_is_reproducible_with_a_seeded_generator():
    ds = _ds(20)
    a = _labels(DataLoader(ds, batch_size=6, shuffle=True,
                           generator=E.Generator().manual_seed(0)))
    b = _labels(DataLoader(ds, batch_size=6, shuffle=True,
                           generator=E.Generator().manual_seed(0)))
    c = _labels(DataLoader(ds, batch_size=6, shuffle=True,
                           generator=E.Generator().manual_seed(1)))
    assert a == b and a != c
    assert sorted(sum(a, [])) == list(range(20))


def test_each_epoch_reshuffles():
    loader = DataLoader(_ds(20), batch_size=20, shuffle=True,
                        generator=E.Generator().manual_seed(0))
    first, second = _labels(loader), _labels(loader)
    assert first != second and sorted(first[0]) == sorted(second[0])


def test_shuffle_follows_manual_seed_without_generator():
    ds = _ds(20)
    E.manual_seed(11)
    a = _labels(DataLoader(ds, batch_size=5, shuffle=True))
    E.manual_seed(11)
    assert _labels(DataLoader(ds, batch_size=5, shuffle=True)) == a


def test_subset_of_tensor_dataset():
    sub = Subset(_ds(10), [9, 3, 5])
    assert _labels(DataLoader(sub, batch_size=2)) == [[9, 3], [5]]


def test_generic_dataset_is_collated():
    loader = DataLoader(Squares(5), batch_size=2)
    batches = list(loader)
    assert len(loader) == 3
    assert batches[0]["x"].shape == (2, 2) and batches[0]["x"].dtype is E.float32
    assert to_np(batches[1]["i"]).tolist() == [2, 3]


def test_custom_collate_fn_and_sampler():
    loader = DataLoader(Squares(6), batch_size=2, sampler=[5, 4, 0],
                        collate_fn=lambda items: [d["i"] for d in items])
    assert list(loader) == [[5, 4], [0]]


def test_batch_sampler_option():
    loader = DataLoader(Squares(5), batch_sampler=BatchSampler(range(5), 3, False))
    assert [to_np(b["i"]).tolist() for b in loader] == [[0, 1, 2], [3, 4]]
    assert len(loader) == 2


def test_batch_size_none_disables_batching():
    loader = DataLoader(Squares(3), batch_size=None)
    items = list(loader)
    assert len(loader) == 3
    assert isinstance(items[2]["x"], E.Tensor) and items[2]["x"].shape == (2,)
    assert items[2]["i"] == 2


@pytest.mark.parametrize("drop_last,expected", [(False, [[0, 1, 2], [3, 4]]),
                                                (True, [[0, 1, 2]])])
def test_iterable_dataset(drop_last, expected):
    loader = DataLoader(Stream(5), batch_size=3, drop_last=drop_last)
    assert [to_np(b).tolist() for b in loader] == expected
    assert len(loader) == len(expected)


def test_iterable_dataset_rejects_shuffle_and_samplers():
    for kw in ({"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}):
        with pytest.raises(ValueError, match="IterableDataset"):
            DataLoader(Stream(3), **kw)


@pytest.mark.parametrize("kw", [
    {"sampler": [0, 1], "shuffle": True},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "sampler": [0]},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True},
])
def test_mutually_exclusive_options(kw):
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(_ds(3), **kw)


def test_num_workers():
    # worker processes are tested in test_dataloader_workers.py
    assert DataLoader(_ds(3), num_workers=2).prefetch_factor == 2
    with pytest.raises(ValueError, match="non-negative"):
        DataLoader(_ds(3), num_workers=-1)


def test_bad_generator_and_batch_size():
    with pytest.raises(TypeError, match="Generator"):
        DataLoader(_ds(3), shuffle=True, generator=np.random.default_rng(0))
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(_ds(3), batch_size=0)
