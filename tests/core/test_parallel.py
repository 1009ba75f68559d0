"""ember's thread knob (``ember.set_num_threads``) and its pool (``parallel_for``).

The BLAS limits are read back through threadpoolctl. The default is computed once a
process, so the tests of the default run a fresh interpreter with the environment set
(the rest of the environment, OPENBLAS_CORETYPE and the like included, is kept).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
import threadpoolctl

import ember as E
from ember import cli, parallel

BLAS_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
            "VECLIB_MAXIMUM_THREADS")


def blas_threads() -> set[int]:
    """The thread limits of the BLAS libraries loaded in this process (numpy's; scipy's
    too once a test has imported it): ``set_num_threads`` reaches all of them."""
    return {i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"}


@pytest.fixture(autouse=True)
def restore_threads():
    """Put back ember's thread count and the BLAS limits after each test."""
    count = E.get_num_threads()
    with threadpoolctl.threadpool_limits(limits=None, user_api="blas"):  # restores on exit
        yield
        E.set_num_threads(count)


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def fresh_process(**env: str) -> dict:
    """``get_num_threads()`` and the BLAS limits of a new interpreter that imports ember
    with the BLAS variables of ``env`` (all others of them unset)."""
    environ = {k: v for k, v in os.environ.items() if k not in BLAS_ENV}
    environ.update(env)
    code = ("import json, ember, threadpoolctl; print(json.dumps({'count': "
            "ember.get_num_threads(), 'blas': [i['num_threads'] for i in "
            "threadpoolctl.threadpool_info() if i['user_api'] == 'blas']}))")
    out = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True,
                         text=True, check=True, timeout=120).stdout
    return json.loads(out.splitlines()[-1])


# -- the default --------------------------------------------------------------------------

def test_default_is_the_cores_with_one_blas_thread():
    assert fresh_process() == {"count": cores(), "blas": [parallel.DEFAULT_BLAS_THREADS]}


def test_default_honours_omp_num_threads():
    # the BLAS read OMP_NUM_THREADS itself when it loaded; ember leaves it there
    assert fresh_process(OMP_NUM_THREADS="3") == {"count": 3, "blas": [3]}


def test_a_blas_variable_leaves_the_blas_alone():
    assert fresh_process(OPENBLAS_NUM_THREADS="2") == {"count": cores(), "blas": [2]}


@pytest.mark.parametrize("value", ["", "0", "-2", "two", "1.5"])
def test_invalid_omp_num_threads_is_ignored(monkeypatch, value):
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert parallel.default_num_threads() == cores()


def test_valid_omp_num_threads_sets_the_default(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", " 5 ")
    assert parallel.default_num_threads() == 5


# -- set / get ----------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_set_get_round_trip_and_the_blas_follows(n):
    E.set_num_threads(n)
    assert E.get_num_threads() == n
    assert blas_threads() == {n}


@pytest.mark.parametrize("bad, error", [(2.0, TypeError), ("2", TypeError), (True, TypeError),
                                        (None, TypeError), (0, ValueError), (-1, ValueError)])
def test_bad_counts_raise_and_change_nothing(bad, error):
    E.set_num_threads(3)
    with pytest.raises(error, match="set_num_threads: expected"):
        E.set_num_threads(bad)
    with pytest.raises(error, match="num_threads: expected"):
        with parallel.num_threads(bad):
            pass
    assert E.get_num_threads() == 3 and blas_threads() == {3}


def test_num_threads_block_restores_the_count_and_the_blas():
    E.set_num_threads(3)
    with parallel.num_threads(1):
        assert E.get_num_threads() == 1 and blas_threads() == {1}
    assert E.get_num_threads() == 3 and blas_threads() == {3}


def test_set_from_another_python_thread_reaches_the_blas():
    # threadpoolctl lets only the thread that last limited OpenBLAS change it, until released
    worker = threading.Thread(target=E.set_num_threads, args=(3,))
    worker.start()
    worker.join()
    assert E.get_num_threads() == 3 and blas_threads() == {3}


def test_cli_threads_option(capsys):
    loaded = {i["filepath"] for i in threadpoolctl.threadpool_info()}
    assert cli.main(["train", "digits", "--threads", "1", "--epochs", "1", "--out", "",
                     "--no-progress"]) == 0
    assert E.get_num_threads() == 1
    # NOTE: only the BLAS loaded before: the job's scikit-learn may load scipy's own after
    assert {i["num_threads"] for i in threadpoolctl.threadpool_info()
            if i["user_api"] == "blas" and i["filepath"] in loaded} == {1}
    with pytest.raises(SystemExit):
        cli.main(["train", "digits", "--threads", "0"])
    assert "expected a number of threads >= 1, got '0'" in capsys.readouterr().err


# -- parallel_for -------------------------------------------------------------------------

def record(n_tasks: int, threads=None, work=None) -> list:
    """(task, thread id) pairs in the order the tasks ran."""
    seen, lock = [], threading.Lock()

    def task(i):
        if work is not None:
            work(i)
        with lock:
            seen.append((i, threading.get_ident()))
    parallel.parallel_for(task, n_tasks, threads)
    return seen


@pytest.mark.parametrize("n_tasks, threads", [(0, 4), (1, 4), (5, 2), (50, 4), (3, 8)])
def test_every_task_runs_once(n_tasks, threads):
    assert sorted(i for i, _ in record(n_tasks, threads)) == list(range(n_tasks))


def test_tasks_run_at_the_same_time():
    barrier = threading.Barrier(3, timeout=10)  # breaks (and the test fails) unless concurrent
    seen = record(3, threads=3, work=lambda i: barrier.wait())
    assert len({t for _, t in seen}) == 3


def test_one_thread_runs_in_order_on_the_calling_thread():
    me = threading.get_ident()
    E.set_num_threads(1)
    assert record(6) == [(i, me) for i in range(6)]
    E.set_num_threads(4)
    assert record(6, threads=1) == [(i, me) for i in range(6)]


def test_changing_the_count_between_calls():
    for n in (4, 2, 1, 4, 3):
        E.set_num_threads(n)
        barrier = threading.Barrier(n, timeout=10)
        seen = record(n, work=lambda i: barrier.wait() if n > 1 else None)
        assert sorted(i for i, _ in seen) == list(range(n))
        assert len({t for _, t in seen}) == n


@pytest.mark.parametrize("failing", [0, 1])  # the calling thread's task, a worker's task
def test_an_exception_propagates_once_every_task_has_stopped(failing):
    finished = []

    def task(i):
        if i == failing:
            raise KeyError(f"task {i}")
        time.sleep(0.2)
        finished.append(i)
    with pytest.raises(KeyError, match=f"task {failing}"):
        parallel.parallel_for(task, 2, threads=2)
    assert finished == [1 - failing]  # the other task ran to its end before the raise


def test_nested_parallel_for_runs_serially():
    assert not parallel.in_parallel_region()
    inner = {}

    def outer(i):
        assert parallel.in_parallel_region()
        inner[i] = record(4, threads=4)
    parallel.parallel_for(outer, 2, threads=2)
    for seen in inner.values():
        assert [i for i, _ in seen] == [0, 1, 2, 3]      # in order, ...
        assert len({t for _, t in seen}) == 1            # ... on the outer task's thread
    assert not parallel.in_parallel_region()
