"""TritonFuser: the ``ember.jit.runtime.fuser.Fuser`` that turns a FusionGroup into a Triton kernel.

``can_fuse_node`` tells FuseGraph which nodes may join a group (``lowering.can_lower_node``:
the pointwise ops ``ops.lower`` generates, chunk/split of an input, reductions over the
last dimension, dtypes Triton loads). ``compile(subgraph)`` lowers the group to a
:class:`~ember_triton_fuser.lowering.KernelPlan` and returns a
:class:`~ember_triton_fuser.kernel.FusedKernel`; a group it cannot lower raises
``FusionDeclined`` with the reason, and ember runs that group unfused.

On CUDA the kernels take CuPy arrays (``launch.as_pointer``) and run on CuPy's current
stream (``launch.ensure_driver``). With ``interpret=True`` the same source runs through
Triton's interpreter on host numpy arrays (``interpreter.as_pointer``): register such a
fuser for ``"cpu"`` to check generated kernels without a GPU::

    with ember.jit.runtime.fuser.using_fuser("cpu", TritonFuser("cpu", interpret=True)):
        traced = ember.jit.trace(fn, inputs)

Reference: PyTorch's ``torch/csrc/jit/fuser/interface.h`` and the fuser's
``compileKernel`` (``torch/csrc/jit/fuser/compiler.cpp``).
"""
from __future__ import annotations

import threading

import numpy as np

from ember.jit.runtime.fuser import Fuser
from ember.jit.ir.ir_types import TensorType

from .lowering import can_lower_node, lower_subgraph

__all__ = ["TritonFuser", "HostOnlyFuser"]

_EXACT = None


def _check_interpreter_on() -> None:
    """Raise RuntimeError unless Triton's standard library (``tl.max``, ``tl.sigmoid``)
    was built for the interpreter: it is decorated when ``triton.language`` is first
    imported, and generated row kernels call it."""
    import triton.language as tl
    if type(tl.max).__name__ != "InterpretedFunction":
        raise RuntimeError("TritonFuser(interpret=True): Triton's interpreter must be on "
                           "before triton is first imported; set TRITON_INTERPRET=1 in the "
                           "environment before importing ember_triton_fuser or triton")


def _exact_math_options() -> dict:
    """Launch options that keep eager's numbers: no a*b+c contraction into FMA
    (``enable_fp_fusion``), no flushing of float32 subnormals in libdevice
    (``enable_reflect_ftz``); only those this Triton's CUDA backend knows."""
    global _EXACT
    if _EXACT is None:
        from triton.backends.nvidia.compiler import CUDAOptions
        fields = CUDAOptions.__dataclass_fields__
        _EXACT = {k: False for k in ("enable_fp_fusion", "enable_reflect_ftz") if k in fields}
    return _EXACT


class TritonFuser(Fuser):
    """Compiles FusionGroups on ``device_type`` devices into Triton kernels.

    Args:
        device_type: the device type whose groups it compiles ("cuda"; "cpu" only with
            ``interpret``).
        interpret: run kernels through Triton's interpreter on host memory.
    Raises ValueError for a non-CUDA ``device_type`` without ``interpret``, and
    RuntimeError for ``interpret`` when Triton was imported without its interpreter.
    """

    name = "triton"

    def __init__(self, device_type: str = "cuda", interpret: bool = False):
        if device_type != "cuda" and not interpret:
            raise ValueError(f"TritonFuser: Triton kernels run on CUDA devices; for "
                             f"device_type={device_type!r} pass interpret=True (Triton's "
                             f"interpreter on host memory)")
        if interpret:
            _check_interpreter_on()
        self.device_type = device_type
        self.interpret = bool(interpret)
        self._capabilities: dict = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        mode = ", interpret=True" if self.interpret else ""
        return f"TritonFuser({self.device_type!r}{mode})"

    def can_fuse_node(self, node) -> bool:
        """Whether FuseGraph may put ``node`` into a group (``lowering.can_lower_node``)."""
        return can_lower_node(node) is None

    def compile(self, subgraph):
        """A :class:`FusedKernel` for ``subgraph``; raises ``FusionDeclined`` with the
        reason when the group cannot be lowered."""
        from .kernel import FusedKernel
        plan = lower_subgraph(subgraph)
        self.ensure_launcher()
        devices = {v.type.device for v in subgraph.inputs if isinstance(v.type, TensorType)}
        device = devices.pop() if len(devices) == 1 else None
        return FusedKernel(plan, subgraph, self, device)

    def ensure_launcher(self) -> None:
        """Make sure kernels can launch: on CUDA, install the CuPy-stream driver
        (``launch.ensure_driver``, which raises DriverUnavailable without CuPy)."""
        if not self.interpret:
            from . import launch
            launch.ensure_driver()

    # ---- what FusedKernel asks of its fuser --------------------------------------------
    def pointer(self, array, offset: int = 0):
        """``array`` (CuPy, or numpy when interpreting) as a Triton pointer argument,
        ``offset`` bytes past its element ``(0, ..., 0)``."""
        if self.interpret:
            from .interpreter import as_pointer
        else:
            from .launch import as_pointer
        return as_pointer(array, offset)

    def capability(self):
        """The compile-cache key part of the target: the current CUDA device's compute
        capability, or ``"interpreter"``."""
        if self.interpret:
            return "interpreter"
        import cupy
        index = cupy.cuda.runtime.getDevice()
        with self._lock:
            cap = self._capabilities.get(index)
            if cap is None:
                from .launch import device_capability
                cap = self._capabilities[index] = device_capability(index)
        return cap

    def launch(self, runner, args: list, constexprs: dict, num_warps: int) -> None:
        """Launch ``runner`` (``kernel[grid]``) on ``args``; under the interpreter the
        masked-off lanes' floating-point warnings are silenced (their results are never
        stored)."""
        if self.interpret:
            with np.errstate(all="ignore"):
                runner(*args, **constexprs)
        else:
            runner(*args, **constexprs, num_warps=num_warps, **_exact_math_options())


class HostOnlyFuser(TritonFuser):
    """A TritonFuser for ``"cpu"`` groups that builds the real (not interpreted) kernels
    for compute capability ``capability`` (default ``(9, 0)``, an H100) and never launches
    them: outputs are allocated and left uninitialized. For two uses without a GPU: the
    tests lower its kernels to Triton IR with Triton's own front end, and
    ``benchmarks/bench_fuser.py`` measures ember's host time per call with it. The plugin
    never registers it. Needs Triton's interpreter off (``TRITON_INTERPRET`` unset or 0).
    """

    def __init__(self, capability: tuple = (9, 0)):
        self.device_type, self.interpret = "cpu", False
        self._capabilities, self._lock = {}, threading.Lock()
        self._host_capability = tuple(capability)

    def ensure_launcher(self) -> None:
        """Nothing to install: nothing launches."""

    def pointer(self, array, offset: int = 0):
        """The array itself (never dereferenced)."""
        return array

    def capability(self) -> tuple:
        """The capability given at construction."""
        return self._host_capability

    def launch(self, runner, args: list, constexprs: dict, num_warps: int) -> None:
        """Does nothing: the kernel is built, not run."""
