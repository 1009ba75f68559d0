"""The JIT side by side: a 10-op pointwise function on 10-element tensors, and one digits
training step, eager against traced.

Budget (issue 5): traced ember at most 0.6 x torch.jit.trace on the pointwise function.
At this size every framework is per-op overhead; ember's plan calls the backend kernels
on arrays from generated Python, so it pays little more than numpy itself.

Rows (microseconds per call, best of 7): numpy (the same math on arrays), ember eager,
ember traced, torch eager and torch.jit.trace (single-threaded, when torch is installed),
then the ratios. The digits rows time one training step (forward, cross-entropy, backward,
Adam) of ``ember/train/digits.py``'s CNN on a batch of 64, eager and with the model traced.

At real sizes (``_jit_real_sizes.py``, issue 29): the same function on 1e6 elements
(budget: ember traced <= torch.jit.trace; torch.compile beside it), ``x * y + z`` on 1e7
(budget: ember traced <= numpy with ``out=``), and training steps of an MLP, a Transformer
encoder layer and a 2-layer LSTM (budget: traced <= 0.8 x eager), at 1 thread and at the
default thread count, ember and torch alike.

Run: ``python benchmarks/bench_jit.py`` (``--threads 1 2`` picks the thread counts,
``--skip-training`` leaves the training steps out).
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np
from _jit_real_sizes import chain_rows, fma_rows, pointwise, training_rows
from _timing import best_of, try_import_torch

import ember as E
import ember.nn.functional as F

torch = try_import_torch(single_thread=True)


def pointwise_rows() -> dict:
    rng = np.random.default_rng(0)
    xn, yn = (rng.standard_normal(10).astype(np.float32) for _ in range(2))
    rows = {"numpy": best_of(lambda: pointwise(xn, yn))}
    x, y = E.from_numpy(xn), E.from_numpy(yn)
    traced = E.jit.trace(pointwise, (x, y))
    np.testing.assert_allclose(traced(x, y).numpy(), pointwise(xn, yn), rtol=1e-6)
    rows["ember eager"] = best_of(lambda: pointwise(x, y))
    rows["ember traced"] = best_of(lambda: traced(x, y))
    if torch is not None:
        xt, yt = torch.from_numpy(xn), torch.from_numpy(yn)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tt = torch.jit.trace(pointwise, (xt, yt))
        for _ in range(3):  # TorchScript optimizes on its first calls
            tt(xt, yt)
        rows["torch eager"] = best_of(lambda: pointwise(xt, yt))
        rows["torch.jit.trace"] = best_of(lambda: tt(xt, yt))
    return rows


def digits_rows() -> dict:
    from ember.train.digits import lenet
    E.manual_seed(0)
    x = E.rand(64, 1, 8, 8)
    y = E.randint(0, 10, (64,))
    rows = {}
    for name, jit in (("digits step eager", False), ("digits step --jit", True)):
        model = lenet()
        opt = E.optim.Adam(model.parameters(), lr=1e-3)
        fwd = E.jit.trace(model, (x,)) if jit else model

        def step():
            loss = F.cross_entropy(fwd(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        rows[name] = best_of(step, repeat=5)
    return rows


def dynamic_rows() -> dict:
    """The digits CNN traced at batch 64, then called at batches 64 and 17 alternately (a
    loader's last partial batch): one trace serves both once batch 17 has been checked
    (jit/frontend/shape_guards.py), so the per-call time should match a single batch size."""
    from ember.train.digits import lenet
    E.manual_seed(0)
    model = lenet().eval()
    x64, x17 = E.rand(64, 1, 8, 8), E.rand(17, 1, 8, 8)
    with E.no_grad():
        traced = E.jit.trace(model, (x64,))
        traced(x17)  # the first call at batch 17 checks it with a second trace
        rows = {"batch 64 only": best_of(lambda: traced(x64), repeat=5),
                "batches 64, 17": best_of(lambda: (traced(x64), traced(x17)), repeat=5) / 2,
                "eager 64, 17": best_of(lambda: (model(x64), model(x17)), repeat=5) / 2}
    rows["traces"] = len(traced._variants)
    return rows


def _table(title: str, rows: dict, unit: str = "us") -> None:
    print(title)
    for k, v in rows.items():
        print(f"  {k:<18} {v:10.1f} {unit}")


def real_sizes(torch, threads: int, training: bool) -> None:
    """Print the real-size rows at ``threads`` threads for ember and torch."""
    E.set_num_threads(threads)
    if torch is not None:
        torch.set_num_threads(threads)
    print(f"== real sizes, {threads} thread(s) for ember and torch ==")
    rows = chain_rows(torch)
    _table("10-op pointwise function, 1e6 float32 (us per call)", rows)
    for ref, budget in (("torch.jit.trace", "<= 1.00x"), ("torch.compile", "next target"),
                        ("numpy", ""), ("ember eager", "")):
        if ref in rows:
            print(f"  ember jit / {ref:<16} {rows['ember jit'] / rows[ref]:.2f}x  {budget}")
    rows = fma_rows(torch)
    _table("x * y + z, 1e7 float32 (us per call)", rows)
    for ref, budget in (("numpy out=", "<= 1.00x"), ("torch.jit.trace", ""),
                        ("ember eager", "")):
        if ref in rows:
            print(f"  ember jit / {ref:<16} {rows['ember jit'] / rows[ref]:.2f}x  {budget}")
    if not training:
        return
    for name, r in training_rows(torch).items():
        _table(f"training step: {name} (ms per step)", r, "ms")
        print(f"  ember jit / ember eager     {r['ember jit'] / r['ember eager']:.2f}x  "
              f"<= 0.80x")
        if "torch eager" in r:
            print(f"  ember eager / torch eager   {r['ember eager'] / r['torch eager']:.2f}x")
            print(f"  ember jit / torch eager     {r['ember jit'] / r['torch eager']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, nargs="+",
                        default=sorted({1, E.parallel.default_num_threads()}))
    parser.add_argument("--skip-training", action="store_true")
    parser.add_argument("--real-sizes-only", action="store_true")
    args = parser.parse_args()
    if not args.real_sizes_only:
        tiny()
    for threads in args.threads:
        real_sizes(torch, threads, not args.skip_training)


def tiny() -> None:
    """The tiny-tensor rows (one thread)."""
    E.set_num_threads(1)
    rows = pointwise_rows()
    print("10-op pointwise function on 10-element float32 tensors (us per call)")
    for k, v in rows.items():
        print(f"  {k:<18} {v:8.2f}")
    print(f"  ember traced / numpy            {rows['ember traced'] / rows['numpy']:.2f}x")
    print(f"  ember traced / ember eager      {rows['ember traced'] / rows['ember eager']:.2f}x")
    if "torch.jit.trace" in rows:
        ratio = rows["ember traced"] / rows["torch.jit.trace"]
        print(f"  ember traced / torch.jit.trace  {ratio:.2f}x   (budget <= 0.60x)")
        print(f"  ember eager / torch eager       {rows['ember eager'] / rows['torch eager']:.2f}x")
    d = digits_rows()
    print("digits training step, batch 64 (us per step)")
    for k, v in d.items():
        print(f"  {k:<18} {v:8.1f}")
    print(f"  --jit / eager                   "
          f"{d['digits step --jit'] / d['digits step eager']:.2f}x")
    dyn = dynamic_rows()
    print("digits CNN forward traced at batch 64, eval, no grad (us per call)")
    for k in ("batch 64 only", "batches 64, 17", "eager 64, 17"):
        print(f"  {k:<18} {dyn[k]:8.1f}")
    print(f"  traces kept: {dyn['traces']} (one serves both batch sizes)")


if __name__ == "__main__":
    main()
