"""DistributedSampler against torch's: the same indices without shuffling, the same
structure with it (ember's permutation differs from torch's only by the generator)."""
from __future__ import annotations

import pytest
from helpers import needs_torch

from ember.utils.data.distributed import DistributedSampler

CASES = [(10, 3, False), (10, 3, True), (11, 2, False), (11, 2, True), (4, 4, False),
         (3, 5, False), (2, 7, False), (12, 4, True), (0, 2, False)]


def _torch_sampler():
    """torch's DistributedSampler, or a skip of the test without torch."""
    needs_torch()
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    return TorchSampler


def _shares(n, replicas, drop_last, cls, **kw):
    return [list(cls(range(n), num_replicas=replicas, rank=r, drop_last=drop_last, **kw))
            for r in range(replicas)]


@pytest.mark.parametrize("n,replicas,drop_last", CASES)
def test_without_shuffle_equals_torch(n, replicas, drop_last):
    TorchSampler = _torch_sampler()
    got = _shares(n, replicas, drop_last, DistributedSampler, shuffle=False)
    want = _shares(n, replicas, drop_last, TorchSampler, shuffle=False)
    assert got == want
    s = DistributedSampler(range(n), replicas, 0, shuffle=False, drop_last=drop_last)
    assert len(s) == len(got[0]) == TorchSampler(range(n), replicas, 0,
                                                    drop_last=drop_last).num_samples


@pytest.mark.parametrize("n,replicas,drop_last", CASES)
def test_shuffled_has_torch_structure(n, replicas, drop_last):
    """Interleaved shares of one permutation padded by wrapping round: map torch's
    permutation onto ember's and the shares map onto each other."""
    TorchSampler = _torch_sampler()
    got = _shares(n, replicas, drop_last, DistributedSampler, seed=7)
    want = _shares(n, replicas, drop_last, TorchSampler, seed=7)
    assert [len(s) for s in got] == [len(s) for s in want]
    order = [got[r][k] for k in range(len(got[0])) for r in range(replicas)]
    torch_order = [want[r][k] for k in range(len(want[0])) for r in range(replicas)]
    m = min(n, len(order))
    assert len(set(order[:m])) == m == len(set(torch_order[:m]))  # distinct before padding
    if not drop_last:
        assert sorted(order[:m]) == list(range(n))                 # a whole permutation
    relabel = dict(zip(torch_order[:m], order[:m]))
    assert [relabel[i] for i in torch_order] == order     # the same padding and interleave


def test_epochs_and_seeds_change_the_order_and_ranks_agree():
    a = DistributedSampler(range(50), 2, 0, seed=1)
    b = DistributedSampler(range(50), 2, 1, seed=1)
    first = list(a)
    assert first == list(a)                               # same epoch: same order
    assert sorted(first + list(b)) == list(range(50))     # the ranks split one permutation
    a.set_epoch(1)
    assert list(a) != first
    assert list(DistributedSampler(range(50), 2, 0, seed=2)) != first


def test_bad_rank_and_no_group():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval "
                                         r"\[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(RuntimeError, match="init_process_group"):
        DistributedSampler(range(4))
