"""The Triton fuser on a GPU: a pointwise chain against copy bandwidth, and an LSTM cell
against ember unfused, torch eager and torch.compile.

Budget (issue 8): the fused pointwise chain reaches at least 85% of the device's copy
bandwidth, and fused ember is no slower than torch.compile. Cases:

* a chain of 10 pointwise ops on two float32 inputs of ``--size`` elements (2**24):
  ``log(abs(tanh(sigmoid(x * 1.5 + y) * x - 0.25) * y) + 1)``, traced with
  ``ember.jit.trace`` into one fused kernel that reads ``x`` and ``y`` and writes the
  result: 12 bytes an element. Achieved GB/s = those bytes / time. The copy bandwidth is
  a CuPy device-to-device ``cudaMemcpyAsync`` moving the same bytes (6 read, 6 written an
  element), timed the same way;
* the seeds' LSTM cell (batch 64, input 512, hidden 512: ``gates = x @ w_ih.t() +
  hx @ w_hh.t() + b``, chunked in four, ``sigmoid``/``tanh``, ``cy = f * cx + i * g``,
  ``hy = o * tanh(cy)``), forward, and forward + backward of ``hy.sum() + cy.sum()``
  (gradients of all six inputs).

Rows: ember fused (the triton_fuser plugin's fuser), ember unfused (the same function
traced while ``ember.jit.runtime.fuser.using_fuser`` gives "cuda" a fuser that fuses nothing, so
FuseGraph forms no groups and every op is its own CuPy kernel), torch eager and
torch.compile when torch with CUDA is importable. TF32 is off on both sides.

Timing: CuPy events on the current stream (every library here launches on the legacy
default stream) around ``inner`` back-to-back calls after a warm-up, ``inner`` chosen so
one repeat takes about 2 ms; the median over ``--repeat`` repeats, in milliseconds per call.
The budget checks print PASS or FAIL and never assert; fused-vs-unfused and ember-vs-torch
differences are printed as a sanity check of the fused results.

Run: ``python benchmarks/bench_fuser.py [--repeat 20] [--size 2**24]``. Without a GPU,
CuPy, the ember-cuda plugin or the triton_fuser plugin it prints why, then (when the
plugin's package imports) the host time of one LSTM cell forward on tiny CPU tensors,
eager, traced and traced with a fused group whose launch is stubbed (``host_overhead``),
and exits with status 0.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys

import numpy as np

import ember as E
from ember.jit.runtime import fuser as jit_fuser

COPY_BUDGET = 0.85          # fused chain GB/s / copy GB/s
BATCH, INPUT, HIDDEN = 64, 512, 512


def size_arg(text: str) -> int:
    """``16777216`` or ``2**24``."""
    base, _, exp = text.partition("**")
    try:
        n = int(base) ** int(exp) if exp else int(base)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an element count such as 16777216 or "
                                         f"2**24, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive element count, got {n}")
    return n


def why_not() -> str | None:
    """Why this machine cannot run the benchmark, or None."""
    from ember.plugins import manager
    if not E.cuda.is_available():
        info = next((i for i in manager.plugins() if i.name == "cuda"), None)
        why = (info.unavailable or info.error or "disabled") if info else \
            "ember-cuda is not installed"
        return f"ember's cuda backend is not available: {why}"
    info = next((i for i in manager.plugins() if i.name == "triton_fuser"), None)
    if info is None:
        return "the triton_fuser plugin is not installed (pip install -e plugins/triton_fuser)"
    if info.disabled:
        return "the triton_fuser plugin is disabled (EMBER_PLUGINS / EMBER_DISABLE_PLUGINS)"
    if info.unavailable or info.error:
        return f"the triton_fuser plugin did not load: {info.unavailable or info.error}"
    if jit_fuser.get_fuser("cuda") is None:
        return "no fuser is registered for 'cuda' (the triton_fuser plugin registered none)"
    return None


def import_torch(need_gpu: bool = True):
    """(torch, None) when torch (with CUDA, unless ``need_gpu`` is False) is importable,
    else (None, why not)."""
    try:
        import torch
    except ImportError:
        return None, "torch is not installed"
    if need_gpu and not torch.cuda.is_available():
        return None, f"torch {torch.__version__} sees no CUDA GPU"
    return torch, None


class NoFusion:
    """A fuser that fuses nothing: with it registered for "cuda", FuseGraph forms no
    groups and traced graphs run op by op (ember unfused)."""

    name, device_type = "none", "cuda"

    def can_fuse_node(self, node) -> bool:
        return False

    def compile(self, subgraph):
        raise jit_fuser.FusionDeclined("fusion is off for the unfused rows")


# ---- timing -------------------------------------------------------------------------------
def gpu_ms(cupy, fn, repeat: int) -> float:
    """Median over ``repeat`` of the milliseconds per call of ``fn``, from CuPy events
    around ``inner`` back-to-back calls (about 2 ms of work), after a warm-up."""
    for _ in range(3):
        fn()
    cupy.cuda.runtime.deviceSynchronize()

    def one(inner: int) -> float:
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end) / inner

    inner = max(1, min(1000, math.ceil(2.0 / max(one(1), 1e-3))))
    return statistics.median(one(inner) for _ in range(repeat))


def try_ms(cupy, fn, repeat: int):
    """(ms, None), or (None, why) when running ``fn`` fails (torch.compile compiles on
    its first call and may fail on an unsupported setup, say)."""
    try:
        return gpu_ms(cupy, fn, repeat), None
    except Exception as e:  # noqa: BLE001 - a failing comparison is reported, not fatal
        return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def fusion_groups(traced, *inputs) -> int:
    """How many ``prim::FusionGroup`` nodes the optimized graph for ``inputs`` has, those
    in subgraph attributes (a DifferentiableGraph's forward) included."""
    def count(graph) -> int:
        n = 0
        for node in graph.all_nodes():
            n += node.kind == "prim::FusionGroup"
            for name in node.attr_names:
                if hasattr(node.attr(name), "all_nodes"):
                    n += count(node.attr(name))
        return n
    return count(traced.graph_for(*inputs))


def max_diff(a, b) -> float:
    to_np = lambda t: t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)
    return float(np.max(np.abs(to_np(a).astype(np.float64) - to_np(b).astype(np.float64))))


class Table:
    def __init__(self):
        print(f"{'case':<40}{'ms':>10}{'GB/s':>10}  note")

    def row(self, name: str, ms, nbytes: int | None = None, note: str = "") -> None:
        if ms is None:
            print(f"{name:<40}{'-':>10}{'':>10}  {note}", flush=True)
            return
        gbs = f"{nbytes / ms / 1e6:10.0f}" if nbytes else f"{'':>10}"
        print(f"{name:<40}{ms:10.4f}{gbs}  {note}", flush=True)


def check(ok, what: str) -> None:
    print(f"{'SKIP' if ok is None else 'PASS' if ok else 'FAIL'}: {what}")


# ---- the cases ----------------------------------------------------------------------------
def chain(x, y):
    """Ten pointwise ops on two inputs (ember and torch tensors alike)."""
    z = x * 1.5           # 1
    z = z + y             # 2
    z = z.sigmoid()       # 3
    z = z * x             # 4
    z = z - 0.25          # 5
    z = z.tanh()          # 6
    z = z * y             # 7
    z = z.abs()           # 8
    z = z + 1.0           # 9
    return z.log()        # 10


def lstm_cell(x, hx, cx, w_ih, w_hh, b):
    """The seeds' LSTM cell: (hy, cy), each (batch, hidden)."""
    gates = x @ w_ih.t() + hx @ w_hh.t() + b
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    hy = o * cy.tanh()
    return hy, cy


def forward_backward(cell, inputs):
    def step():
        hy, cy = cell(*inputs)
        (hy.sum() + cy.sum()).backward()
        for t in inputs:
            t.grad = None
    return step


def run_chain(cupy, torch, n: int, repeat: int, table: Table) -> dict:
    rng = np.random.default_rng(0)
    xs, ys = (rng.standard_normal(n, dtype=np.float32) for _ in range(2))
    x, y = E.tensor(xs, device="cuda"), E.tensor(ys, device="cuda")
    nbytes = 3 * n * 4
    ms = {}
    fused = E.jit.trace(chain, (x, y))
    groups = fusion_groups(fused, x, y)
    ms["fused"], err = try_ms(cupy, lambda: fused(x, y), repeat)
    table.row("chain: ember fused", ms["fused"], nbytes, err or f"{groups} fusion group(s)")
    with jit_fuser.using_fuser("cuda", NoFusion()):
        unfused = E.jit.trace(chain, (x, y))
        ms["unfused"], err = try_ms(cupy, lambda: unfused(x, y), repeat)
        ref = unfused(x, y)
    table.row("chain: ember unfused", ms["unfused"], nbytes,
              err or "op by op, one CuPy kernel each")
    src = cupy.empty(nbytes // 2, dtype=cupy.uint8)
    dst = cupy.empty_like(src)
    ms["copy"] = gpu_ms(cupy, lambda: dst.data.copy_from_device_async(src.data, src.nbytes),
                        repeat)
    table.row("copy: CuPy device-to-device", ms["copy"], nbytes,
              f"cudaMemcpyAsync of {src.nbytes >> 20} MiB")
    if torch is not None:
        tx, ty = torch.from_numpy(xs).cuda(), torch.from_numpy(ys).cuda()
        ms["torch"], err = try_ms(cupy, lambda: chain(tx, ty), repeat)
        table.row("chain: torch eager", ms["torch"], nbytes, err or "")
        compiled = torch.compile(chain)
        ms["compile"], err = try_ms(cupy, lambda: compiled(tx, ty), repeat)
        table.row("chain: torch.compile", ms["compile"], nbytes, err or "")
        print(f"  max |ember fused - torch eager| = {max_diff(fused(x, y), chain(tx, ty)):.2e}")
    print(f"  max |ember fused - ember unfused| = {max_diff(fused(x, y), ref):.2e}")
    return ms


def run_lstm(cupy, torch, repeat: int, table: Table) -> dict:
    rng = np.random.default_rng(1)
    scale = 1 / math.sqrt(HIDDEN)
    arrays = [rng.standard_normal(s, dtype=np.float32) * s_ for s, s_ in (
        ((BATCH, INPUT), 1), ((BATCH, HIDDEN), 1), ((BATCH, HIDDEN), 1),
        ((4 * HIDDEN, INPUT), scale), ((4 * HIDDEN, HIDDEN), scale), ((4 * HIDDEN,), scale))]
    plain = [E.tensor(a, device="cuda") for a in arrays]
    grads = [E.tensor(a, device="cuda").requires_grad_() for a in arrays]
    ms = {}

    def ember_rows(label: str, traced):
        note = f"{fusion_groups(traced, *plain)} fusion group(s)"
        ms[f"{label} fwd"], err = try_ms(cupy, lambda: traced(*plain), repeat)
        table.row(f"lstm fwd: ember {label}", ms[f"{label} fwd"], note=err or note)
        ms[f"{label} fwd+bwd"], err = try_ms(
            cupy, forward_backward(traced, grads), repeat)
        note = f"{fusion_groups(traced, *grads)} fusion group(s) in the forward graph"
        table.row(f"lstm fwd+bwd: ember {label}", ms[f"{label} fwd+bwd"], note=err or note)
        return traced(*plain)

    fused = ember_rows("fused", E.jit.trace(lstm_cell, tuple(plain)))
    with jit_fuser.using_fuser("cuda", NoFusion()):
        unfused = ember_rows("unfused", E.jit.trace(lstm_cell, tuple(plain)))
    print(f"  max |ember fused - ember unfused| = "
          f"{max(max_diff(a, b) for a, b in zip(fused, unfused)):.2e} (hy, cy)")
    if torch is not None:
        t_plain = [torch.from_numpy(a).cuda() for a in arrays]
        t_grads = [t.clone().requires_grad_() for t in t_plain]
        cases = {"torch eager": lstm_cell, "torch.compile": torch.compile(lstm_cell)}
        for label, cell in cases.items():
            ms[f"{label} fwd"], err = try_ms(cupy, lambda: cell(*t_plain), repeat)
            table.row(f"lstm fwd: {label}", ms[f"{label} fwd"], note=err or "")
            ms[f"{label} fwd+bwd"], err = try_ms(
                cupy, forward_backward(cell, t_grads), repeat)
            table.row(f"lstm fwd+bwd: {label}", ms[f"{label} fwd+bwd"], note=err or "")
        out = lstm_cell(*t_plain)
        print(f"  max |ember fused - torch eager| = "
              f"{max(max_diff(a, b) for a, b in zip(fused, out)):.2e} (hy, cy)")
    return ms


# ---- host overhead, without a GPU ---------------------------------------------------------
def host_overhead(repeat: int) -> None:
    """Microseconds of host (Python) time per call of the LSTM cell on tiny CPU tensors
    (batch 2, hidden 4: the arithmetic is negligible), eager, traced unfused, and traced
    with the Triton fuser's groups for "cpu" built but their launches stubbed out (the
    kernels never run, so their outputs are garbage): what one forward, and one forward
    and backward, cost ember on the host before any GPU work, the floor of a launch-bound
    cell. torch eager on the same CPU tensors is the reference where torch is installed."""
    import time

    from ember_triton_fuser import HostOnlyFuser

    def us(fn) -> float:
        for _ in range(20):
            fn()
        runs = []
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(200):
                fn()
            runs.append((time.perf_counter() - start) / 200 * 1e6)
        return statistics.median(runs)

    rng = np.random.default_rng(2)
    shapes = [(2, 4), (2, 4), (2, 4), (16, 4), (16, 4), (16,)]
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    args = tuple(E.tensor(a) for a in arrays)
    leaves = tuple(E.tensor(a).requires_grad_() for a in arrays)
    seeds = [E.ones(2, 4), E.ones(2, 4)]

    def fwd_bwd(cell, backward, inputs, grads):
        def step():
            backward(list(cell(*inputs)), grads)
            for t in inputs:
                t.grad = None
        return step
    rows, notes = {}, {}
    with jit_fuser.using_fuser("cpu", NoFusion()):
        unfused = E.jit.trace(lstm_cell, args)
        rows["ember eager"] = (us(lambda: lstm_cell(*args)),
                               us(fwd_bwd(lstm_cell, E.autograd.backward, leaves, seeds)))
        rows["ember traced, unfused"] = (
            us(lambda: unfused(*args)), us(fwd_bwd(unfused, E.autograd.backward, leaves, seeds)))
    with jit_fuser.using_fuser("cpu", HostOnlyFuser()):
        fused = E.jit.trace(lstm_cell, args, check_trace=False)  # outputs are garbage
        fused(*args)
        step = fwd_bwd(fused, E.autograd.backward, leaves, seeds)
        step()
        rows["ember traced, fused"] = (us(lambda: fused(*args)), us(step))
        notes["ember traced, fused"] = (f"{fusion_groups(fused, *args)} + "
                                        f"{backward_groups(fused)} fusion group(s), "
                                        f"launches stubbed")
    torch, _ = import_torch(need_gpu=False)
    if torch is not None:
        t_args = [torch.from_numpy(a) for a in arrays]
        t_leaves = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
        t_seeds = [torch.ones(2, 4), torch.ones(2, 4)]
        with torch.no_grad():
            t_fwd = us(lambda: lstm_cell(*t_args))
        rows["torch eager (CPU)"] = (t_fwd, us(fwd_bwd(lstm_cell, torch.autograd.backward,
                                                       t_leaves, t_seeds)))
    print(f"host time per LSTM cell call (batch 2, hidden 4, CPU; median of {repeat}):")
    print(f"  {'':<28}{'fwd':>8}   {'fwd+bwd':>8}")
    for name, (fwd, both) in rows.items():
        print(f"  {name:<28}{fwd:8.1f}   {both:8.1f} us  {notes.get(name, '')}")


def backward_groups(traced) -> int:
    """FusionGroups in the backward plans ``traced`` has run (its DifferentiableGraphs')."""
    count = 0
    for plan in traced.get_debug_state()["execution_plans"].values():
        for backward in plan["backward_executors"]:
            for bplan in backward["execution_plans"].values():
                count += sum(1 for n in bplan["graph"].all_nodes()
                             if n.kind == "prim::FusionGroup")
    return count


def no_slower(ms: dict, ours: str, theirs: str, what: str) -> None:
    a, b = ms.get(ours), ms.get(theirs)
    if a is None or b is None:
        check(None, f"{what}: ember fused no slower than torch.compile (not measured)")
    else:
        check(a <= b, f"{what}: ember fused {a:.4f} ms vs torch.compile {b:.4f} ms "
                      f"({a / b:.2f}x, budget <= 1.00x)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=20, help="timed repeats; the median is "
                                                          "reported (default 20)")
    p.add_argument("--size", type=size_arg, default=2 ** 24,
                   help="elements of the pointwise chain's inputs (default 2**24)")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error(f"--repeat must be at least 1, got {args.repeat}")
    reason = why_not()
    if reason is not None:
        print(f"bench_fuser: GPU part skipped: {reason}")
        try:
            host_overhead(args.repeat)
        except ImportError as e:
            print(f"bench_fuser: host part skipped: {e}")
        return 0
    import cupy
    torch, torch_why = import_torch()
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    fuser = jit_fuser.get_fuser("cuda")
    import triton
    print(f"GPU: {E.cuda.get_device_name()}; CuPy {cupy.__version__}; Triton "
          f"{triton.__version__}; fuser {getattr(fuser, 'name', type(fuser).__name__)}; "
          f"torch: {torch.__version__ if torch is not None else torch_why}; tf32 off; "
          f"median of {args.repeat}")
    jit_fuser.clear_fusion_fallbacks()
    table = Table()
    chain_ms = run_chain(cupy, torch, args.size, args.repeat, table)
    lstm_ms = run_lstm(cupy, torch, args.repeat, table)
    fallbacks = [f for f in jit_fuser.fusion_fallbacks() if f.fuser != NoFusion.name]
    for f in fallbacks:
        print(f"  fusion fallback: {f}")

    print()
    fused, copy = chain_ms.get("fused"), chain_ms["copy"]
    if fused is None:
        check(None, "chain: fused bandwidth (the fused chain failed)")
    else:
        ratio = copy / fused  # same bytes: bandwidth ratio = time ratio inverted
        check(ratio >= COPY_BUDGET,
              f"chain: fused {3 * args.size * 4 / fused / 1e6:.0f} GB/s = {ratio:.1%} of "
              f"copy {3 * args.size * 4 / copy / 1e6:.0f} GB/s (budget >= {COPY_BUDGET:.0%})")
    no_slower(chain_ms, "fused", "compile", "chain")
    no_slower(lstm_ms, "fused fwd", "torch.compile fwd", "lstm fwd")
    no_slower(lstm_ms, "fused fwd+bwd", "torch.compile fwd+bwd", "lstm fwd+bwd")
    if fallbacks:
        print(f"NOTE: {len(fallbacks)} fusion group(s) ran unfused (listed above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
