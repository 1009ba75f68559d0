"""ember-triton-fuser: one Triton kernel per ``prim::FusionGroup`` of ember's JIT.

Installed next to ember-cuda, it registers a fuser for CUDA devices through the
``ember_fusers`` hook; FuseGraph then groups pointwise chains (and last-dim reductions,
chunks of an input) on CUDA graphs, and each group becomes one generated kernel launched
on CuPy memory (torch is not needed). ``EMBER_FUSION_DEBUG=1`` prints each kernel's
source. The same source runs on host numpy arrays through Triton's interpreter
(``TritonFuser(device_type="cpu", interpret=True)``), which is how CI checks it. See
``docs/fuser.md``.
"""
from .fuser import HostOnlyFuser, TritonFuser

__all__ = ["TritonFuser", "HostOnlyFuser"]
