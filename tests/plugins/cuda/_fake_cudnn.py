"""A fake cuDNN Frontend (``import cudnn``, nvidia-cudnn-frontend 1.28) for device-free tests.

The module is here; the graph, its tensors, ``Handle`` and the exception are in
``_fake_pygraph.py``. It offers only what the real package offers for the calls ember
makes, with the real names, parameters, defaults, enum members, exception types and
return shapes, and it refuses what the real one refuses; ``test_fake_frontend_api.py``
compares it with the real package where that imports (it does without a GPU). Each
limit names its source:
``fe-1.28`` is the nvidia-cudnn-frontend 1.28.0 wheel's Python (``cudnn/__init__.py``,
``cudnn/_pygraph.py``, ``cudnn/graph_types.py``, ``cudnn/_handle.py``); ``fe-cpp`` is
the C++ behind the wheel's compiled binding, read in github:NVIDIA/cudnn-frontend at
3929da2 (1.23, the newest C++ source stored; the 1.28 binding's pybind11 docstrings show
the same signatures): ``python/pycudnn.cpp`` ``throw_if`` maps error codes to ValueError
(ATTRIBUTE_NOT_SET ...), cudnnGraphNotSupportedError (GRAPH_EXECUTION_PLAN_CREATION_FAILED
...) and RuntimeError (GRAPH_EXECUTION_FAILED ...); ``include/cudnn_frontend/plans.h`` and
``node/conv_*.h`` hold the plan and convolution checks.

Graphs execute for real on numpy (``_fake_cuda_runtime.compute``, on its ``FakeRuntime``
standing in for CuPy's devices, streams and pointers). Test knobs on the module:
``decline`` (graph -> reason, refused in check_support), ``workspace`` (bytes of the
heuristics' plan; plan ``i`` built by index needs 1000 + i), ``plan_count``,
``unbuildable`` and ``failing`` (plan indices); records: ``graphs``, ``executions``,
``handles``, ``set_streams``, and the API read: ``used`` (module names), ``used_graph``
(pygraph methods), ``used_tensor`` (tensor setters).
"""
from __future__ import annotations

import enum
import types

from ._fake_cuda_runtime import REFERENCE, FakeRuntime
from ._fake_pygraph import (CONV_ATTRS, CONV_OPS, GRAPH_API, FakeGraph, FakeTensor, Handle,
                            cudnnGraphNotSupportedError)

__all__ = ["CONV_ATTRS", "CONV_OPS", "GRAPH_API", "REFERENCE", "FakeGraph", "FakeRuntime",
           "FakeTensor", "Handle", "cudnnGraphNotSupportedError", "make_fake_frontend"]

# fe-1.28: the pybind enums' members and values (``cudnn._compiled_module``)
DATA_TYPE = dict(NOT_SET=0, FLOAT=1, DOUBLE=2, HALF=3, INT8=4, INT32=5, INT8x4=6, UINT8=7,
                 UINT8x4=8, INT8x32=9, BFLOAT16=10, INT64=11, BOOLEAN=12, FP8_E4M3=14,
                 FP8_E5M2=15, FAST_FLOAT_FOR_FP8=16, FP8_E8M0=17, FP8_E5M3=18, FP4_E2M1=19,
                 INT4=20)
HEUR_MODE = dict(A=0, B=1, FALLBACK=2, OPENSOURCE=3)
NUMERICAL_NOTE = dict(TENSOR_CORE=1, DOWN_CONVERT_INPUTS=2, REDUCED_PRECISION_REDUCTION=3,
                      FFT=4, NONDETERMINISTIC=5, WINOGRAD=6, WINOGRAD_TILE_4x4=7,
                      WINOGRAD_TILE_6x6=8, WINOGRAD_TILE_13x13=9, STRICT_NAN_PROP=10)
BUILD_PLAN_POLICY = dict(HEURISTICS_CHOICE=0, ALL=1)
PUBLIC = ("pygraph", "data_type", "heur_mode", "numerical_note", "build_plan_policy",
          "create_handle", "set_stream", "backend_version", "cudnnGraphNotSupportedError",
          "Handle")
"""The frontend names the fake offers (reads of them are recorded in ``fe.used``)."""


class FakeFrontend(types.ModuleType):
    """The fake ``cudnn`` module; records which of its ``PUBLIC`` names are read."""

    def __getattribute__(self, name):
        if name in PUBLIC:
            super().__getattribute__("used").add(name)
        return super().__getattribute__(name)


def make_fake_frontend(runtime=None):
    """A fake ``cudnn`` module on ``runtime`` (a ``FakeRuntime``, for handles/executions)."""
    fe = FakeFrontend("cudnn")
    fe.used, fe.used_graph, fe.used_tensor = set(), set(), set()
    fe.data_type = enum.Enum("data_type", DATA_TYPE)
    fe.heur_mode = enum.Enum("heur_mode", HEUR_MODE)
    fe.numerical_note = enum.Enum("numerical_note", NUMERICAL_NOTE)
    fe.build_plan_policy = enum.Enum("build_plan_policy", BUILD_PLAN_POLICY)
    fe.cudnnGraphNotSupportedError, fe.Handle = cudnnGraphNotSupportedError, Handle
    fe.graphs, fe.executions, fe.handles, fe.set_streams = [], [], [], []
    fe.decline = None              # graph -> reason to refuse it in check_support
    fe.workspace = 64              # bytes of the heuristics' plan
    fe.plan_count, fe.unbuildable, fe.failing = 3, set(), set()
    fe.last_index, fe.runtime = None, runtime
    fe.pygraph = type("pygraph", (FakeGraph,), {"fe": fe})

    def backend_version():
        return 90800

    def create_handle():
        """fe-1.28 ``create_handle``: a Handle on the current device, stream 0."""
        handle = Handle(len(fe.handles) + 1, fe.runtime.current_device if fe.runtime else None,
                        0)
        fe.handles.append(handle)
        return handle

    def set_stream(handle, stream):
        """fe-1.28 ``set_stream``: a Handle only (TypeError); skipped when unchanged."""
        if not isinstance(handle, Handle):
            raise TypeError(f"cudnn.set_stream expects a cudnn.Handle (from "
                            f"cudnn.create_handle()), got {type(handle).__name__}")
        if handle.stream == stream:
            return
        fe.set_streams.append((handle, stream))
        handle.stream = stream

    fe.backend_version, fe.create_handle, fe.set_stream = \
        backend_version, create_handle, set_stream
    return fe
