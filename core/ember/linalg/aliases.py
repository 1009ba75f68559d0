"""``torch.linalg`` names for ops that exist elsewhere, with linalg's defaults."""
from __future__ import annotations

from ..ops import namespace as E
from ..ops.composite import composite


@composite("linalg_diagonal")
def _diagonal(A, offset=0, dim1=-2, dim2=-1):
    return E.diagonal(A, offset, dim1, dim2)
