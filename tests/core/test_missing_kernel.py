"""The missing-kernel message (``dispatch.missing_kernel_error``) tells the truth.

It lists only the Types a backend really computes the op in (``Backend.unsupported`` and
the dtypes a kernel declares it serves), and names a plugin to install only where none
is installed: a dtype the backend excludes on purpose says to convert instead.
"""
import numpy as np
import pytest

import ember as E
from ember import dispatch
from ember.backends import registry
from ember.errors import DtypeError
from ember.types import Backend


def _error(op, typ) -> str:
    return str(dispatch.missing_kernel_error(op, typ))


def test_a_declared_dtype_set_limits_the_types_listed():
    def kernel(a):
        return a
    kernel.dtypes = frozenset({E.float32, E.float64})
    b = Backend(name="p3tab", xp=np, kernels={"p3op": kernel}, type_prefix="P3Tab",
                array_type=np.ndarray, to_numpy=lambda a: a, from_numpy=lambda a, i: a,
                unsupported={"p3op": frozenset({E.float64})})
    assert dispatch._served("p3op", b) == [E.float32]
    assert dispatch._served("p3nope", b) == []
    msg = _error("p3op", b.type(E.float16))
    assert "'p3tab' computes p3op in other dtypes: convert the inputs with .to(dtype)" in msg
    assert "pip install" not in msg


def test_cholesky_half_lists_only_the_float_types_and_installs_nothing():
    cpu = registry.get_backend("cpu")
    with pytest.raises(NotImplementedError) as info:
        E.randn(2, 2, dtype=E.float16).cholesky()
    msg = str(info.value)
    assert msg.startswith("linalg_cholesky: no kernel for CPUHalfType (ember.float16 on "
                          "'cpu'); it is implemented for: ")
    assert "pip install" not in msg and "convert the inputs with .to(dtype)" in msg
    listed = [t for t in msg.split("implemented for: ")[1].split(";")[0].split(", ")
              if t.startswith("CPU")]
    assert "CPUHalfType" not in listed and "CPUBFloat16Type" not in listed  # unsupported
    if getattr(cpu.kernels["linalg_cholesky"], "dtypes", None) is None:
        pytest.xfail("the linalg kernels do not declare their dtypes yet (the "
                     "backends/kernels/factorizations patch of issue 38's P3 report)")
    assert listed == ["CPUFloatType", "CPUDoubleType"]
    for dtype in (E.int64, E.bool):  # what the kernel itself refuses
        with pytest.raises(DtypeError, match="Expected a floating point tensor"):
            E.ones(2, 2, dtype=dtype).cholesky()


def test_every_listed_type_is_one_the_kernel_runs():
    """For a few float-only and all-dtype ops: each CPU Type the message lists computes the
    op without a dtype error (the message never lists a Type that then refuses)."""
    cpu = registry.get_backend("cpu")
    calls = {"linalg_cholesky": lambda t: t.cholesky(), "abs": lambda t: t.abs()}
    for op, call in calls.items():
        for s in dispatch._served(op, cpu):
            x = E.eye(2).to(s) if s.is_floating_point else E.ones(2, 2, dtype=s)
            if op == "linalg_cholesky" and getattr(cpu.kernels[op], "dtypes", None) is None \
                    and not s.is_floating_point:
                continue  # before the factorizations patch: ints are still listed
            call(x)
