"""DataLoader(num_workers > 0): worker processes (ember.utils.data._worker, _multiprocess).

Every loader here uses 2 workers and the fork start method (starting one costs ~50 ms);
batches are compared with the same loader at num_workers=0 and seeds with torch's own
derivation.
"""
import gc
import os
import pickle
import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from helpers import to_np

import ember as E
from ember.utils.data import (BatchSampler, DataLoader, Dataset, IterableDataset,
                              TensorDataset, get_worker_info)
from ember.utils.data._worker import worker_seeds
from ember.utils.data.dataloader import _base_seed

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="uses the fork start method")


def _workers(ds, **kw):
    kw.setdefault("num_workers", 2)
    return DataLoader(ds, multiprocessing_context="fork", **kw)


def _plain(batch):
    """A batch as nested Python lists/dicts, comparable with ==."""
    if isinstance(batch, E.Tensor):
        return to_np(batch).tolist()
    if isinstance(batch, dict):
        return {k: _plain(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return [_plain(b) for b in batch]
    return batch


def _tensors(n=11):
    x = E.tensor(np.arange(n * 3, dtype=np.float32).reshape(n, 3))
    return TensorDataset(x, E.arange(n))


class Items(Dataset):
    """Sample i: its index, the worker's id and pid, and three random draws."""

    def __init__(self, n=12, slow=()):
        self.n, self.slow = n, set(slow)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i in self.slow:
            time.sleep(0.2)
        info = get_worker_info()
        return {"i": i, "worker": -1 if info is None else info.id, "pid": os.getpid(),
                "ember": float(E.rand(()).item()), "random": random.random(),
                "numpy": float(np.random.rand())}


# --- batches as without workers --------------------------------------------------------------

@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("dataset", [_tensors(), Items(11)], ids=["TensorDataset", "Dataset"])
def test_same_batches_as_in_process(dataset, shuffle):
    def indices(**kw):  # the sample indices of each batch (Items' draws differ by process)
        E.manual_seed(3)
        batches = list(DataLoader(dataset, batch_size=4, shuffle=shuffle, **kw))
        if isinstance(dataset, TensorDataset):
            assert batches[0][0].dtype is E.float32 and batches[0][1].dtype is E.int64
            np.testing.assert_array_equal(to_np(batches[0][0]),
                                          to_np(dataset.tensors[0])[to_np(batches[0][1])])
            return [_plain(b[1]) for b in batches]
        return [_plain(b["i"]) for b in batches]
    expected = indices()
    assert indices(num_workers=2, multiprocessing_context="fork") == expected
    flat = sum(expected, [])
    assert sorted(flat) == list(range(11)) and (flat != sorted(flat)) == shuffle


def test_batches_keep_sampler_order_when_workers_finish_out_of_order():
    # batch 0 (worker 0) is the slowest: batches 1-3 arrive first and must wait
    loader = _workers(Items(12, slow={0, 1, 2}), batch_size=3, prefetch_factor=2)
    batches = list(loader)
    assert [b["i"].tolist() for b in batches] == [[0, 1, 2], [3, 4, 5], [6, 7, 8],
                                                  [9, 10, 11]]
    assert [b["worker"].tolist()[0] for b in batches] == [0, 1, 0, 1]


@pytest.mark.parametrize("kw", [
    {"batch_size": 4, "drop_last": True},
    {"batch_size": None},
    {"batch_size": 3, "collate_fn": lambda samples: [s[1].item() * 10 for s in samples]},
    {"batch_sampler": BatchSampler(range(11), 5, False)},
], ids=["drop_last", "batch_size=None", "collate_fn", "batch_sampler"])
def test_loader_options_with_workers(kw):
    ds = _tensors()
    expected = [_plain(b) for b in DataLoader(ds, **kw)]
    got = [_plain(b) for b in _workers(ds, **kw)]
    assert got == expected and len(got) == len(DataLoader(ds, **kw))


# --- worker processes ----------------------------------------------------------------------

def _pids(loader):
    return sorted({p for b in loader for p in b["pid"].tolist()})


def _gone(pid):
    return not os.path.exists(f"/proc/{pid}")  # a zombie would still be listed


def test_persistent_workers_are_reused_and_others_are_not():
    ds = Items(8)
    persistent = _workers(ds, batch_size=2, persistent_workers=True)
    first, second = _pids(persistent), _pids(persistent)
    assert len(first) == 2 and first == second and os.getpid() not in first
    it = persistent._iterator
    del persistent, it
    assert all(_gone(p) for p in first)

    loader = _workers(ds, batch_size=2)
    first, second = _pids(loader), _pids(loader)
    assert len(first) == len(second) == 2 and not set(first) & set(second)
    assert all(_gone(p) for p in first + second)  # exhausted iterators reaped their workers


def test_a_persistent_loader_restarts_a_broken_off_epoch():
    loader = _workers(_tensors(), batch_size=2, persistent_workers=True)
    expected = [_plain(b) for b in DataLoader(_tensors(), batch_size=2)]
    for _ in loader:
        break  # the workers still send that epoch's batches: they must not leak in
    assert [_plain(b) for b in loader] == expected
    assert [_plain(b) for b in loader] == expected


def test_an_abandoned_iterator_stops_its_workers():
    it = iter(_workers(Items(40), batch_size=2))
    next(it)
    workers = list(it._workers)
    del it
    assert [w.exitcode for w in workers] == [0, 0] and all(_gone(w.pid) for w in workers)


def test_an_iterator_freed_by_the_garbage_collector_stops_its_workers():
    # the collector finalizes the index queues before the iterator: no None reaches the
    # workers, which must still end on their own (exit code 0, not terminated after 5 s)
    it = iter(_workers(Items(40), batch_size=2))
    next(it)
    it.cycle = it
    workers = list(it._workers)
    del it
    gc.collect()
    assert [w.exitcode for w in workers] == [0, 0]


def test_workers_stop_at_interpreter_exit():
    script = textwrap.dedent("""
        import ember as E
        from ember.utils.data import DataLoader, TensorDataset
        loader = DataLoader(TensorDataset(E.arange(100.)), batch_size=2, num_workers=2,
                            multiprocessing_context="fork", persistent_workers=True)
        it = iter(loader)
        next(it)
        print(" ".join(str(w.pid) for w in it._workers), flush=True)
    """)
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - start < 30
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) == 2 and all(_gone(p) for p in pids)


def test_get_worker_info():
    assert get_worker_info() is None

    class Info(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = get_worker_info()
            return [info.id, info.num_workers, info.seed - info.id,
                    isinstance(info.dataset, Info)]

    g = E.Generator().manual_seed(7)
    base_seed = _base_seed(E.Generator().manual_seed(7))  # the iterator's one draw from g
    rows = [_plain(b) for b in _workers(Info(), batch_size=None, generator=g)]
    assert rows == [[i % 2, 2, base_seed, True] for i in range(4)]
    assert get_worker_info() is None


class Shards(IterableDataset):
    """range(start, stop), split between the workers as in torch's IterableDataset docs."""

    def __init__(self, start, stop, shard=True):
        self.start, self.stop, self.shard = start, stop, shard

    def __iter__(self):
        info = get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.start, self.stop))
        per_worker = -(-(self.stop - self.start) // info.num_workers)
        lo = self.start + info.id * per_worker
        return iter(range(lo, min(lo + per_worker, self.stop)))


def test_iterable_dataset_sharding():
    got = [b.tolist() for b in _workers(Shards(3, 12), batch_size=2)]
    # worker 0 has 3..7, worker 1 has 8..11; batches alternate while both have some
    assert got == [[3, 4], [8, 9], [5, 6], [10, 11], [7]]
    got = [b.tolist() for b in _workers(Shards(3, 12), batch_size=2, drop_last=True)]
    assert got == [[3, 4], [8, 9], [5, 6], [10, 11]]
    # without sharding, every worker yields the whole stream
    got = [int(b) for b in _workers(Shards(0, 3, shard=False), batch_size=None)]
    assert got == [0, 0, 1, 1, 2, 2]


# --- seeding -----------------------------------------------------------------------------------

def test_random_augmentation_is_reproducible_and_differs_between_workers():
    def run():
        E.manual_seed(1234)
        return [_plain(b) for b in _workers(Items(8), batch_size=2)]
    a, b = run(), run()
    key = ("i", "worker", "ember", "random", "numpy")
    assert [{k: x[k] for k in key} for x in a] == [{k: x[k] for k in key} for x in b]
    for source in ("ember", "random", "numpy"):
        # batch 0 comes from worker 0, batch 1 from worker 1: same place in their streams
        assert a[0]["worker"] == [0, 0] and a[1]["worker"] == [1, 1]
        assert a[0][source] != a[1][source]
    E.manual_seed(4321)
    c = [_plain(b) for b in _workers(Items(8), batch_size=2)]
    assert c[0]["ember"] != a[0]["ember"]


# torch.utils.data._utils.worker._generate_state(base_seed, worker_id) in torch 2.13 (importing
# torch here would cost seconds): the numpy seed words of a worker
TORCH_NUMPY_SEEDS = {
    (0, 0): [2968811710, 3677149159, 745650761, 2884920346],
    (0, 1): [1835504127, 1731038949, 1320224556, 2330041505],
    (0, 7): [2083679832, 3939563265, 4185785210, 142198000],
    (2**32 + 5, 0): [1565899405, 1359644052, 3335210798, 4273951465],
    (2**32 + 5, 1): [157149062, 3460658854, 2373529524, 3034555866],
    (2**32 + 5, 7): [4109687493, 2834988933, 3240437482, 2018919240],
    (1234567890123456789, 0): [1500487053, 3811267320, 3849238650, 2831111591],
    (1234567890123456789, 1): [661331956, 1220572741, 1434204975, 1224942861],
    (1234567890123456789, 7): [2478925662, 2485755694, 321488388, 492720658],
}


@pytest.mark.parametrize("base_seed,worker_id", sorted(TORCH_NUMPY_SEEDS))
def test_worker_seeds_match_torch(base_seed, worker_id):
    seed, words = worker_seeds(base_seed, worker_id)
    assert seed == base_seed + worker_id
    assert words.tolist() == TORCH_NUMPY_SEEDS[base_seed, worker_id]


# --- errors --------------------------------------------------------------------------------

class Failing(Dataset):
    def __init__(self, error):
        self.error = error

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise self.error
        return i


class NeedsTwoArguments(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


@pytest.mark.parametrize("error,raised", [
    (ValueError("bad sample 3"), ValueError),
    (KeyError("missing"), KeyError),
    (NeedsTwoArguments(1, 2), RuntimeError),  # cannot be rebuilt from a message
])
def test_worker_exception_is_reraised_with_its_traceback(error, raised):
    it = iter(_workers(Failing(error), batch_size=2))
    assert next(it).tolist() == [0, 1]
    with pytest.raises(raised) as info:
        next(it)
    text = str(info.value)
    assert "in DataLoader worker process 1" in text
    assert "Traceback" in text and "__getitem__" in text and type(error).__name__ in text
    assert next(it).tolist() == [4, 5]  # the iterator goes on, as torch's


class Killed(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


def test_a_killed_worker_is_an_error_not_a_hang():
    it = iter(_workers(Killed(), batch_size=2, timeout=20))
    assert next(it).tolist() == [0, 1]
    with pytest.raises(RuntimeError, match=r"DataLoader worker 1 \(pid \d+\) exited "
                                           r"unexpectedly with exit code -9 \(killed by "
                                           r"signal SIGKILL\).*num_workers=0"):
        next(it)
    assert all(_gone(w.pid) for w in it._workers)
    with pytest.raises(StopIteration):
        next(it)


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(1.0)
        return i


def test_timeout():
    it = iter(_workers(Slow(), batch_size=1, timeout=0.2))
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.2 seconds"):
        next(it)


def test_unpicklable_batch_is_an_error_of_its_worker():
    loader = _workers(Items(4), batch_size=2, collate_fn=lambda s: (lambda: s))
    with pytest.raises(Exception, match="in DataLoader worker process 0"):
        next(iter(loader))


@pytest.mark.parametrize("kw,message", [
    ({"num_workers": -1}, "num_workers option should be non-negative"),
    ({"timeout": -1}, "timeout option should be non-negative"),
    ({"prefetch_factor": 2}, "prefetch_factor option could only be specified in "
                             "multiprocessing"),
    ({"num_workers": 2, "prefetch_factor": -1}, "prefetch_factor option should be"),
    ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
    ({"multiprocessing_context": "fork"}, "multiprocessing_context can only be used with "
                                          "multi-process loading"),
    ({"num_workers": 2, "multiprocessing_context": "thread"}, "valid start method"),
])
def test_argument_errors(kw, message):
    with pytest.raises(ValueError, match=message):
        DataLoader(_tensors(), **kw)


def test_argument_type_errors():
    with pytest.raises(TypeError, match="multiprocessing_context option should be a valid"):
        DataLoader(_tensors(), num_workers=2, multiprocessing_context=3)
    with pytest.raises(TypeError, match="worker_init_fn must be callable"):
        DataLoader(_tensors(), num_workers=2, worker_init_fn=3)


def test_worker_init_fn_runs_in_each_worker_after_seeding():
    class Seen(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return get_worker_info().dataset.tag

    def init(worker_id):
        info = get_worker_info()
        assert info.id == worker_id
        info.dataset.tag = f"worker {worker_id} seed {info.seed - worker_id}"

    seeds = {b.split(" seed ")[1] for b in _workers(Seen(), batch_size=None,
                                                      worker_init_fn=init)}
    tags = [b.split(" seed ")[0] for b in _workers(Seen(), batch_size=None,
                                                     worker_init_fn=init)]
    assert tags == ["worker 0", "worker 1", "worker 0", "worker 1"] and len(seeds) == 1


def test_tensors_pickle():
    for dtype in (E.float32, E.float16, E.bfloat16, E.int64, E.bool_):
        t = E.arange(6).reshape(2, 3).t().to(dtype)
        back = pickle.loads(pickle.dumps(t))
        assert back.dtype is dtype and back.shape == (3, 2)
        np.testing.assert_array_equal(to_np(back.float()), to_np(t.float()))
