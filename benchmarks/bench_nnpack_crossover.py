"""Where each nnpack_compat algorithm starts to beat native im2col on this machine.

For a grid of shapes, times forward + backward (grad of input and weight, float32) of
``F.conv2d`` with the algorithm forced (``ember_nnpack_compat.using``) against native
im2col (``ember.backends.nnpack.flags(enabled=False)``), and prints the ratio
algorithm / im2col: below 1 the algorithm wins. ``ember_nnpack_compat/selection.py``
encodes the crossovers these figures show; re-run this after changing either side.

Run: ``python benchmarks/bench_nnpack_crossover.py [winograd|fft|gemm1x1]``.
"""
from __future__ import annotations

import sys

import numpy as np

import ember as E
import ember.backends.nnpack as nnpack
import ember.nn.functional as F
from ember_nnpack_compat import using
from _timing import best_of

GRIDS = {
    # (N, C, K, H=W, kernel): channels and image sizes around the Winograd crossover
    "winograd": [(n, c, c, hw, 3) for n in (16, 64) for c in (1, 3, 8, 16, 32, 64)
                 for hw in (4, 8, 14, 28)],
    "fft": [(16, c, c, hw, k) for c in (1, 4, 16, 64) for hw in (8, 16, 32)
            for k in (5, 7, 11) if k <= hw],
    "gemm1x1": [(16, c, c, hw, 1) for c in (1, 4, 16, 64, 256) for hw in (4, 14, 28)],
}
ALGORITHMS = {
    "winograd": ["nnpack_winograd_f4x4_3x3", "nnpack_winograd_f2x2_3x3"],
    "fft": ["nnpack_fft"],
    "gemm1x1": ["nnpack_gemm1x1"],
}


def step(x, w, pad, context):
    def run():
        with context():
            y = F.conv2d(x, w, padding=pad)
            y.backward(E.ones_like(y))
        x.grad = w.grad = None
    return run


def main(family: str) -> None:
    rng = np.random.default_rng(0)
    names = ALGORITHMS[family]
    print(f"{'(N, C, K, HxW, k)':<28}{'im2col ms':>10}" + "".join(f"{n[7:]:>26}" for n in names))
    for n, c, k, hw, ks in GRIDS[family]:
        x = E.tensor(rng.standard_normal((n, c, hw, hw), dtype=np.float32), requires_grad=True)
        w = E.tensor(rng.standard_normal((k, c, ks, ks), dtype=np.float32), requires_grad=True)
        pad = ks // 2
        native = best_of(step(x, w, pad, lambda: nnpack.flags(False)), repeat=3) / 1e3
        cells = []
        for name in names:
            t = best_of(step(x, w, pad, lambda name=name: using(name)), repeat=3) / 1e3
            cells.append(f"{t:>10.3f} ms ({t / native:5.2f}x)")
        print(f"{str((n, c, k, f'{hw}x{hw}', ks)):<28}{native:>10.3f}"
              + "".join(f"{s:>26}" for s in cells))


if __name__ == "__main__":
    for fam in sys.argv[1:] or list(GRIDS):
        main(fam)
