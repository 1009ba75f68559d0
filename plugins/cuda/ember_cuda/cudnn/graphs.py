"""cuDNN operation graphs for the three convolution passes, built once and cached.

Every pass of every convolution is one of cuDNN's three operations on a *regular*
convolution with image X (N, C, *S), filter W (K, C/G, *R) and output Y (N, K, *O)
(groups G inferred by cuDNN from C and W's second dim):

    fprop   Y  = conv(X, W)          graph.conv_fprop(image=X, weight=W)
    dgrad   DX = dconv/dX(DY, W)     graph.conv_dgrad(loss=DY, filter=W)   DX dims set
    wgrad   DW = dconv/dW(X, DY)     graph.conv_wgrad(image=X, loss=DY)    DW dims set

(dgrad's and wgrad's output dims are ambiguous for strided convolutions, so they are
always set explicitly.) A graph is built by the frontend's fixed sequence::

    pygraph(io_data_type, intermediate_data_type, compute_data_type, handle)
    validate -> build_operation_graph -> create_execution_plans([A, FALLBACK])
    -> deselect_numeric_notes(...) -> check_support -> build plan(s)

(compute FLOAT, DOUBLE for float64). Only calls that the frontend releases 1.10 to 1.28
share are used: symmetric padding as ``pre_padding``/``post_padding``, operands and the
workspace as bare device pointers (ints) in the variant pack, ``execute`` /
``execute_plan_at_index`` with ``handle=``.

Plan choice (PyTorch's ``Conv_v8.cpp`` rules, ``filterEngineConfigs``):

* engines with ``numerical_note.DOWN_CONVERT_INPUTS`` are always excluded (they compute
  below the requested precision); ``NONDETERMINISTIC`` ones when ``deterministic`` (no
  atomics: two runs give the same bits); ``TENSOR_CORE`` ones for float32 unless
  ``ember.backends.cudnn.allow_tf32`` (True by default, as in PyTorch), since on
  float32 data Tensor Cores mean TF32's 10-bit mantissa.
* heuristics: modes ``[A, FALLBACK]``: A ranks every engine configuration cuDNN deems
  applicable, FALLBACK adds the always-available ones. Without ``benchmark`` the first
  that builds runs (``build_plans(HEURISTICS_CHOICE)``). With ``benchmark`` every
  candidate that builds (``build_plan_at_index``) is timed with CUDA events on the first
  execution, on the real operands, and the fastest is kept (PyTorch's
  ``cudnn.benchmark``; mode B would only re-rank the same list, and timing makes the
  ranking moot).

A graph whose build raises one of the frontend's "cannot" errors becomes a ``Declined``
with the message; the caller falls back to the native algorithm and remembers it.

The cache key (``GraphKey``) holds everything the graph depends on: device, pass, dtype,
the three tensors' dims and strides (so layout and 1-D lifting), padding, stride,
dilation, and the benchmark / deterministic / allow_tf32 flags. ``GraphCache`` is a
bounded LRU of built graphs and declines.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import NamedTuple

from .frontend import data_types, declines

GRAPH_CACHE_SIZE = 512
"""Built graphs kept per algorithm; each holds host-side plan descriptors (a few KB)."""
BENCHMARK_REPEAT = 3
"""Timed runs per candidate plan in benchmark mode (after one warm-up run)."""


class GraphKey(NamedTuple):
    """Everything a built graph depends on. ``x``, ``w``, ``y`` are (dims, strides) of
    the regular convolution's image, filter and output, whichever of them the pass reads
    or writes."""

    device: int
    op: str                 # "fprop", "dgrad" or "wgrad"
    dtype: str              # ember dtype name: "float16", "bfloat16", "float32", ...
    x: tuple
    w: tuple
    y: tuple
    padding: tuple
    stride: tuple
    dilation: tuple
    benchmark: bool
    deterministic: bool
    allow_tf32: bool


class Declined(Exception):
    """cuDNN cannot run a graph; ``str()`` says which pass and why."""


OUTPUT_ROLE = {"fprop": "y", "dgrad": "x", "wgrad": "w"}
"""The tensor each pass writes; it reads the other two."""


def excluded_notes(fe, key: GraphKey) -> list:
    """The numerical notes whose engines this key must not use (see the module doc)."""
    notes = [fe.numerical_note.DOWN_CONVERT_INPUTS]
    if key.deterministic:
        notes.append(fe.numerical_note.NONDETERMINISTIC)
    if key.dtype == "float32" and not key.allow_tf32:
        notes.append(fe.numerical_note.TENSOR_CORE)
    return notes


def heuristics(fe, key: GraphKey) -> list:
    """The heuristic modes queried for ``key`` (the same with or without benchmark)."""
    return [fe.heur_mode.A, fe.heur_mode.FALLBACK]


def _operation(fe, key: GraphKey, handle):
    """A ``pygraph`` holding the pass's operation; returns (graph, {role: tensor})."""
    io, intermediate, compute = data_types(fe, key.dtype)
    graph = fe.pygraph(io_data_type=io, intermediate_data_type=intermediate,
                       compute_data_type=compute, handle=handle)
    conv = dict(pre_padding=list(key.padding), post_padding=list(key.padding),
                stride=list(key.stride), dilation=list(key.dilation),
                compute_data_type=compute, name=key.op)

    def tensor(name, spec):
        dims, strides = spec
        return graph.tensor(name=name, dim=list(dims), stride=list(strides), data_type=io)

    t = {}
    if key.op == "fprop":
        t["x"], t["w"] = tensor("X", key.x), tensor("W", key.w)
        out = graph.conv_fprop(image=t["x"], weight=t["w"], **conv)
    elif key.op == "dgrad":
        t["y"], t["w"] = tensor("DY", key.y), tensor("W", key.w)
        out = graph.conv_dgrad(loss=t["y"], filter=t["w"], **conv)
    else:
        t["x"], t["y"] = tensor("X", key.x), tensor("DY", key.y)
        out = graph.conv_wgrad(image=t["x"], loss=t["y"], **conv)
    role = OUTPUT_ROLE[key.op]
    dims, strides = getattr(key, role)
    out.set_output(True).set_data_type(io).set_dim(list(dims)).set_stride(list(strides))
    t[role] = out
    return graph, t


class ConvGraph:
    """One built graph: ``tensors`` maps roles ("x", "w", "y") to frontend tensors.

    ``plan`` is None to run the heuristics' choice (``execute``), else an index into the
    plan list (``execute_plan_at_index``); ``candidates`` are the indices still to be
    timed (benchmark mode, first execution); ``timings`` maps index -> ms once timed.
    """

    def __init__(self, fe, key: GraphKey, graph, tensors: dict, candidates=None):
        self.fe, self.key, self.graph, self.tensors = fe, key, graph, tensors
        self.plan = None
        self.candidates = candidates
        self.timings: dict = {}
        self.workspace_size = 0 if candidates else int(graph.get_workspace_size())

    def execute(self, pointers: dict, handle, runtime) -> None:
        """Run on operands given as {role: device pointer}, on the handle's stream."""
        pack = {self.tensors[role]: ptr for role, ptr in pointers.items()}
        if self.candidates:
            self._autotune(pack, handle, runtime)
        ws = runtime.workspace(self.workspace_size)
        ws_ptr = runtime.pointer(ws) if ws is not None else 0
        if self.plan is None:
            self.graph.execute(pack, ws_ptr, handle=handle)
        else:
            self.graph.execute_plan_at_index(pack, ws_ptr, self.plan, handle=handle)

    def _autotune(self, pack: dict, handle, runtime) -> None:
        """Time each candidate plan on the real operands; keep the fastest. A plan whose
        workspace does not fit in memory, or that fails to run, is skipped."""
        best = None
        for index in self.candidates:
            try:
                size = int(self.graph.get_workspace_size_plan_at_index(index))
                ws = runtime.workspace(size)
            except (runtime.out_of_memory, *declines(self.fe)):
                continue
            ws_ptr = runtime.pointer(ws) if ws is not None else 0

            def run(index=index, ws_ptr=ws_ptr):
                self.graph.execute_plan_at_index(pack, ws_ptr, index, handle=handle)
            try:
                ms = runtime.time_ms(run, BENCHMARK_REPEAT)
            except declines(self.fe):
                continue
            self.timings[index] = ms
            if best is None or ms < best[0]:
                best = (ms, index, size)
        if best is None:
            raise Declined(f"cuDNN declined the {self.key.op} graph: none of its candidate "
                           f"plans {self.candidates} ran in benchmark mode")
        _, self.plan, self.workspace_size = best
        self.candidates = None


def build(fe, key: GraphKey, handle) -> ConvGraph:
    """Build the graph of ``key`` with ``handle`` (its device current); raises Declined
    with cuDNN's reason when the frontend cannot."""
    try:
        graph, tensors = _operation(fe, key, handle)
        graph.validate()
        graph.build_operation_graph()
        graph.create_execution_plans(heuristics(fe, key))
        graph.deselect_numeric_notes(excluded_notes(fe, key))
        graph.check_support()
        if not key.benchmark:
            graph.build_plans(fe.build_plan_policy.HEURISTICS_CHOICE)
            return ConvGraph(fe, key, graph, tensors)
        return ConvGraph(fe, key, graph, tensors, _built_candidates(fe, graph))
    except declines(fe) as e:
        raise Declined(f"cuDNN declined the {key.op} graph: {_first_line(e)}") from e


def _built_candidates(fe, graph) -> list:
    """Indices of every plan in the list that builds (deselected ones fail to)."""
    built = []
    for index in range(int(graph.get_execution_plan_count())):
        try:
            graph.build_plan_at_index(index)
        except declines(fe):
            continue
        built.append(index)
    if not built:
        raise fe.cudnnGraphNotSupportedError("no execution plan built")
    return built


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    line = text[0] if text else type(error).__name__
    return line if len(line) <= 300 else line[:297] + "..."


class GraphCache:
    """A bounded LRU of ``GraphKey -> ConvGraph | Declined`` with hit/miss counts."""

    def __init__(self, capacity: int = GRAPH_CACHE_SIZE):
        self.capacity = capacity
        self.hits = self.misses = 0
        self._items: OrderedDict = OrderedDict()

    def get(self, key):
        item = self._items.get(key)
        if item is None:
            self.misses += 1
            return None
        self.hits += 1
        self._items.move_to_end(key)
        return item

    def put(self, key, item) -> None:
        self._items[key] = item
        self._items.move_to_end(key)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key) -> bool:
        return key in self._items

    def clear(self) -> None:
        self._items.clear()
        self.hits = self.misses = 0
