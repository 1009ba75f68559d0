"""The kernel table the plugin manager gives each backend it registers: a dict whose
misses raise the typed missing-kernel error instead of a bare ``KeyError``.

Factories look their kernel up by name on the backend (``backend.kernels["full"]``), not
through a Type; a backend without it used to fail with ``KeyError: 'full'``. Now the
lookup raises NotImplementedError naming the op, the backend, the backends that have it
and the way out (``dispatch.missing_backend_kernel_error``). ``get`` and ``in`` behave as
on a dict, so optional kernels (``into:add``, ``_fused_adam_``) are still probed quietly.
"""
from __future__ import annotations


class KernelTable(dict):
    """op name -> kernel of one backend (``backend``); ``table[op]`` for a missing op
    raises NotImplementedError (PyTorch: "Could not run 'aten::empty' with arguments from
    the 'PrivateUse1' backend")."""

    __slots__ = ("backend",)

    def __init__(self, kernels, backend):
        super().__init__(kernels)
        self.backend = backend

    def __missing__(self, op: str):
        from ..dispatch import missing_backend_kernel_error  # dispatch sits above plugins
        raise missing_backend_kernel_error(op, self.backend)
