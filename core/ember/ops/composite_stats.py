"""Statistics and counting (``dispatch: composite``): cov, corrcoef, msort, isin,
histogram, histogramdd (mode is native: kernels/selection.py).

cov and corrcoef are differentiable (built from mm, sum, ...);
isin and the histograms count and have no gradient, as in PyTorch. Bin assignment is a
binary search on the bin edges themselves (``searchsorted``), so an element lands in the
bin its edges say it does, even where ``(x - lo) / width`` would round across an edge;
PyTorch gets the same by correcting its linear guess against the edges. Registered on
import by ``ops/composite.py``.
"""
from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple

from . import namespace as E
from ..errors import DtypeError, ShapeError
from .composite import composite

_HISTOGRAM = namedtuple("histogram", ["hist", "bin_edges"], module="ember.return_types")
_HISTOGRAMDD = namedtuple("histogramdd", ["hist", "bin_edges"], module="ember.return_types")


# ---- covariance ---------------------------------------------------------------------------------

def _weights(name: str, w, n: int, integral: bool):
    if w.ndim > 1:
        raise ShapeError(f"cov(): expected {name} to have one or fewer dimensions, got shape "
                         f"{list(w.shape)}")
    if w.numel() != n:
        raise ShapeError(f"cov(): expected {name} to have the same numel as there are "
                         f"observations in the input, got {w.numel()} != {n}")
    if integral and (w.is_floating_point() or w.dtype is E.bool_):
        raise DtypeError(f"cov(): expected {name} to have an integral dtype, got {w.dtype}; "
                         f"convert with .long()")
    if not integral and not w.is_floating_point():
        raise DtypeError(f"cov(): expected {name} to have a floating point dtype, got "
                         f"{w.dtype}; convert with .float()")
    if n and bool((w < 0).any()):
        raise ValueError(f"cov(): {name} cannot be negative, got min {w.min().item()}")


@composite("cov")
def cov(self, correction=1, fweights=None, aweights=None):
    if self.ndim > 2:
        raise ShapeError(f"cov(): expected input of shape (variables, observations) with two "
                         f"or fewer dims, got shape {list(self.shape)}")
    if self.dtype is E.bool_:
        raise DtypeError("cov(): bool input is not supported; convert with .float()")
    x = self.reshape(1, -1) if self.ndim < 2 else self
    n = x.shape[1]
    w = None
    if fweights is not None:
        _weights("fweights", fweights, n, True)
        w = fweights
    if aweights is not None:
        _weights("aweights", aweights, n, False)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = n
        avg = x.sum(1) / n
        norm = n - correction
    else:
        w_sum = w.sum()
        if not bool(w_sum != 0):
            raise ValueError("cov(): weights sum to zero, can't be normalized; give some "
                             "observation a positive weight")
        avg = (x * w).sum(1) / w_sum
        if aweights is not None and correction != 0:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
        else:
            norm = w_sum - correction
    if bool(norm <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=3)
        norm = norm * 0
    xc = x - avg.unsqueeze(1)
    c = E.mm(xc, (xc if w is None else xc * w).t())
    return E.true_divide(c, norm).squeeze()


@composite("corrcoef")
def corrcoef(self):
    c = cov(self)
    if c.ndim == 0:  # one variable: 1, or NaN for a constant one
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.reshape(-1, 1) / std.reshape(1, -1)
    return c.clip(-1, 1)  # rounding can push |r| a little past 1


# ---- order statistics ---------------------------------------------------------------------------

@composite("msort")
def msort(self):
    return self.sort(0).values


# ---- membership ---------------------------------------------------------------------------------

def _isin(elements, test, invert):
    dtype = E.result_type(elements, test)
    if dtype is E.bool_:
        raise DtypeError("isin(): bool tensors are not supported (as PyTorch); convert with "
                         ".long()")
    elements, test = elements.to(dtype), test.to(dtype)
    if test.numel() == 0:
        found = E.zeros(elements.shape, dtype=E.bool_, device=elements.device)
    else:
        t = test.reshape(-1).sort().values
        at = E.searchsorted(t, elements).clamp(max=t.shape[0] - 1)
        found = t[at] == elements
    return ~found if invert else found


@composite("isin.Tensor_Tensor")
def isin_tensor_tensor(elements, test_elements, assume_unique=False, invert=False):
    # assume_unique only lets PyTorch skip a dedup step; the sorted search needs none
    return _isin(elements, test_elements, invert)


@composite("isin.Tensor_Scalar")
def isin_tensor_scalar(elements, test_element, assume_unique=False, invert=False):
    if elements.dtype is E.bool_:
        raise DtypeError("isin(): bool tensors are not supported (as PyTorch); convert with "
                         ".long()")
    found = E.eq(elements, test_element)
    return ~found if invert else found


@composite("isin.Scalar_Tensor")
def isin_scalar_tensor(element, test_elements, assume_unique=False, invert=False):
    return _isin(E.tensor(element, device=test_elements.device), test_elements, invert)


# ---- histograms ---------------------------------------------------------------------------------

def _range_pairs(op: str, range, d: int):
    if range is None:
        return [None] * d
    r = [float(v) for v in range]
    if len(r) != 2 * d:
        raise ValueError(f"{op}(): expected range to have {2 * d} values (min, max for each "
                         f"of {d} dims), got {len(r)}")
    # NOTE: ``range`` is PyTorch's parameter name here, so the builtin goes by builtins.range
    return [(r[2 * i], r[2 * i + 1]) for i in builtins.range(d)]


def _edges(op: str, col, nbins, pair, i: int):
    """Bin edges for one dim of the points: ``nbins`` + 1 of them, equally spaced."""
    if isinstance(nbins, bool) or not isinstance(nbins, int):
        raise TypeError(f"{op}(): expected bins to be ints or 1-D tensors, got "
                        f"{type(nbins).__name__}")
    if nbins <= 0:
        raise ValueError(f"{op}(): bins must be > 0, but got {nbins} for dimension {i}")
    if pair is not None:
        lo, hi = pair
    elif col.numel() == 0:
        lo, hi = 0.0, 1.0
    else:
        lo, hi = col.min().item(), col.max().item()
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{op}(): dimension {i}'s range [{lo}, {hi}] is not finite; pass a "
                         f"finite range or remove the NaN/inf values")
    if lo > hi:
        raise ValueError(f"{op}(): min should not exceed max, but got min {lo} max {hi} for "
                         f"dimension {i}")
    if lo == hi:  # a degenerate range widens to one unit, as PyTorch
        lo, hi = lo - 0.5, hi + 0.5
    return E.linspace(lo, hi, nbins + 1, dtype=col.dtype, device=col.device)


def _histogramdd(op: str, self, bins, range, weight, density):
    """(hist, [edges per dim]) of the points self (*, D)."""
    if not self.is_floating_point():
        raise NotImplementedError(f"{op}(): not implemented for {self.dtype} input (as "
                                  f"PyTorch); convert with .float()")
    d = self.shape[-1]
    pts = self.detach().reshape(-1, d)
    if weight is not None:
        if tuple(weight.shape) != tuple(self.shape[:-1]):
            raise ShapeError(f"{op}(): expected weight of shape {list(self.shape[:-1])} (the "
                             f"input's without its innermost dim), got {list(weight.shape)}")
        if weight.dtype is not self.dtype:
            raise DtypeError(f"{op}(): expected weight of the input's dtype {self.dtype}, got "
                             f"{weight.dtype}; convert with .to({self.dtype})")
    if isinstance(bins, E.Tensor) and bins.ndim == 1 and d == 1:
        bins = [bins]
    elif isinstance(bins, int) and not isinstance(bins, bool):
        bins = [bins] * d
    bins = list(bins)
    if len(bins) != d:
        raise ValueError(f"{op}(): expected {d} bin specifications (one per dim of the "
                         f"points' innermost size), got {len(bins)}")
    pairs = _range_pairs(op, range, d)
    edges, index, valid = [], None, None
    for i, (b, pair) in enumerate(zip(bins, pairs)):
        col = pts[:, i]
        if isinstance(b, E.Tensor):
            if b.ndim != 1 or b.numel() < 1:
                raise ValueError(f"{op}(): expected a 1-D bins tensor with at least one edge "
                                 f"for dimension {i}, got shape {list(b.shape)}")
            if b.dtype is not self.dtype:
                raise DtypeError(f"{op}(): expected bins of the input's dtype {self.dtype}, "
                                 f"got {b.dtype} for dimension {i}")
            e = b.detach()
        else:
            e = _edges(op, col, b, pair, i)
        nb = e.shape[0] - 1
        # e[j] <= x < e[j + 1]; the last bin also takes x == e[-1]; NaN is in no bin
        j = (E.searchsorted(e, col, right=True) - 1).clamp(max=max(nb - 1, 0))
        ok = (col >= e[0]) & (col <= e[-1]) & (j >= 0)
        edges.append(e)
        index = j if index is None else index * nb + j
        valid = ok if valid is None else valid & ok
    sizes = [e.shape[0] - 1 for e in edges]
    total = math.prod(sizes)
    w = None if weight is None else weight.detach().reshape(-1)[valid]
    counts = E.bincount(index[valid], w, total) if total else E.zeros(0, device=self.device)
    hist = counts.to(self.dtype).reshape(sizes)
    if density:
        hist = hist / hist.sum()
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = -1
            hist = hist / E.diff(e).reshape(shape)
    return hist, edges


@composite("histogram.bins_tensor")
def histogram_bins_tensor(self, bins, weight=None, density=False):
    if bins.ndim != 1:
        raise ValueError(f"histogram(): expected a 1-D bins tensor, got shape "
                         f"{list(bins.shape)}")
    x = self.reshape(-1, 1)
    w = None if weight is None else _flat_weight(self, weight)
    hist, edges = _histogramdd("histogram", x, [bins], None, w, density)
    return _HISTOGRAM(hist, edges[0])


@composite("histogram.bin_ct")
def histogram_bin_ct(self, bins=100, range=None, weight=None, density=False):
    x = self.reshape(-1, 1)
    w = None if weight is None else _flat_weight(self, weight)
    hist, edges = _histogramdd("histogram", x, [bins], range, w, density)
    return _HISTOGRAM(hist, edges[0])


def _flat_weight(self, weight):
    if tuple(weight.shape) != tuple(self.shape):
        raise ShapeError(f"histogram(): expected weight of the input's shape "
                         f"{list(self.shape)}, got {list(weight.shape)}")
    return weight.reshape(-1)


@composite("histogramdd")
def histogramdd(self, bins, range=None, weight=None, density=False):
    if self.ndim < 2:
        raise ShapeError(f"histogramdd(): expected input of shape (*, D) with at least 2 "
                         f"dims, got shape {list(self.shape)}")
    hist, edges = _histogramdd("histogramdd", self, bins, range, weight, density)
    return _HISTOGRAMDD(hist, tuple(edges))
