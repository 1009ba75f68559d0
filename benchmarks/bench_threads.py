"""The digits job idle and under load, per thread count: does a busy neighbour slow it down?

Runs ``ember train digits`` in subprocesses (``--epochs`` short), once on an idle machine
and once beside one busy process (``python -c "while True: pass"``, killed after), for
each thread setting, and prints the training seconds (the job's own ``s in all``, import
time excluded), the CPU seconds of the process (threads that busy-wait show as CPU time
above the single-thread run's), the load average when the run started, and the
loaded/idle ratio against the 1.5 x budget. "Idle" means no busy process of this script's:
on a machine other jobs share, the load column says how idle it was.

Settings: ``default`` (no ``--threads``, OMP_NUM_THREADS removed: what a user gets),
``1`` and ``N`` (``--threads N``; N = the usable cores is the BLAS's own default, what
ember did before it limited the BLAS). The OpenBLAS variables of the environment
(OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE, ...) pass through and are printed; to compare
without them, run ``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python
benchmarks/bench_threads.py``.

Like the other benchmarks it asserts nothing: a shared machine is noisy, so run it twice
or pass ``--repeat 3`` (the fastest run of each cell counts).
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from typing import NamedTuple

BUDGET = 1.5  # loaded time / idle time that the issue accepts
_SECONDS = re.compile(r"([0-9.]+) s in all")


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Run(NamedTuple):
    train: float  # seconds of training, as the job prints them
    wall: float   # seconds of the whole process, import included
    cpu: float    # CPU seconds (user + system) of the process: spinning threads show here
    load: float   # the 1-minute load average when the run started


def _run_once(setting: str, epochs: int) -> Run:
    """One ``ember train digits`` run with ``--threads setting`` (none for ``default``)."""
    cmd = [sys.executable, "-m", "ember", "train", "digits", "--epochs", str(epochs),
           "--no-progress", "--out", ""]
    if setting != "default":
        cmd += ["--threads", setting]
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    match = _SECONDS.search(out)
    if match is None:
        raise RuntimeError(f"bench_threads: expected '... s in all' in the job's output, got "
                           f"{out!r}")
    return Run(float(match.group(1)), wall, cpu, load)


def busy_process() -> subprocess.Popen:
    """One process that keeps a core busy until killed (the 'machine load')."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(0.5)  # let it get going
    return proc


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=40, help="epochs per run (default 40)")
    p.add_argument("--settings", default=f"default,1,{cores()}",
                   help="comma-separated thread settings (default: default,1,<cores>)")
    p.add_argument("--repeat", type=int, default=1,
                   help="rounds of runs; the fastest run of each cell counts (default 1)")
    args = p.parse_args()
    blas_env = {k: v for k, v in os.environ.items() if k.startswith(("OPENBLAS", "OMP_"))}
    print(f"cores {cores()}, BLAS environment {blas_env or '(none)'}")
    print(f"ember train digits --epochs {args.epochs}: seconds of training, CPU seconds of "
          f"the process, load average at the start (other work on the machine shows there)")
    print(f"{'threads':>8} | {'idle s':>7} {'cpu s':>6} {'load':>5} | {'loaded s':>8} "
          f"{'cpu s':>6} {'load':>5} | loaded/idle (budget {BUDGET} x)")
    settings = args.settings.split(",")
    runs = {(s, loaded): [] for s in settings for loaded in (False, True)}
    # NOTE: rounds of every setting, idle then loaded, so that each setting sees the same
    # spells of other work on a shared machine; the fastest run of a cell counts
    for _ in range(args.repeat):
        for setting in settings:
            runs[setting, False].append(_run_once(setting, args.epochs))
        hog = busy_process()
        try:
            for setting in settings:
                runs[setting, True].append(_run_once(setting, args.epochs))
        finally:
            hog.kill()
            hog.wait()
    for setting in settings:
        idle, loaded = (min(runs[setting, b], key=lambda r: r.train) for b in (False, True))
        ratio = loaded.train / idle.train
        verdict = "ok" if ratio <= BUDGET else "OVER"
        print(f"{setting:>8} | {idle.train:7.2f} {idle.cpu:6.1f} {idle.load:5.2f} | "
              f"{loaded.train:8.2f} {loaded.cpu:6.1f} {loaded.load:5.2f} | {ratio:5.2f} x  "
              f"{verdict}")


if __name__ == "__main__":
    main()
