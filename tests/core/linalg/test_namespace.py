"""ember.linalg's namespace (ember/linalg/__init__.py): torch.linalg's names, each callable,
the aliases and LinAlgError."""
import numpy as np

import ember as E


def test_namespace_has_torch_linalg_names():
    for name in E.linalg.__all__:
        assert callable(getattr(E.linalg, name)), name
    assert issubclass(E.linalg.LinAlgError, RuntimeError)
    for name in ("lstsq", "lu_factor", "lu_factor_ex", "lu", "lu_solve", "solve_triangular",
                 "solve_ex", "inv_ex", "cholesky_ex", "matrix_exp", "vander", "vecdot",
                 "tensorinv", "tensorsolve", "cond", "householder_product", "diagonal",
                 "matmul", "eigvalsh", "svdvals"):
        assert name in E.linalg.__all__, name


def test_diagonal_and_matmul_aliases():
    a = E.tensor(np.arange(24.0).reshape(2, 3, 4))
    assert E.linalg.diagonal(a).tolist() == np.diagonal(a.tolist(), 0, -2, -1).tolist()
    assert E.linalg.diagonal(a, offset=1, dim1=0, dim2=2).tolist() == \
        np.diagonal(a.tolist(), 1, 0, 2).tolist()
    assert E.linalg.matmul is E.matmul


def test_named_results():
    a = E.eye(3, dtype=E.float64)
    assert E.linalg.lu(a)._fields == ("P", "L", "U")
    assert E.linalg.lu_factor(a)._fields == ("LU", "pivots")
    assert E.linalg.lu_factor_ex(a)._fields == ("LU", "pivots", "info")
    assert E.linalg.lstsq(a, a)._fields == ("solution", "residuals", "rank", "singular_values")
    assert E.linalg.solve_ex(a, a)._fields == ("result", "info")
    assert E.linalg.inv_ex(a)._fields == ("inverse", "info")
    assert E.linalg.cholesky_ex(a)._fields == ("L", "info")
    assert E.svd(a)._fields == ("U", "S", "V")
    assert E.triangular_solve(a, a)._fields == ("solution", "cloned_coefficient")
