"""Batches per second of ``DataLoader`` with 0, 1 and 2 worker processes, ember against
torch, side by side in one run.

The dataset costs about 1 ms of numpy work a sample (ufuncs on a 16k-element float64
array, calibrated at start) and returns a ``(32, 32)`` float32 array and an int label; both
frameworks batch it with their default collate, 32 samples a batch, 16 batches an epoch,
in the default (fork on Linux) start method. Two numbers a configuration:

* ``epoch``: a fresh loader's first epoch, worker start-up and shutdown included;
* ``steady``: the second epoch of a loader with ``persistent_workers=True`` (workers
  already running), for num_workers > 0; the same as ``epoch`` for 0.

Each round times every configuration of both frameworks in turn (so a slow spell of a
shared machine falls on all of them); the best of the rounds is printed, with
ember / torch (higher is better for ember) and each framework's speed-up over its own
num_workers=0. No assertions.

Run: ``python benchmarks/bench_dataloader.py [--rounds 3] [--workers 0 1 2]``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import try_import_torch

import ember as E

torch = try_import_torch(single_thread=False)

BATCH, BATCHES = 32, 16


class Costly:
    """Map-style dataset: sample ``i`` is ``repeats`` passes of ufuncs over 16k floats."""

    def __init__(self, n: int, repeats: int):
        self.n, self.repeats = n, repeats
        self.base = np.linspace(0.0, 1.0, 16384)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        x = self.base + i
        for _ in range(self.repeats):
            x = np.sin(x) * 1.5 + np.sqrt(np.abs(x))
        return x[:1024].reshape(32, 32).astype(np.float32), i % 10


def calibrate(target_s: float = 1e-3) -> int:
    """Passes that make one ``__getitem__`` cost about ``target_s`` seconds here."""
    ds = Costly(1, 10)
    start = time.perf_counter()
    for _ in range(50):
        ds[0]
    per_pass = (time.perf_counter() - start) / 50 / 10
    return max(1, round(target_s / per_pass))


def epoch_rate(make_loader, workers: int, steady: bool) -> float:
    """Batches per second of one epoch (the second one when ``steady``)."""
    kw = {"num_workers": workers}
    if steady:
        kw["persistent_workers"] = True
    loader = make_loader(**kw)
    if steady:
        for _ in loader:  # starts the workers; timed below is the next epoch
            pass
    start = time.perf_counter()
    n = sum(1 for _ in loader)
    rate = n / (time.perf_counter() - start)
    del loader
    return rate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2])
    args = p.parse_args()
    repeats = calibrate()
    ds = Costly(BATCH * BATCHES, repeats)
    start = time.perf_counter()
    for i in range(BATCH):
        ds[i]
    sample_ms = (time.perf_counter() - start) / BATCH * 1e3
    frameworks = {"ember": lambda **kw: E.utils.data.DataLoader(ds, batch_size=BATCH, **kw)}
    if torch is not None:
        frameworks["torch"] = lambda **kw: torch.utils.data.DataLoader(ds, batch_size=BATCH,
                                                                       **kw)
    configs = [(w, steady) for w in args.workers for steady in (False, True)
               if not (steady and w == 0)]
    best: dict = {}
    for _ in range(args.rounds):
        for w, steady in configs:
            for name, make in frameworks.items():
                key = (name, w, steady)
                best[key] = max(best.get(key, 0.0), epoch_rate(make, w, steady))

    print(f"DataLoader: {BATCHES} batches of {BATCH} samples, {sample_ms:.2f} ms of numpy "
          f"work a sample; batches/s, best of {args.rounds} rounds")
    print(f"{'workers':>7} {'timing':>7} {'ember':>8} {'torch':>8} {'ember/torch':>12} "
          f"{'ember x w0':>11} {'torch x w0':>11}")
    for w, steady in configs:
        timing = "steady" if steady else "epoch"
        em = best["ember", w, steady]
        base_em = best["ember", 0, False]
        if torch is None:
            print(f"{w:>7} {timing:>7} {em:8.1f} {'-':>8} {'-':>12} {em / base_em:10.2f}x")
            continue
        th, base_th = best["torch", w, steady], best["torch", 0, False]
        print(f"{w:>7} {timing:>7} {em:8.1f} {th:8.1f} {em / th:11.2f}x "
              f"{em / base_em:10.2f}x {th / base_th:10.2f}x")


if __name__ == "__main__":
    main()
