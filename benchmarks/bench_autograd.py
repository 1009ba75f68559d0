"""Autograd round trips: ember vs torch side by side, in one run.

Budget (DESIGN.md section 7): ``x.sum().backward()`` <= torch's time. Also measured:
``(a * b + a).sum().backward()`` on 10 elements, and a 3-layer MLP (64 -> 128 -> 128 -> 10,
batch 32, float32, tanh) forward + backward. numpy has no autograd, so its column is the
hand-written forward + backward of the same MLP (the floor for the large case).

Run: ``python benchmarks/bench_autograd.py``. Prints microseconds per call and ratios.
"""
from __future__ import annotations

import os

# NOTE: torch runs on one thread here (try_import_torch); so must numpy's OpenBLAS, or
# the MLP's matmuls compare one thread with several fighting over a shared machine's
# cores (times then jump 100-fold). Set before numpy loads its BLAS.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import ember as E  # noqa: E402
from _timing import best_of, try_import_torch  # noqa: E402

torch = try_import_torch()


def _zero(*ts):
    for t in ts:
        t.grad = None


def autograd_cases(lib, rng):
    """The three cases on ``lib`` (``ember`` or ``torch``: the same calls work on both)."""
    x = lib.tensor(rng.random(10, dtype=np.float32), requires_grad=True)
    a = lib.tensor(rng.random(10, dtype=np.float32), requires_grad=True)
    b = lib.tensor(rng.random(10, dtype=np.float32), requires_grad=True)
    X = lib.tensor(rng.standard_normal((32, 64), dtype=np.float32))
    ws = [lib.tensor(rng.standard_normal(s, dtype=np.float32) * 0.1, requires_grad=True)
          for s in ((64, 128), (128, 128), (128, 10))]
    bs = [lib.zeros(n, requires_grad=True) for n in (128, 128, 10)]

    def mlp():
        h = X
        for i, (w, bias) in enumerate(zip(ws, bs)):
            h = h @ w + bias
            if i < 2:
                h = h.tanh()
        h.sum().backward()
        _zero(*ws, *bs)

    def sum_backward():
        x.sum().backward()
        x.grad = None

    def mul_add():
        (a * b + a).sum().backward()
        _zero(a, b)
    return {"x.sum().backward()": sum_backward, "(a*b+a).sum().backward()": mul_add,
            "MLP 3 layers fwd+bwd": mlp}


def numpy_cases(rng):
    X = rng.standard_normal((32, 64), dtype=np.float32)
    ws = [rng.standard_normal(s, dtype=np.float32) * 0.1 for s in ((64, 128), (128, 128),
                                                                      (128, 10))]
    bs = [np.zeros(n, np.float32) for n in (128, 128, 10)]

    def mlp():  # the same math by hand: the floor
        hs = [X]
        for i, (w, b) in enumerate(zip(ws, bs)):
            h = hs[-1] @ w + b
            hs.append(np.tanh(h) if i < 2 else h)
        g = np.ones_like(hs[-1])
        for i in (2, 1, 0):
            if i < 2:
                g = g * (1 - hs[i + 1] ** 2)
            _ = hs[i].T @ g, g.sum(0)
            g = g @ ws[i].T
    x = rng.random(10, dtype=np.float32)
    return {"x.sum().backward()": lambda: np.ones_like(x), "MLP 3 layers fwd+bwd": mlp}


def main() -> None:
    rng = np.random.default_rng(0)
    em = autograd_cases(E, rng)
    to = autograd_cases(torch, rng) if torch is not None else {}
    npc = numpy_cases(rng)
    print(f"{'case':<28}{'numpy us':>10}{'ember us':>10}{'torch us':>10}{'ember/torch':>13}")
    ratios = []
    for name, fn in em.items():
        e = best_of(fn)
        n = best_of(npc[name]) if name in npc else float("nan")
        t = best_of(to[name]) if name in to else float("nan")
        r = e / t if to else float("nan")
        if to:
            ratios.append(r)
        print(f"{name:<28}{n:>10.2f}{e:>10.2f}{t:>10.2f}{r:>13.2f}")
    if ratios:
        print(f"geomean ember/torch: {float(np.exp(np.mean(np.log(ratios)))):.2f} "
              f"(budget: <= 1.0)")


if __name__ == "__main__":
    main()
