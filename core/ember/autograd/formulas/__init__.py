"""Helpers for the backward formulas in ``derivatives.yaml`` (PyTorch's FunctionsManual).

Every helper is written with ember ops, so what it computes is itself differentiable:
that is what makes double backward work. Shapes in the docstrings: ``grad`` has the
forward output's shape; each helper returns a gradient of the forward input's shape
(or one the engine can sum down to it).

One module per concept, every helper re-exported here (``formulas.sum_to``):
``_broadcasting`` (``sum_to``, ``is_expandable_to``, ``maybe_multiply``, the reduced-dim
helpers), ``_reduction`` (reductions, scans, softmax), ``_pointwise``, ``_shape`` (shape
and view ops), ``_indexing``, ``_linalg`` (``matmul``, ``einsum``, torch.linalg's
solve, cholesky, qr, eigh, svd), ``_linalg_solvers`` (LU, triangular solves, lstsq,
matrix_exp), ``_logscan`` (logcumsumexp), ``_strided`` (unfold, as_strided).
"""
from __future__ import annotations

# NOTE: codegen.namespace() hands every public global of this package to the generated
# backward code, so the submodules are private (a public ``shape`` would be a name any
# formula could read) and ``math`` and ``E`` stay here, as when this was one module.
import math

from ...ops import namespace as E

from ._broadcasting import (is_expandable_to, maybe_multiply, restore_reduced_dims,
                            sum_to)
from ._reduction import (amax_backward, cumprod_backward, cumsum_backward,
                         evenly_distribute_backward, log_softmax_backward,
                         logsumexp_backward, mean_backward, norm_backward, prod_backward,
                         softmax_backward, std_backward, sum_backward,
                         value_selecting_reduction_backward, var_backward)
from ._pointwise import (atan2_backward, clamp_backward, clamp_backward_max,
                         clamp_backward_min, gelu_backward, isfinite, maximum_backward,
                         minimum_backward, pow_backward_exponent, pow_backward_self,
                         silu_backward)
from ._shape import (cat_backward, expand_backward, narrow_backward, permute_backward,
                     repeat_backward, roll_backward, select_backward, split_backward,
                     squeeze_backward, unbind_backward)
from ._strided import as_strided_backward, unfold_backward
from ._indexing import (gather_backward, index_backward, index_put_self_backward,
                        index_put_values_backward, index_select_backward,
                        take_along_dim_backward)
from ._pointwise import (copysign_backward_self, fmax_fmin_backward, logit_backward,
                         xlogy_backward_self)
from ._reduction import cummaxmin_backward, nansum_backward
from ._logscan import logcumsumexp_backward
from ._linalg import (einsum_backward, matmul_backward_other, matmul_backward_self,
                      mm_mat2_backward)
from ._linalg import (cholesky_backward, linalg_eigh_backward, linalg_qr_backward,
                      linalg_det_backward, linalg_solve_backward, linalg_svd_backward)
from ._linalg_solvers import (lstsq_backward, lu_factor_ex_backward, lu_unpack_backward,
                              matrix_exp_backward, solve_triangular_backward)
from ._scatter import scatter_reduce_backward
from ._special import not_implemented
