"""conv2d: ember's native im2col algorithm vs torch side by side, in one run.

Budget (DESIGN.md section 7): conv2d within torch's CPU time. Cases (3x3 kernels,
padding 1, float32, with bias): the digits net's first layer (N=64, C=1, 8x8, K=16), a
ResNet stage-1 layer (N=32, C=64, 56x56, K=64) and a stage-3 layer (N=8, C=256, 14x14,
K=256); each as forward only and as forward + backward (grad of input, weight and bias).
Both libraries get the same inputs; torch keeps its default thread count (numpy's BLAS
threads too), since convolution speed is mostly the GEMM's and both use every core.

Run: ``python benchmarks/bench_conv.py``. Prints milliseconds per call and ratios.
"""
from __future__ import annotations

import numpy as np

import ember as E
import ember.nn.functional as F
from ember.backends.convolution import explain
from _timing import best_of

try:
    import torch
except ImportError:
    torch = None

CASES = [(64, 1, 8, 16), (32, 64, 56, 64), (8, 256, 14, 256)]


def conv_cases(lib, fn, arrays):
    """Forward and forward+backward closures for ``lib`` (``ember`` or ``torch``)."""
    x, w, b, g = (lib.tensor(a) for a in arrays)
    xr, wr, br = (lib.tensor(a, requires_grad=True) for a in arrays[:3])

    def forward():
        fn(x, w, b, padding=1)

    def forward_backward():
        fn(xr, wr, br, padding=1).backward(g)
        xr.grad = wr.grad = br.grad = None
    return {"fwd": forward, "fwd+bwd": forward_backward}


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'conv2d 3x3 pad 1, float32':<32}{'ember ms':>10}{'torch ms':>10}"
          f"{'ember/torch':>13}")
    ratios = []
    for n, c, hw, k in CASES:
        arrays = [rng.standard_normal(s, dtype=np.float32) for s in
                  ((n, c, hw, hw), (k, c, 3, 3), (k,), (n, k, hw, hw))]
        em = conv_cases(E, F.conv2d, arrays)
        to = conv_cases(torch, torch.nn.functional.conv2d, arrays) if torch else {}
        algo = explain(E.tensor(arrays[0]), E.tensor(arrays[1]), padding=1).chosen
        for what, fn in em.items():
            e = best_of(fn, repeat=5) / 1e3
            t = best_of(to[what], repeat=5) / 1e3 if to else float("nan")
            if to:
                ratios.append(e / t)
            name = f"({n},{c},{hw}x{hw})->{k} {what}"
            print(f"{name:<32}{e:>10.3f}{t:>10.3f}{e / t:>13.2f}")
    print(f"algorithm: {algo}")
    if ratios:
        print(f"geomean ember/torch: {float(np.exp(np.mean(np.log(ratios)))):.2f} "
              f"(budget: <= 1.0)")


if __name__ == "__main__":
    main()
