"""The one-minute smoke check of ember's GPU plugins, the first step of ``.ci/gpu``.

Each check runs on its own, is timed, and prints one line: ``OK``, ``FAIL`` (with the
traceback above it) or, for the checks that confirm a refusal of the real libraries which
ember works around (``REFUSES``), ``OK`` when the library refuses as expected and
``FAIL`` when it accepts (then the fake in ``tests/plugins/cuda`` is stricter than the real
library, and the workaround can go). The checks, in order:

* the environment: package versions, gcc and Python's headers (Triton compiles its
  launcher stub with them: ``triton/runtime/build.py``);
* the plugins: ``python -m ember plugins``, ``ember.cuda.is_available()``;
* a tensor round trip host -> GPU -> host for each dtype, and ``from_numpy`` read on a
  non-blocking stream right after the copy;
* one kernel per family of ``core/ember/backends/kernels`` (pointwise, reduction, scan,
  scatter, indexing, sorting, matmul, softmax, normalization, pooling, loss, special,
  data-dependent, copying), each against the CPU backend on the same inputs;
* the random generator, streams and events;
* one cuDNN graph per pass (``fprop``, ``dgrad``, ``wgrad``) through ``conv2d`` forward
  and backward, against the CPU in float64;
* one fused Triton kernel through ``ember.jit.trace``, against eager;
* the real libraries' refusals: CuPy's ``maximum.accumulate`` and ``maximum.at`` on
  float16 (``cupy/_core/_kernel.pyx``, ``ufunc.accumulate`` and ``ufunc.at``, v14.2).

Run from the repository root: ``python .ci/gpu_smoke.py`` (exit status 1 when a check
fails). ``--device cpu`` runs the ember checks on the CPU backend against itself: a dry
run of this script on a machine without a GPU.
"""
from __future__ import annotations

import argparse
import importlib.metadata as metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import traceback

import numpy as np

PACKAGES = ("numpy", "cupy-cuda13x", "cupy-cuda12x", "triton", "torch",
            "nvidia-cudnn-frontend", "nvidia-cudnn-cu13", "ml_dtypes", "pytest",
            "pytest-xdist", "execnet", "scikit-learn", "scipy", "pip", "setuptools")
RESULTS: list[tuple[str, str]] = []


def check(name: str, refusal: type | None = None):
    """Run the decorated function now as the check ``name``; print and record its status.

    ``refusal``: the exception type the call must raise (a real library's limit); then
    raising it is OK and returning is FAIL."""
    def run(fn):
        start = time.perf_counter()
        try:
            detail = fn()
            status = "FAIL" if refusal else "OK"
            detail = "accepted: the limit is gone" if refusal else detail
        except Exception as e:  # noqa: BLE001 - every failure is reported, none stops
            ok = refusal is not None and isinstance(e, refusal)
            status = "OK" if ok else "FAIL"
            detail = f"{'refused: ' if ok else ''}{type(e).__name__}: {str(e)[:300]}"
            if not ok:
                traceback.print_exc()
        seconds = time.perf_counter() - start
        print(f"[{status:>4}] {name} ({seconds:.2f}s) {'' if detail is None else detail}",
              flush=True)
        RESULTS.append((status, name))
        return fn
    return run


def environment() -> None:
    """Print the interpreter, package versions, gcc and Python.h."""
    print("python", sys.version.split()[0], sys.executable)
    for name in PACKAGES:
        try:
            print(f"  {name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            print(f"  {name}: not installed")


def same(got, want, what: str, tol: float = 1e-5) -> None:
    """``got`` (an ember tensor, any device) equals ``want`` (a tensor) within ``tol``."""
    g = got.detach().cpu()
    w = want.detach().cpu()
    if g.shape != w.shape or g.dtype != w.dtype:
        raise AssertionError(f"{what}: expected {w.dtype}{tuple(w.shape)}, got "
                             f"{g.dtype}{tuple(g.shape)}")
    np.testing.assert_allclose(g.double().numpy(), w.double().numpy(), rtol=tol, atol=tol,
                               err_msg=what)


def main(device: str) -> int:
    """Run every check on ``device`` ("cuda", or "cpu" for a dry run); 0 when all pass."""
    environment()

    @check("gcc and Python.h (Triton builds its launcher with them)")
    def _():
        cc = shutil.which("gcc") or shutil.which("cc")
        header = os.path.join(sysconfig.get_paths()["include"], "Python.h")
        if cc is None or not os.path.exists(header):
            raise RuntimeError(f"expected a C compiler and {header}: cc={cc}, Python.h "
                               f"present={os.path.exists(header)}")
        return f"{cc}, {header}"

    import ember as E
    import ember.nn.functional as F

    @check("plugins: python -m ember plugins, ember.cuda.is_available()")
    def _():
        listing = subprocess.run([sys.executable, "-m", "ember", "plugins"],
                                 capture_output=True, text=True, timeout=60)
        print(listing.stdout[-2000:], listing.stderr[-1000:])
        if device == "cuda" and not E.cuda.is_available():
            raise RuntimeError("ember.cuda.is_available() is False: see the listing above")
        return (E.cuda.device_count(), E.cuda.get_device_name() if device == "cuda" else None)

    rng = np.random.default_rng(0)

    def host(*shape, dtype=np.float32):
        return rng.uniform(-2, 2, shape).astype(dtype)

    @check("round trip host -> device -> host, every dtype; from_numpy then a side stream")
    def _():
        for dt in E.types.all_scalar_types:
            a = E.tensor(host(5, 7)).to(dt)
            same(a.to(device).cpu(), a, f"round trip {dt.name}", 0)
        if device != "cuda":
            return None
        big = host(1 << 22)
        t = E.from_numpy(big).cuda()
        s = E.cuda.Stream()
        with E.cuda.stream(s):
            total = float(t.double().sum().item())
        s.synchronize()
        np.testing.assert_allclose(total, big.astype(np.float64).sum(), rtol=1e-9)

    families = {
        "pointwise fp32/fp16/bf16, floor_divide": lambda x, i: [
            (x.half() * 2 + 1).sin(), (x.bfloat16() - 0.5).exp(), E.floor_divide(x, 0.7)],
        "reduction": lambda x, i: [x.sum(1), x.amax(0), x.mean()],
        "scan: cumsum, cummax, cummin": lambda x, i: [  # float32 indices: no ties
            E.cumsum(x, 1), E.cummax(x.half(), 1)[0], E.cummin(x, 0)[1]],
        "scatter_reduce amax/amin, float16 and uint8": lambda x, i: [
            E.scatter_reduce(x.half(), 1, i, x.half(), "amax"),
            E.scatter_reduce((x * 10).abs().to(E.uint8), 1, i, (x * 10).abs().to(E.uint8),
                             "amin")],
        "indexing": lambda x, i: [E.index_select(x, 0, i[:, 0]), E.gather(x, 1, i)],
        "sorting": lambda x, i: [E.sort(x, 1)[0], E.topk(x, 3)[0]],
        "matmul fp32/fp16": lambda x, i: [x @ x.t(), x.half() @ x.t().half()],
        "softmax, layer_norm": lambda x, i: [F.softmax(x, -1), F.layer_norm(x, (x.shape[1],))],
        "max_pool2d, cross_entropy": lambda x, i: [
            F.max_pool2d(x.reshape(1, 1, *x.shape), 2), F.cross_entropy(x, i[:, 0])],
        "special: lgamma, erfinv": lambda x, i: [E.lgamma(x), E.erfinv(x / 3)],
        "data-dependent: nonzero, unique": lambda x, i: [E.nonzero(x > 0), E.unique(i)],
        "copying: contiguous of a transpose, cat": lambda x, i: [
            x.t().contiguous(), E.cat([x, x], 0)],
    }
    x_host = host(6, 8)
    i_host = rng.integers(0, 6, (6, 8)).astype(np.int64)
    for family, fn in families.items():
        @check(f"kernels: {family}")
        def _(fn=fn, family=family):
            want = fn(E.tensor(x_host), E.tensor(i_host))
            got = fn(E.tensor(x_host).to(device), E.tensor(i_host).to(device))
            for k, (g, w) in enumerate(zip(got, want)):
                tol = 1e-2 if w.dtype in (E.float16, E.bfloat16) else 1e-4
                same(g, w, f"{family} [{k}]", tol)

    @check("rng: manual_seed, randn, generator state")
    def _():
        E.manual_seed(0)
        mean = float(E.randn(10000, device=device).mean().item())
        g = E.Generator(device).manual_seed(1)
        state = g.get_state()
        a = E.randn(4, generator=g, device=device)
        g.set_state(state)
        same(E.randn(4, generator=g, device=device), a, "replayed state", 0)
        return f"mean {mean:.3f}"

    if device == "cuda":
        @check("streams and events")
        def _():
            s = E.cuda.Stream()
            x = E.randn(1024, 1024, device="cuda")
            s.wait_stream(E.cuda.current_stream())
            a, b = E.cuda.Event(enable_timing=True), E.cuda.Event(enable_timing=True)
            with E.cuda.stream(s):
                a.record()
                y = x @ x
                b.record()
            E.cuda.current_stream().wait_stream(s)
            b.synchronize()
            same(y, (x.cpu() @ x.cpu()), "matmul on a side stream", 1e-2)
            return f"{a.elapsed_time(b):.3f} ms"

        @check("cuDNN: one graph per pass (fprop, dgrad, wgrad) vs CPU float64")
        def _():
            import ember.backends.convolution as conv
            from ember_cuda.cudnn import unavailable_reason
            if not E.backends.cudnn.is_available():
                raise RuntimeError(f"cuDNN unavailable: {unavailable_reason()}")
            algo = next(a for a in conv.algorithms("cuda") if a.name == "cudnn")
            x, w = E.tensor(host(2, 3, 9, 9)), E.tensor(host(4, 3, 3, 3))
            xc, wc = x.cuda().requires_grad_(True), w.cuda().requires_grad_(True)
            y = F.conv2d(xc, wc, padding=1, stride=2)
            y.sum().backward()
            xr, wr = x.double().requires_grad_(True), w.double().requires_grad_(True)
            yr = F.conv2d(xr, wr, padding=1, stride=2)
            yr.sum().backward()
            same(y.double(), yr, "fprop", 1e-3)
            same(xc.grad.double(), xr.grad, "dgrad", 1e-3)
            same(wc.grad.double(), wr.grad, "wgrad", 1e-3)
            # NOTE: GraphCache keeps its entries private; a smoke check may look inside.
            built = {key.op: type(item).__name__ for key, item in algo.graphs._items.items()}
            if set(built) != {"fprop", "dgrad", "wgrad"} or "Declined" in built.values():
                raise RuntimeError(f"expected one built graph per pass, got {built}")
            return f"cuDNN {E.backends.cudnn.version()}: {built}"

    @check("Triton: one fused kernel through ember.jit.trace vs eager")
    def _():
        from ember.jit import fuser as jit_fuser
        jit_fuser.clear_fusion_fallbacks()
        torch_before = "torch" in sys.modules

        def chain(a, b):
            return ((a * 1.5 + b).sigmoid() * a - 0.25).tanh()
        args = (E.tensor(host(37, 19)).to(device), E.tensor(host(37, 19)).to(device))
        traced = E.jit.trace(chain, args, check_trace=False)
        same(traced(*args), chain(*args), "fused chain", 1e-5)
        same(traced(*args), chain(*args), "fused chain, second call", 1e-5)
        groups = str(traced.graph_for(*args)).count("prim::FusionGroup")
        fallbacks = [str(f) for f in jit_fuser.fusion_fallbacks()]
        if device == "cuda" and (groups == 0 or fallbacks):
            raise RuntimeError(f"expected a fused group, got {groups}; fallbacks {fallbacks}")
        return (f"groups {groups}; torch imported before/after: {torch_before}/"
                f"{'torch' in sys.modules} (Triton 3.6 and 3.7 import it)")

    if device == "cuda":
        import cupy

        @check("CuPy refuses maximum.accumulate (scan.py computes cummax itself)",
               refusal=NotImplementedError)
        def _():
            return cupy.maximum.accumulate(cupy.arange(4.0))

        @check("CuPy refuses maximum.at on float16 (scatter_reduce widens)", refusal=TypeError)
        def _():
            cupy.maximum.at(cupy.zeros(3, cupy.float16), cupy.asarray([0, 0, 1]),
                            cupy.ones(3, cupy.float16))

    failed = [name for status, name in RESULTS if status == "FAIL"]
    print(f"SMOKE: {len(RESULTS) - len(failed)}/{len(RESULTS)} OK; failed: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                        help="cpu: run the ember checks on the CPU backend (a dry run)")
    sys.exit(main(parser.parse_args().device))
