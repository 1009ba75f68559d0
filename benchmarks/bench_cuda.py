"""The cuda backend against torch on the same GPU: elementwise, matmul and conv2d.

Budget (issue 7): cuDNN convolution within 1.05 x torch's time, forward and forward +
backward. Cases, each ember (CuPy kernels; cuDNN through the cuDNN Frontend when
installed) against torch in the same process:

* elementwise on 2**24 float32: one ``add``, and a chain of 10 ops
  (``mul, add, sin, mul, sub, abs, sqrt, add, log, tanh``) run eagerly;
* matmul 4096 x 4096 @ 4096 x 4096 in float32 and float16;
* conv2d with bias, forward and forward + backward (grads of input, weight and bias), in
  float32: the three shapes of ``bench_conv.py`` (3x3, padding 1) and ResNet-50-like
  layers at batch 32: (32,64,56,56)->64 3x3, (32,256,56,56)->64 1x1, (32,128,28,28)->128
  3x3, (32,256,14,14)->256 3x3, (32,512,7,7)->512 3x3.

Timing: CUDA events around ``reps`` calls after a warm-up, best of ``rounds``, each
library with its own events (``ember.cuda.Event``, ``torch.cuda.Event``) and a device
synchronize before each round. TF32 is off on both sides unless ``--tf32`` (both enable
it for cuDNN convolutions by default: ``cudnn.allow_tf32``; ember's float32 GEMMs use
CuPy's default, no TF32),
and ``cudnn.benchmark`` is off on both sides unless ``--cudnn-benchmark``.

Run: ``python benchmarks/bench_cuda.py [--reps 20] [--rounds 5] [--tf32]
[--cudnn-benchmark]``. Prints milliseconds per call, ember/torch ratios and ember's
convolution algorithm per case. Without a GPU, CuPy, the ember-cuda plugin or a CUDA build
of torch it prints why and exits with status 0.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

import ember as E

CONV_CASES = [  # (N, C, H=W, K, kernel)
    (64, 1, 8, 16, 3), (32, 64, 56, 64, 3), (8, 256, 14, 256, 3),       # bench_conv.py
    (32, 256, 56, 64, 1), (32, 128, 28, 128, 3), (32, 256, 14, 256, 3),  # ResNet-50-like
    (32, 512, 7, 512, 3)]                                               # (+ (32,64,56)->64)
BUDGET = 1.05


def why_not(torch) -> str | None:
    """Why this machine cannot run the benchmark, or None."""
    if torch is None:
        return "torch is not installed (pip install torch with CUDA)"
    if not torch.cuda.is_available():
        return f"torch {torch.__version__} sees no CUDA GPU"
    if not E.cuda.is_available():
        from ember.plugins import manager
        info = next((i for i in manager.plugins() if i.name == "cuda"), None)
        why = (info.unavailable or info.error) if info else "ember-cuda is not installed"
        return f"ember's cuda backend is not available: {why}"
    return None


def gpu_ms(fn, sync, event, reps: int, rounds: int) -> float:
    """Best over ``rounds`` of the mean milliseconds of ``reps`` calls of ``fn``, timed by
    CUDA events of one library (``event()`` makes a timing event, ``sync()`` waits)."""
    for _ in range(3):
        fn()
    sync()
    best = float("inf")
    for _ in range(rounds):
        start, end = event(), event()
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / reps)
        sync()
    return best


def elementwise(lib, x, y):
    def add():
        return x + y

    def chain():
        z = x * 1.5
        z = z + y
        z = z.sin()
        z = z * x
        z = z - y
        z = z.abs()
        z = z.sqrt()
        z = z + 1.0
        z = z.log()
        return z.tanh()
    return {"add 2^24 float32": add, "10-op chain 2^24 float32": chain}


def conv_closures(lib, conv2d, arrays, pad):
    x, w, b, g = arrays
    xr, wr, br = (t.detach().clone().requires_grad_() for t in (x, w, b))

    def forward():
        return conv2d(x, w, b, padding=pad)

    def forward_backward():
        conv2d(xr, wr, br, padding=pad).backward(g)
        xr.grad = wr.grad = br.grad = None
    return forward, forward_backward


def run(torch, reps: int, rounds: int) -> list:
    """Rows (name, ember ms, torch ms, note)."""
    rng = np.random.default_rng(0)
    ember_t = lambda a, dtype=None: E.tensor(a, device="cuda", dtype=dtype)
    torch_t = lambda a, dtype=None: torch.from_numpy(a).to("cuda", dtype=dtype)
    libs = {"ember": (ember_t, E.cuda.synchronize, lambda: E.cuda.Event(enable_timing=True)),
            "torch": (torch_t, torch.cuda.synchronize,
                      lambda: torch.cuda.Event(enable_timing=True))}
    rows = []

    def compare(name, make, note=""):
        ms = {}
        for lib, (_, sync, event) in libs.items():
            ms[lib] = gpu_ms(make(lib), sync, event, reps, rounds)
        rows.append((name, ms["ember"], ms["torch"], note))
        print(f"{name:<44}{ms['ember']:>10.3f}{ms['torch']:>10.3f}"
              f"{ms['ember'] / ms['torch']:>9.2f}  {note}", flush=True)

    x, y = (rng.standard_normal(1 << 24, dtype=np.float32) for _ in range(2))
    ops = {lib: elementwise(lib, make(x), make(y)) for lib, (make, _, _) in libs.items()}
    for name in ops["ember"]:
        compare(name, lambda lib, name=name: ops[lib][name])
    a, b = (rng.standard_normal((4096, 4096), dtype=np.float32) for _ in range(2))
    for dt, tdt in ((E.float32, torch.float32), (E.float16, torch.float16)):
        mats = {"ember": (ember_t(a, dt), ember_t(b, dt)),
                "torch": (torch_t(a, tdt), torch_t(b, tdt))}
        compare(f"matmul 4096^2 {dt.name}", lambda lib, m=mats: lambda: m[lib][0] @ m[lib][1])
    from ember.backends.convolution import explain
    for n, c, hw, k, ks in CONV_CASES:
        arrays = [rng.standard_normal(s, dtype=np.float32) for s in
                  ((n, c, hw, hw), (k, c, ks, ks), (k,), (n, k, hw, hw))]
        pad = ks // 2
        closures = {"ember": conv_closures(E, E.nn.functional.conv2d, [ember_t(t) for t in
                                                                         arrays], pad),
                    "torch": conv_closures(torch, torch.nn.functional.conv2d,
                                           [torch_t(t) for t in arrays], pad)}
        algo = explain(ember_t(arrays[0]), ember_t(arrays[1]), padding=pad).chosen
        for i, what in enumerate(("fwd", "fwd+bwd")):
            compare(f"conv ({n},{c},{hw},{hw})->{k} {ks}x{ks} {what}",
                    lambda lib, i=i: closures[lib][i], note=f"conv {algo}")
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--tf32", action="store_true", help="let both use TF32 (torch's default "
                                                       "for cuDNN convolutions)")
    p.add_argument("--cudnn-benchmark", action="store_true",
                   help="time cuDNN's engines once per shape, on both sides")
    args = p.parse_args(argv)
    try:
        import torch
    except ImportError:
        torch = None
    reason = why_not(torch)
    if reason is not None:
        print(f"bench_cuda: skipped: {reason}")
        return 0
    import ember.backends.cudnn as cudnn
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = args.tf32
    cudnn.allow_tf32 = args.tf32
    torch.backends.cudnn.benchmark = cudnn.benchmark = args.cudnn_benchmark
    print(f"GPU: {E.cuda.get_device_name()}; torch {torch.__version__}; cuDNN available to "
          f"ember: {cudnn.is_available()} (version {cudnn.version()}), to torch: "
          f"{torch.backends.cudnn.version()}; tf32={args.tf32}; "
          f"cudnn.benchmark={args.cudnn_benchmark}")
    print(f"{'ms per call':<44}{'ember':>10}{'torch':>10}{'ratio':>9}")
    rows = run(torch, args.reps, args.rounds)
    conv = [(name, e / t) for name, e, t, note in rows if "cudnn" in note]
    if conv:
        worst = max(conv, key=lambda r: r[1])
        verdict = "within" if worst[1] <= BUDGET else "OVER"
        print(f"budget: cuDNN conv within {BUDGET}x torch: worst {worst[1]:.2f}x ({worst[0]}) "
              f"-> {verdict}; geomean {np.exp(np.mean(np.log([r for _, r in conv]))):.2f}x "
              f"over {len(conv)} cases")
    else:
        print("budget: no case ran on cuDNN (ember-cuda[cudnn] not installed or declined); "
              "the conv rows above are the native algorithm")
    return 0


if __name__ == "__main__":
    sys.exit(main())
