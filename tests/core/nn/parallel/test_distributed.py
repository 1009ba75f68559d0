"""DistributedDataParallel (and SyncBatchNorm, DistributedSampler) on 2 and 3 ranks
(``mpiexec -n N ddp_worker.py``), against one process training on the concatenated batch
in float64; plus the single-process parts: the bucket layout and the error before a process
group exists.

The multi-rank checks run once for 2 ranks and once for 3 (one mpiexec each, ~5 s idle) and
each test reads its verdict; they skip without mpi4py, mpiexec or the ``mpi`` backend.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import ember as E
from ember import nn
from ember.nn.parallel import DistributedDataParallel
from ember.nn.parallel.reducer import compute_bucket_assignment_by_size
from helpers import mpi_missing

WORKER = os.path.join(os.path.dirname(__file__), "ddp_worker.py")


@pytest.fixture(scope="module", params=[2, 3], ids=lambda n: f"{n}ranks")
def ranks(request, tmp_path_factory):
    """The verdicts of every check of ``ddp_worker.py`` run on 2, then 3 ranks."""
    why = mpi_missing()
    if why:
        pytest.skip(why)
    n = request.param
    out = tmp_path_factory.mktemp("ddp") / "results.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(["mpiexec", "-n", str(n), sys.executable, WORKER, str(out)],
                          capture_output=True, text=True, timeout=180, env=env)
    if proc.returncode != 0 or not out.exists():
        pytest.fail(f"mpiexec -n {n} ddp_worker.py failed (exit {proc.returncode}):\n"
                    f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(out.read_text())


@pytest.mark.parametrize("check", [
    "check_equal_to_one_process", "check_no_sync", "check_buffers", "check_unused_found",
    "check_unused_not_found", "check_sampler", "check_sync_batchnorm",
    "check_ddp_with_sync_batchnorm", "check_traced_module",
    "check_nodes_after_the_last_hook"])
def test_ranks(ranks, check):
    assert ranks[check] == "ok", ranks[check]


def test_buckets_reverse_order_by_size_and_dtype():
    ps = [E.zeros(100), E.zeros(100), E.zeros(10, dtype=E.float64), E.zeros(300),
          E.zeros(50)]
    # walked 4, 3, 2, 1, 0; float32: the first bucket closes at 200 bytes (4), later ones
    # at 1000 (3 alone: 1200 bytes; 1 and 0 left open at the end); float64 apart
    got = compute_bucket_assignment_by_size(ps, cap_bytes=1000, first_cap_bytes=200)
    assert got == [[4], [3], [2], [1, 0]]
    assert compute_bucket_assignment_by_size(ps, cap_bytes=25 * 2 ** 20) == [[4, 3, 1, 0], [2]]


def test_needs_a_process_group():
    with pytest.raises(RuntimeError, match="init_process_group"):
        DistributedDataParallel(nn.Linear(2, 2))
