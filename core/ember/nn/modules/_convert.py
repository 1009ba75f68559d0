"""Dtype and device conversion for ``Module`` (``to``, ``float``, ``double``, ...).

Parameters stay the same objects: their memory is swapped through ``Parameter.data`` (the
way PyTorch's ``Module._apply`` uses ``set_data``), so an optimizer made before ``to()``
still updates the live weights; a parameter's ``.grad`` is converted along with it.
Buffers are replaced by the converted tensors. A dtype applies to floating tensors only,
so integer buffers (``num_batches_tracked``) keep theirs.
Reference: torch.nn.Module.to / _apply.
"""
from __future__ import annotations

from ... import types as _t
from ...autograd import no_grad
from ...tensor import Tensor

__all__ = ["ConvertMixin"]


class ConvertMixin:
    """The conversion half of ``Module``; see the module docstring."""

    def _apply(self, fn, floating_only: bool = False):
        """Replace each parameter's memory (keeping the object) and each buffer with
        ``fn(tensor)``; ``floating_only`` leaves integer tensors alone."""
        for m in self.children():
            m._apply(fn, floating_only)
        with no_grad():
            for p in self._parameters.values():
                if p is None or (floating_only and not p.is_floating_point()):
                    continue
                p.data = fn(p)
                if p.grad is not None:
                    p.grad = fn(p.grad)
            for k, b in self._buffers.items():
                if b is not None and not (floating_only and not b.is_floating_point()):
                    self._buffers[k] = fn(b)
        return self

    def to(self, *args, **kwargs):
        """Move and/or convert parameters and buffers in place: ``to(device)``,
        ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``; returns ``self``. A dtype
        applies to floating tensors only.

        Raises TypeError for a non-floating dtype, NoBackendError for an unknown device.
        """
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"Module.to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, _t.ScalarType):
                dtype = a
            elif isinstance(a, _t.Device) or (isinstance(a, str) and a not in _t._BY_NAME):
                device = a
            elif a is not None:
                dtype = _t.to_scalar_type(a)
        if dtype is not None:
            dtype = _t.to_scalar_type(dtype)
            if not dtype.is_floating_point:
                raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got "
                                f"desired dtype={dtype}; convert integer buffers one by one")

        def convert(t):
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None)
        return self._apply(convert)

    def float(self):
        """Convert floating parameters and buffers to float32 in place."""
        return self._apply(lambda t: t.to(_t.float32), floating_only=True)

    def double(self):
        """Convert floating parameters and buffers to float64 in place."""
        return self._apply(lambda t: t.to(_t.float64), floating_only=True)

    def half(self):
        """Convert floating parameters and buffers to float16 in place."""
        return self._apply(lambda t: t.to(_t.float16), floating_only=True)

    def bfloat16(self):
        """Convert floating parameters and buffers to bfloat16 in place.
        Reference: torch.nn.Module.bfloat16."""
        return self._apply(lambda t: t.to(_t.bfloat16), floating_only=True)

    def type(self, dst_type):
        """Convert every parameter and buffer (integer buffers too) to ``dst_type`` (a
        ScalarType or its name) in place; returns ``self``. Raises TypeError for an
        unknown dtype, RuntimeError for a non-floating ``dst_type`` while a parameter
        requires grad (convert the integer tensors one by one instead).
        Reference: torch.nn.Module.type."""
        dst = _t.to_scalar_type(dst_type)
        if not dst.is_floating_point and any(p.requires_grad for p in self.parameters()):
            raise RuntimeError(f"Module.type({dst}): parameters that require gradients must "
                               f"stay floating point; call requires_grad_(False) first")
        return self._apply(lambda t: t.to(dst))

    def cpu(self):
        """Move every parameter and buffer to the cpu."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move every parameter and buffer to a cuda device (needs ember-cuda)."""
        return self._apply(lambda t: t.cuda(device))
