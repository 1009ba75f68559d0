"""``ember.linalg``: PyTorch's ``torch.linalg`` under its short names.

Each name is the op declared as ``linalg_<name>`` in ``ops/native_functions.yaml`` (the
two ``torch.linalg`` sections). Native ops have kernels in
``backends/kernels/factorizations/`` and derivatives in ``autograd/formulas/_linalg.py``
and ``_linalg_solvers.py``: ``inv``, ``solve``, ``det``, ``slogdet``, ``cholesky(_ex)``,
``qr``, ``eigh``, ``svd``, ``lu_factor_ex`` (and ``ember.lu_unpack``),
``solve_triangular``, ``lstsq`` and ``matrix_exp``. The rest are composites over ember
ops, so autograd and tracing see through them, written here by concept:

* ``norms``: vector_norm, matrix_norm, norm, cond;
* ``spectral``: svdvals, eigvalsh, pinv, matrix_rank;
* ``factorizations``: lu_factor, lu, householder_product;
* ``solvers``: lu_solve, solve_ex, inv_ex, tensorinv, tensorsolve;
* ``products``: matrix_power, multi_dot, cross, vecdot, vander;
* ``aliases``: diagonal (and matmul, which is ember.matmul);
* ``legacy``: torch's top-level spellings (``ember.det``, ``ember.svd`` with V,
  ``ember.cholesky_solve``, ``ember.triangular_solve``, ``ember.lu``, ...).

Matrices are batched over leading dims ``(*, m, n)``, float32/float64. ``LinAlgError`` (a
RuntimeError) is what a singular or non-positive-definite input raises.

    >>> A = ember.tensor([[4.0, 1.0], [1.0, 3.0]])
    >>> ember.linalg.solve(A, ember.tensor([1.0, 2.0]))    # A x = b
    >>> ember.linalg.matrix_norm(A, ord=2)                  # the largest singular value
    >>> P, L, U = ember.linalg.lu(A)                        # A = P L U
"""
from __future__ import annotations

from ..ops import namespace as E
from ..backends.kernels.factorizations import LinAlgError
from . import aliases, factorizations, legacy, norms, products, solvers, spectral  # noqa: F401

__all__ = ["LinAlgError", "inv", "inv_ex", "solve", "solve_ex", "solve_triangular", "lstsq",
           "det", "slogdet", "cholesky", "cholesky_ex", "qr", "eigh", "eigvalsh", "svd",
           "svdvals", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "householder_product",
           "vector_norm", "matrix_norm", "norm", "cond", "pinv", "matrix_rank",
           "matrix_power", "matrix_exp", "multi_dot", "cross", "vecdot", "vander",
           "tensorinv", "tensorsolve", "diagonal", "matmul"]

# ==== the namespace =============================================================================
inv = E.linalg_inv
inv_ex = E.linalg_inv_ex
solve = E.linalg_solve
solve_ex = E.linalg_solve_ex
solve_triangular = E.linalg_solve_triangular
lstsq = E.linalg_lstsq
det = E.linalg_det
slogdet = E.linalg_slogdet
cholesky = E.linalg_cholesky
cholesky_ex = E.linalg_cholesky_ex
qr = E.linalg_qr
eigh = E.linalg_eigh
eigvalsh = E.linalg_eigvalsh
svd = E.linalg_svd
svdvals = E.linalg_svdvals
lu = E.linalg_lu
lu_factor = E.linalg_lu_factor
lu_factor_ex = E.linalg_lu_factor_ex
lu_solve = E.linalg_lu_solve
householder_product = E.linalg_householder_product
vector_norm = E.linalg_vector_norm
matrix_norm = E.linalg_matrix_norm
norm = E.linalg_norm
cond = E.linalg_cond
pinv = E.linalg_pinv
matrix_rank = E.linalg_matrix_rank
matrix_power = E.linalg_matrix_power
matrix_exp = E.linalg_matrix_exp
multi_dot = E.linalg_multi_dot
cross = E.linalg_cross
vecdot = E.linalg_vecdot
vander = E.linalg_vander
tensorinv = E.linalg_tensorinv
tensorsolve = E.linalg_tensorsolve
diagonal = E.linalg_diagonal
matmul = E.matmul
