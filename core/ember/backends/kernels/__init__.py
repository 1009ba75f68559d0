"""Generic kernels by concept; see ``ember.backends.array_api`` for the kernel contract.

Floating-point special values (``log(0)``, ``1 / 0``, ``inf - inf``, overflow to inf) give
inf/nan silently, as in PyTorch. numpy would warn; rather than wrap every kernel call in
``np.errstate`` (about 1 us a call), one warnings filter ignores numpy's floating-point
RuntimeWarnings attributed to ember's kernel modules, generated op wrappers and JIT
plans (whose array mode calls ufuncs directly). It costs
nothing until a warning fires, and leaves warnings from the user's own numpy code alone.

NOTE: ``import ember`` installs it. Code that first imports ember inside
``warnings.catch_warnings()`` (pytest does, while it configures and collects) loses it
when that block ends; such code calls :func:`ignore_float_warnings` again (see
tests/conftest.py).
"""
import warnings

__all__ = ["ignore_float_warnings"]


def ignore_float_warnings() -> None:
    """Install the filter the module docstring describes (``import ember`` does); calling
    it again changes nothing. For test runners that import ember inside
    ``warnings.catch_warnings()`` and so lose it."""
    warnings.filterwarnings(
        "ignore", category=RuntimeWarning,
        message=r"(overflow|invalid value|divide by zero|underflow) encountered",
        module=r"ember\.(backends\.kernels|ops\.generated|jit\.generated)")


ignore_float_warnings()
