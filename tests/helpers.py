"""Test helpers: dtype lists and comparison against numpy float64 references."""
from __future__ import annotations

import contextlib
import importlib.util
import textwrap
import warnings

import numpy as np
import pytest

import ember as E
from ember.jit.runtime.fuser import Fuser
from ember.jit.runtime.interpreter import run_graph

FLOAT_DTYPES = [E.float32, E.float64]
LOW_FLOAT_DTYPES = [E.float16, E.bfloat16]
INT_DTYPES = [E.uint8, E.int8, E.int16, E.int32, E.int64]
ALL_DTYPES = [E.bool_] + INT_DTYPES + LOW_FLOAT_DTYPES + FLOAT_DTYPES

# torch is the differential reference: installed on the developers' machines, not by the
# project's test extra (a CPU wheel needs its own index), so the tests that compare with it
# skip without it and the numpy-reference tests around them still run.
TORCH_MISSING = ("torch (the differential reference) is not installed; the test extra does not "
                 "install it: pip install torch --index-url https://download.pytorch.org/whl/cpu")


def needs_torch():
    """The ``torch`` module, or a skip of the calling test (reason ``TORCH_MISSING``) where
    torch is not installed. Call it in the test (or in a helper the test calls) that compares
    with torch; a file that only compares with torch uses
    ``torch = pytest.importorskip("torch", reason=TORCH_MISSING)`` at module level instead."""
    return pytest.importorskip("torch", reason=TORCH_MISSING)


# The marker form, for a file whose module-level helpers use torch (imported there as
# ``torch = None`` where missing) and whose other tests run without it.
requires_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                    reason=TORCH_MISSING)


# Per-dtype tolerances for comparing against a float64 reference.
TOL = {E.float16: (1e-2, 1e-2), E.bfloat16: (2e-2, 2e-2), E.float32: (1e-5, 1e-6),
       E.float64: (1e-12, 1e-12)}


# A pointwise chain with a reduction, a value read twice and two outputs: the graph the
# autodiff and DifferentiableGraph tests differentiate, for x (2, 3) and y (3,)
POINTWISE_CHAIN = """graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %dims : int[] = prim::Constant[value=[0]]()
  %k : bool = prim::Constant[value=False]()
  %n : NoneType = prim::Constant[value=None]()
  %z : Tensor = ember::mul(%x, %y)
  %w : Tensor = ember::exp(%z)
  %s : Tensor = ember::sum(%w, %dims, %k, %n)
  %t : Tensor = ember::tanh(%s)
  %v : Tensor = ember::add(%t, %z, %one)
  return (%v, %w)"""


def mpi_missing() -> str | None:
    """Why tests cannot start ranks under ``mpiexec`` here (a skip reason), or None."""
    import shutil
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install ember-mpi)"
    if shutil.which("mpiexec") is None:
        return "mpiexec is not on PATH"
    if importlib.util.find_spec("ember_mpi") is None:
        return "the 'mpi' process-group backend (ember-mpi) is not installed"
    return None


def to_np(t) -> np.ndarray:
    """A tensor's values as a numpy array (bfloat16 widened to float32)."""
    arr = np.asarray(t.numpy(force=True))
    if arr.dtype == E.bfloat16.numpy:
        arr = arr.astype(np.float32)
    return arr


def assert_close(actual, expected, dtype=None, rtol=None, atol=None, check_dtype=True):
    """Compare a Tensor with a numpy/float64 reference, at the dtype's tolerance.

    ``dtype`` (default: ``actual.dtype``) is also checked against ``actual.dtype`` when
    ``check_dtype``.
    """
    dtype = dtype or actual.dtype
    if check_dtype:
        assert actual.dtype is dtype, f"dtype: expected {dtype}, got {actual.dtype}"
    r, a = TOL.get(dtype, (0, 0))
    got = to_np(actual)
    exp = np.asarray(expected)
    assert got.shape == exp.shape, f"shape: expected {exp.shape}, got {got.shape}"
    np.testing.assert_allclose(got.astype(np.float64), exp.astype(np.float64),
                               rtol=rtol if rtol is not None else r,
                               atol=atol if atol is not None else a, equal_nan=True)


def ulp_error32(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in float32 ulps of the float64 reference ``ref`` (the subnormal ulp at
    least; 0 where both round alike or both are NaN): the measure of the float32 kernels'
    stated error bounds."""
    ref32 = ref.astype(np.float32)
    ulp = np.maximum(np.spacing(np.abs(ref32)).astype(np.float64), 2.0 ** -149)
    err = np.abs(got.astype(np.float64) - ref) / ulp
    err[(got == ref32) | (np.isnan(got) & np.isnan(ref32))] = 0.0
    return err


def make(shape, dtype, low=-3.0, high=3.0, seed=0):
    """A deterministic test tensor of ``shape``/``dtype`` and its float64 numpy twin."""
    rng = np.random.default_rng(seed)
    if dtype is E.bool_:
        arr = rng.random(shape) > 0.5
    elif not dtype.is_floating_point:
        lo = 0 if dtype is E.uint8 else int(low)
        arr = rng.integers(lo, int(high) + 1, size=shape)
    else:
        arr = rng.uniform(low, high, size=shape)
    t = E.tensor(np.asarray(arr).astype(dtype.numpy))
    return t, to_np(t).astype(np.float64)


@contextlib.contextmanager
def no_warnings():
    """Fail if the block emits a warning a user would see under the default filters
    (ember's own filters included, so this checks what ember shows, not what numpy raises
    internally)."""
    with warnings.catch_warnings(record=True) as caught:
        yield
    assert not caught, [str(w.message) for w in caught]


def literal_blocks(doc):
    """The ``::`` literal blocks of a docstring, dedented."""
    blocks, lines = [], doc.splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith("::"):
            body = []
            for nxt in lines[i + 2:]:
                if nxt and not nxt.startswith("    "):
                    break
                body.append(nxt)
            blocks.append(textwrap.dedent("\n".join(body)).strip() + "\n")
    return blocks


def rand(*shape, seed=0, low=-2.0, high=2.0, dtype=None, requires_grad=False):
    """A uniform random tensor (float64 unless ``dtype``)."""
    dtype = E.float64 if dtype is None else dtype
    rng = np.random.default_rng(seed)
    return E.tensor(rng.uniform(low, high, size=shape).astype(dtype.numpy),
                    requires_grad=requires_grad)


def assert_same(got, ref, rtol=1e-10, atol=1e-12):
    """Both defined, same shape and dtype, values close (float64 tolerances)."""
    assert got is not None and ref is not None, (got, ref)
    assert tuple(got.shape) == tuple(ref.shape) and got.dtype is ref.dtype, \
        (got.shape, got.dtype, ref.shape, ref.dtype)
    np.testing.assert_allclose(to_np(got), to_np(ref), rtol=rtol, atol=atol)


def kinds(graph) -> list:
    """The kinds of every node of ``graph``, nested blocks included, in order."""
    return [n.kind for n in graph.all_nodes()]


def graph_inputs(graph, seed=0) -> list:
    """Random tensors for a graph whose inputs are all ``Float(sizes..., device=cpu)`` or
    ``Bool(sizes...)``: float32 values in [-2, 2), bools where those are positive."""
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-2, 2, v.type.sizes) for v in graph.inputs]
    return [E.tensor(a > 0 if v.type.dtype == E.bool else a.astype(np.float32))
            for a, v in zip(arrays, graph.inputs)]


def fused_graph(text: str):
    """``text`` parsed and fused by FuseGraph (with the fusers registered now), linted,
    and checked on :func:`graph_inputs` against the unfused graph: equal tensors, equal
    metas (shape, dtype, device), None where the unfused graph gives None. Returns it."""
    import ember.jit.autodiff.differentiable_graph  # noqa: F401 - registers the meta prims
    from ember.jit.ir.parser import parse_ir
    from ember.jit.passes.fuse_graph import fuse_graph
    g = parse_ir(text)
    fuse_graph(g)
    g.lint()
    args = graph_inputs(g)
    for got, want in zip(run_graph(g, args), run_graph(parse_ir(text), args)):
        if want is None or not isinstance(want, E.Tensor):
            assert (got is None) == (want is None)
            if want is not None:
                assert (got.shape, got.dtype, got.device) == (want.shape, want.dtype,
                                                              want.device)
        else:
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    return g


def assert_fuses_to(before: str, after: str, run: bool = True) -> None:
    """FuseGraph turns IR ``before`` into IR ``after`` (compared canonicalized); with
    ``run``, the fused graph computes what ``before`` does (:func:`fused_graph`)."""
    from ember.jit.ir.parser import parse_ir
    from ember.jit.passes import canonicalize
    from ember.jit.passes.fuse_graph import fuse_graph
    if run:
        g = fused_graph(before)
    else:
        g = parse_ir(before)
        assert fuse_graph(g) is None
        g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))


def backward_graphs(traced) -> list:
    """The optimized backward graphs of every grad-on plan of traced function ``traced``
    (its DifferentiableGraphs' ``df`` plans)."""
    return [bp["graph"] for p in traced.get_debug_state()["execution_plans"].values()
            for e in p["backward_executors"] for bp in e["execution_plans"].values()]


class ReferenceFuser(Fuser):
    """A test fuser for "cpu" that "compiles" a FusionGroup's subgraph into a closure
    interpreting it (results equal unfused), so FuseGraph's grouping can be checked on CPU
    without Triton. ``refuse``: node kinds it will not fuse; ``compiled``: the subgraphs
    it was given."""

    name, device_type = "reference", "cpu"

    def __init__(self, refuse=()):
        self.refuse, self.compiled = set(refuse), []

    def can_fuse_node(self, node):
        return node.kind not in self.refuse and super().can_fuse_node(node)

    def compile(self, subgraph):
        self.compiled.append(subgraph)
        return lambda *inputs: run_graph(subgraph, inputs)
