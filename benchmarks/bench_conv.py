"""conv2d: ember's native im2col, the nnpack_compat plugin and torch, side by side.

Budget (DESIGN.md section 7 and issue 6): conv2d within torch's CPU time; with the
nnpack_compat plugin, at or below torch's time on the two large shapes. Cases (3x3
kernels, padding 1, float32, with bias): the digits net's first layer (N=64, C=1, 8x8,
K=16), a ResNet stage-1 layer (N=32, C=64, 56x56, K=64) and a stage-3 layer (N=8, C=256,
14x14, K=256); each as forward only and as forward + backward (grad of input, weight and
bias). All get the same inputs; torch keeps its default thread count (numpy's BLAS
threads too), since convolution speed is mostly the GEMM's and both use every core.

Columns: ``im2col`` is ember with ``ember.backends.nnpack.enabled = False``; ``ember`` is
the default choice with every installed plugin (the algorithm it picks is named per
case); ``F(4x4)`` and ``F(2x2)`` force each Winograd variant with
``ember_nnpack_compat.using``. Without the plugin those columns are blank.

Run: ``python benchmarks/bench_conv.py``. Prints milliseconds per call and ratios.
"""
from __future__ import annotations

import contextlib

import numpy as np

import ember as E
import ember.backends.nnpack as nnpack
import ember.nn.functional as F
from ember.backends.convolution import explain
from _timing import best_of

try:
    import torch
except ImportError:
    torch = None
try:
    import ember_nnpack_compat as nnpack_compat
except ImportError:
    nnpack_compat = None

CASES = [(64, 1, 8, 16), (32, 64, 56, 64), (8, 256, 14, 256)]
LARGE = CASES[1:]
WINOGRAD = {"F(4x4)": "nnpack_winograd_f4x4_3x3", "F(2x2)": "nnpack_winograd_f2x2_3x3"}


def conv_cases(lib, fn, arrays, context=contextlib.nullcontext):
    """Forward and forward+backward closures for ``lib`` (``ember`` or ``torch``), each
    run inside a fresh ``context()``."""
    x, w, b, g = (lib.tensor(a) for a in arrays)
    xr, wr, br = (lib.tensor(a, requires_grad=True) for a in arrays[:3])

    def forward():
        with context():
            fn(x, w, b, padding=1)

    def forward_backward():
        with context():
            fn(xr, wr, br, padding=1).backward(g)
        xr.grad = wr.grad = br.grad = None
    return {"fwd": forward, "fwd+bwd": forward_backward}


def main() -> None:
    rng = np.random.default_rng(0)
    columns = ["im2col", "ember"] + (list(WINOGRAD) if nnpack_compat else []) + ["torch"]
    print(f"{'conv2d 3x3 pad 1, float32, ms':<30}" + "".join(f"{c:>9}" for c in columns)
          + f"{'ember/torch':>13}  algorithm")
    ratios, large = [], []
    for n, c, hw, k in CASES:
        arrays = [rng.standard_normal(s, dtype=np.float32) for s in
                  ((n, c, hw, hw), (k, c, 3, 3), (k,), (n, k, hw, hw))]
        runs = {"im2col": conv_cases(E, F.conv2d, arrays, lambda: nnpack.flags(False)),
                "ember": conv_cases(E, F.conv2d, arrays)}
        if nnpack_compat:
            for col, name in WINOGRAD.items():
                runs[col] = conv_cases(E, F.conv2d, arrays,
                                       lambda name=name: nnpack_compat.using(name))
        if torch:
            runs["torch"] = conv_cases(torch, torch.nn.functional.conv2d, arrays)
        algo = explain(E.tensor(arrays[0]), E.tensor(arrays[1]), padding=1).chosen
        for what in ("fwd", "fwd+bwd"):
            ms = {col: best_of(r[what], repeat=5) / 1e3 for col, r in runs.items()}
            t = ms.get("torch", float("nan"))
            ratio = ms["ember"] / t
            if torch:
                ratios.append(ratio)
                if (n, c, hw, k) in LARGE:
                    large.append(ratio)
            name = f"({n},{c},{hw}x{hw})->{k} {what}"
            print(f"{name:<30}" + "".join(f"{ms.get(col, float('nan')):>9.3f}"
                                          for col in columns)
                  + f"{ratio:>13.2f}  {algo}")
    if ratios:
        geo = lambda r: float(np.exp(np.mean(np.log(r))))
        print(f"geomean ember/torch: {geo(ratios):.2f} all cases, {geo(large):.2f} on the two "
              f"large shapes (budget: <= 1.0 on the large shapes)")


if __name__ == "__main__":
    main()
