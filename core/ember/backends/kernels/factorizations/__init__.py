"""Dense linear algebra of ``torch.linalg`` over batches of matrices ``(*, m, n)``.

One module per concept, each with ``kernels(xp)``: ``dense`` (inv, solve, det, slogdet,
cholesky(_ex), qr, eigh, svd: straight through ``xp.linalg``, numpy's LAPACK or CuPy's
cuSOLVER), ``lu`` (LU with partial pivoting, lu_unpack, triangular solves: written here,
as neither library exposes getrf or trsm), ``lstsq`` (through the SVD) and ``matrix_exp``
(Pade scaling and squaring); ``checks`` holds the argument checks and the failure
diagnosis shared by all of them.

Inputs must be float32 or float64 (integers raise DtypeError as in PyTorch; float16 and
bfloat16 are listed in UNSUPPORTED, as PyTorch has no half-precision CPU solvers). Results
keep the input dtype. Failures name the batch element and the pivot the way PyTorch's
LinAlgError does; numpy raises for them, CuPy returns non-finite values, so both paths end
in the same host-side diagnosis (run only on failure).
"""
from __future__ import annotations

from ....types import bfloat16, float16, float32, float64
from . import dense, lstsq, lu, matrix_exp
from .checks import (LinAlgError, check_float, check_matrix, is_vector_rhs,  # noqa: F401
                     raise_lu_info, raise_singular)

_MODULES = (dense, lu, lstsq, matrix_exp)


def kernels(xp) -> dict:
    table: dict = {}
    for mod in _MODULES:
        table.update(mod.kernels(xp))
    for op in UNSUPPORTED:  # what check_float lets through (missing-kernel messages read it)
        if op in table:
            table[op].dtypes = _FLOATS
    return table


_FLOATS = frozenset({float32, float64})


UNSUPPORTED = {op: frozenset({float16, bfloat16}) for op in (
    "linalg_inv", "linalg_solve", "linalg_det", "linalg_slogdet", "linalg_cholesky",
    "linalg_cholesky_ex", "linalg_qr", "linalg_eigh", "linalg_svd")}
for _mod in (lu, lstsq, matrix_exp):
    UNSUPPORTED.update(_mod.UNSUPPORTED)
