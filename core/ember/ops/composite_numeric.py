"""Numerical calculus and conversions (``dispatch: composite``): gradient (finite
differences), trapz, vander, deg2rad, rad2deg, sgn.

All are ember ops (narrow, arithmetic, cumprod, cat), so autograd and tracing see
through them. ``gradient`` follows numpy.gradient / torch.gradient: second-order central
differences inside (Fornberg 1988; the non-uniform weights of numpy.gradient for
coordinate spacings) and first- or second-order one-sided differences at the edges.
Registered on import by ``ops/composite.py``.
"""
from __future__ import annotations

import math

from . import namespace as E
from ..dispatch import wrap_dim
from ..errors import ShapeError
from .composite import composite


def _float(x):
    return x if x.is_floating_point() else x.to(E.get_default_dtype())


# ---- gradient -----------------------------------------------------------------------------------

def _dims(self, dim) -> list:
    if dim is None:
        return list(range(self.ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    out = [wrap_dim(d, self.ndim, "gradient") for d in dims]
    if len(set(out)) != len(out):
        raise ValueError(f"gradient(): dim {list(dims)} appears multiple times in the list "
                         f"of dims")
    return out


def _spacings(self, spacing, dims, given_dim: bool) -> list:
    """One spacing per dim: a number h, or a 1-D tensor of coordinates."""
    if isinstance(spacing, E.Tensor) and spacing.ndim == 0:
        spacing = spacing.item()
    if not isinstance(spacing, (list, tuple)):
        return [spacing] * len(dims)
    if len(spacing) != len(dims):
        want = ("the dim argument's length" if given_dim
                else f"'self.dim() = {self.ndim}', since dim argument was not given")
        raise ValueError(f"gradient(): expected spacing to be a scalar or a list of length "
                         f"equal to {want}, got a list of length {len(spacing)}")
    out = []
    for s, d in zip(spacing, dims):
        if isinstance(s, E.Tensor) and s.ndim == 0:
            s = s.item()
        elif isinstance(s, E.Tensor) and (s.ndim != 1 or s.shape[0] != self.shape[d]):
            raise ShapeError(f"gradient(): expected each coordinate tensor to be 1-D with one "
                             f"value per sample, got shape {list(s.shape)} for dim {d} of size "
                             f"{self.shape[d]}")
        out.append(s)
    return out


def _along(t, dim: int, ndim: int):
    """A 1-D tensor shaped to broadcast along ``dim`` of an ndim-D tensor."""
    shape = [1] * ndim
    shape[dim] = -1
    return t.reshape(shape)


def _gradient_1(f, dim: int, h, edge_order: int):
    n = f.shape[dim]

    def s(start, length=1):  # f[start : start + length] along dim, start < 0 from the end
        return f.narrow(dim, start % n, length)

    if isinstance(h, E.Tensor):  # coordinates: numpy.gradient's non-uniform weights
        dx = _along(E.diff(_float(h)), dim, f.ndim)
        d1, d2 = dx.narrow(dim, 0, n - 2), dx.narrow(dim, 1, n - 2)
        center = (-d2 / (d1 * (d1 + d2)) * s(0, n - 2) + (d2 - d1) / (d1 * d2) * s(1, n - 2)
                  + d1 / (d2 * (d1 + d2)) * s(2, n - 2))
        if edge_order == 1:
            first = (s(1) - s(0)) / dx.narrow(dim, 0, 1)
            last = (s(-1) - s(-2)) / dx.narrow(dim, n - 2, 1)
        else:
            a, b = dx.narrow(dim, 0, 1), dx.narrow(dim, 1, 1)
            first = (-(2 * a + b) / (a * (a + b)) * s(0) + (a + b) / (a * b) * s(1)
                     - a / (b * (a + b)) * s(2))
            a, b = dx.narrow(dim, n - 3, 1), dx.narrow(dim, n - 2, 1)
            last = (b / (a * (a + b)) * s(-3) - (a + b) / (a * b) * s(-2)
                    + (2 * b + a) / (b * (a + b)) * s(-1))
        return E.cat([first, center, last], dim)
    center = (s(2, n - 2) - s(0, n - 2)) / (2 * h)
    if edge_order == 1:
        first, last = (s(1) - s(0)) / h, (s(-1) - s(-2)) / h
    else:
        first = (-1.5 * s(0) + 2 * s(1) - 0.5 * s(2)) / h
        last = (0.5 * s(-3) - 2 * s(-2) + 1.5 * s(-1)) / h
    return E.cat([first, center, last], dim)


@composite("gradient")
def gradient(self, spacing=1, dim=None, edge_order=1):
    if edge_order not in (1, 2):
        raise ValueError(f"gradient(): only supports edge_order=1 and edge_order=2, got "
                         f"{edge_order}")
    dims = _dims(self, dim)
    hs = _spacings(self, spacing, dims, dim is not None)
    for d in dims:
        if self.shape[d] < edge_order + 1:
            raise ShapeError(f"gradient(): expected each dimension size to be at least "
                             f"edge_order + 1 = {edge_order + 1}, got size {self.shape[d]} in "
                             f"dim {d} (shape {list(self.shape)})")
    f = _float(self)
    return tuple(_gradient_1(f, d, h, edge_order) for d, h in zip(dims, hs))


# ---- trapz (the older name of trapezoid) ------------------------------------------------------

@composite("trapz.x")
def trapz_x(y, x, dim=-1):
    return E.trapezoid(y, x, dim=dim)


@composite("trapz.dx")
def trapz_dx(y, dx=1, dim=-1):
    return E.trapezoid(y, dx=dx, dim=dim)


# ---- vander ------------------------------------------------------------------------------------

@composite("vander")
def vander(x, N=None, increasing=False):
    if x.ndim != 1:
        raise ShapeError(f"vander(): x must be a one-dimensional tensor, got shape "
                         f"{list(x.shape)}")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise ValueError(f"vander(): N must be non-negative, got {n}")
    if not x.is_floating_point():
        x = x.to(E.int64)  # integral and bool inputs give int64, as PyTorch
    if n == 0:
        return E.zeros((x.shape[0], 0), dtype=x.dtype, device=x.device)
    ones = E.ones((x.shape[0], 1), dtype=x.dtype, device=x.device)
    # NOTE: powers by running product (PyTorch's way): its gradient is finite at x = 0,
    # where pow(x, k)'s backward would meet 0 * inf for k = 0
    cols = E.cat([ones, x.unsqueeze(1).expand(x.shape[0], n - 1)], 1).cumprod(1)
    return cols if increasing else cols.flip(1)


# ---- angles and signs -------------------------------------------------------------------------

@composite("deg2rad")
def deg2rad(self):
    return E.mul(self, math.pi / 180)


@composite("rad2deg")
def rad2deg(self):
    return E.mul(self, 180 / math.pi)


@composite("sgn")
def sgn(self):
    # NOTE: ember has no complex dtypes; for real inputs sgn is sign
    return E.sign(self)
