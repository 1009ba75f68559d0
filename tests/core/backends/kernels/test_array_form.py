"""Array-level forms (``array_form.py``): every kernel that has one returns exactly what its
ufunc returns, under the contract (float32/float64 operands, Python numbers weak, the
declared values of the other arguments), for numpy's table and the generic one CuPy runs."""
import numpy as np
import pytest

import ember as E
from ember.backends import array_api
from ember.backends.kernels.array_form import UfuncForm, declare_ufunc, ufunc_form

# the forms the JIT's array mode relied on before kernels declared them (plan_array_mode's
# old name table): each must still be declared, or be a bare ufunc
EXPECTED = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide",
            "true_divide": "divide", "neg": "negative", "exp": "exp", "log": "log",
            "sin": "sin", "cos": "cos", "tanh": "tanh", "sqrt": "sqrt", "abs": "absolute",
            "maximum": "maximum", "minimum": "minimum"}


def forms(table) -> dict:
    return {op: f for op, k in table.items() if (f := ufunc_form(k, np)) is not None}


@pytest.mark.parametrize("which", ["numpy_kernels", "generic_kernels"])
def test_the_ops_plans_call_as_ufuncs_declare_them(which, request):
    found = forms(request.getfixturevalue(which))
    assert {op: found[op].ufunc.__name__ for op in EXPECTED if op in found} == EXPECTED
    assert found["add"].when == (1,) and found["div"].when == (None,)


def _operands(rng, nin: int, dtype, shape):
    x = rng.standard_normal(shape).astype(dtype) * 3
    x.flat[:3] = [0.0, -0.0, 1.5][:x.size]
    yield (x,) if nin == 1 else (x, (rng.standard_normal(shape) + 0.5).astype(dtype))
    if nin == 2:  # a Python number on either side, weak as in PyTorch
        yield x, 0.1
        yield 2.5, x


@pytest.mark.parametrize("which", ["numpy_kernels", "generic_kernels"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_each_kernel_is_its_form(which, dtype, request):
    table = request.getfixturevalue(which)
    refused = array_api.unsupported()  # (bitwise_not is a ufunc no float Type has)
    st = E.float32 if dtype is np.float32 else E.float64
    rng = np.random.default_rng(0)
    with np.errstate(all="ignore"):
        for op, (ufunc, when) in forms(table).items():
            if st in refused.get(op, ()):
                continue
            for shape in [(7,), (3, 4)]:
                for ops in _operands(rng, ufunc.nin, dtype, shape):
                    want = ufunc(*ops)
                    got = table[op](*ops, *when)
                    assert got.dtype == want.dtype == dtype, (op, ops)
                    np.testing.assert_array_equal(got, want, err_msg=f"{op}{ops}")


def test_declare_ufunc_sets_the_form_and_checks_its_arguments():
    def k(a, b, alpha):
        return np.add(a, b) if alpha == 1 else None
    assert declare_ufunc(k, np.add, when=(1,)) is k
    assert ufunc_form(k, np) == UfuncForm(np.add, (1,))
    assert ufunc_form(np.exp, np) == UfuncForm(np.exp, ())
    assert ufunc_form(lambda a: a, np) is None
    with pytest.raises(TypeError, match="expected the xp ufunc the kernel calls, got int"):
        declare_ufunc(k, 3)
    with pytest.raises(TypeError, match="when=\\(1,\\)"):
        declare_ufunc(k, np.add, when=1)
