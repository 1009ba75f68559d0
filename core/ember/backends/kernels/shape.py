"""Shape and view kernels. A view kernel must return a view of its input (numpy/CuPy
basic views), because the op is declared ``-> Tensor(a)`` and ember marks it as one."""
from __future__ import annotations


def kernels(xp) -> dict:
    def view(a, size):
        try:
            return a.reshape(size, copy=False)
        except (ValueError, AttributeError) as e:
            raise RuntimeError(
                f"view(): shape {list(size)} is invalid for input of size {a.size} or not "
                f"compatible with the input's strides; use .reshape(...) instead ({e})"
            ) from None

    def reshape(a, size):
        return a.reshape(size)

    return {"view": view, "reshape": reshape}
