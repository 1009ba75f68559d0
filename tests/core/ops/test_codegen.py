"""Generated wrappers (``ops/codegen.py``): a promoted ``self`` takes a Python number only
where PyTorch has an overload for it (``number_self`` in native_functions.yaml).

Expectations checked against torch 2.x: ``torch.sin(2.0)``, ``torch.atan2(2.0, x)``,
``torch.eq(2, x)`` raise TypeError; ``torch.add(2, 3)``, ``torch.where(c, 1, 2.5)``,
``torch.pow(2, x)`` and ``2 ** x`` work, ``torch.pow(2, 3)`` raises. Values are compared
with numpy.
"""
import math

import numpy as np
import pytest

import ember as E
from ember.ops import FUNCTIONS, codegen

X = np.array([0.5, 1.5, 2.5, 4.0])
I = np.array([1, 2, 3, 5])


def _refusing():
    """Every declaration whose promoted ``self`` must be a Tensor."""
    return [nf for nf in FUNCTIONS if "self" in nf.promote_args and nf.number_self is False]


def _args_with_number_self(nf) -> list:
    """Positional arguments for ``nf``: 2.0 as self, valid values for the required rest."""
    fill = {"Tensor": E.ones(2), "int": 0, "float": 1.0, "bool": False}
    args = []
    for a in nf.schema.arguments:
        if a.name == "self":
            args.append(2.0)
        elif not a.has_default and not a.kwarg_only:
            v = fill[a.type.base]
            args.append([v] if a.type.is_list else v)
    return args


def test_the_refusing_ops_include_unary_math_comparisons_and_products():
    names = {nf.kernel_name for nf in _refusing()}
    assert {"sin", "exp", "sigmoid", "logsumexp", "atan2", "fmod", "maximum", "eq", "lt",
            "rsub", "clamp", "matmul", "addmm", "max.other"} <= names
    assert not names & {"add", "sub", "mul", "div", "pow", "remainder", "where",
                        "bitwise_and", "bitwise_left_shift"}


@pytest.mark.parametrize("nf", _refusing(), ids=lambda nf: nf.kernel_name)
def test_a_number_self_raises_type_error_naming_the_way_out(nf):
    fn = codegen.NAMESPACE[codegen.wrapper_name(nf)]
    op = nf.name
    pos = 1 + [a.name for a in nf.schema.arguments].index("self")  # polygamma(n, self): 2
    before = r"\.\.\., " if pos > 1 else ""
    with pytest.raises(TypeError, match=rf"^{op}\(\): argument 'self' \(position {pos}\) must "
                                        rf"be Tensor, not float; wrap the number in a tensor "
                                        rf"first: ember\.{op}\({before}ember\.tensor\(2\.0\)"):
        fn(*_args_with_number_self(nf))


def test_the_hint_puts_a_later_self_in_its_place():
    with pytest.raises(TypeError, match=r"position 2\) .*ember\.polygamma\(\.\.\., "
                                        r"ember\.tensor\(2\.0\)\)$"):
        E.polygamma(1, 2.0)


def test_message_for_a_math_function():
    with pytest.raises(TypeError) as err:
        E.sin(2.0)
    assert str(err.value) == (
        "sin(): argument 'self' (position 1) must be Tensor, not float; wrap the number in a "
        "tensor first: ember.sin(ember.tensor(2.0)), or use math.sin(2.0) for Python numbers")
    # both ways out give the same value
    assert E.sin(E.tensor(2.0, dtype=E.float64)).item() == pytest.approx(math.sin(2.0))


@pytest.mark.parametrize("call, tail", [
    (lambda: E.exp(2), r"ember\.exp\(ember\.tensor\(2\)\), or use math\.exp\(2\) for Python "
                       r"numbers$"),
    (lambda: E.sigmoid(0.5), r"ember\.sigmoid\(ember\.tensor\(0\.5\)\)$"),   # not in math
    (lambda: E.logsumexp(2.0, 0), r"ember\.logsumexp\(ember\.tensor\(2\.0\), \.\.\.\)$"),
    (lambda: E.atan2(1.5, E.ones(2)), r"ember\.atan2\(ember\.tensor\(1\.5\), \.\.\.\), or use "
                                      r"math\.atan2\(1\.5, \.\.\.\) for Python numbers$"),
    (lambda: E.eq(2, E.ones(2)), r"ember\.eq\(ember\.tensor\(2\), \.\.\.\)$"),
    (lambda: E.rsub(2, E.ones(2)), r"ember\.rsub\(ember\.tensor\(2\), \.\.\.\)$"),
    (lambda: E.sqrt(np.float32(4.0)), r"ember\.sqrt\(ember\.tensor\(4\.0\)\)"),
    (lambda: E.sin(True), r"ember\.sin\(ember\.tensor\(True\)\)"),
], ids=["int", "not_in_math", "more_args", "binary", "comparison", "rsub", "numpy_scalar",
        "bool"])
def test_message_shows_the_call_to_write(call, tail):
    with pytest.raises(TypeError, match=r"argument 'self' \(position 1\) must be Tensor, not "
                                        r"\w+; wrap the number in a tensor first: " + tail):
        call()


@pytest.mark.parametrize("value, expected", [
    ([1.0, 2.0], r"not list; wrap the values in a tensor first: "
                 r"ember\.tanh\(ember\.tensor\(values\)\)$"),
    (np.ones(2), r"not ndarray; convert the array first: "
                 r"ember\.tanh\(ember\.as_tensor\(array\)\)$"),
    (None, r"not NoneType$"),
    ("2.0", r"not str$"),
])
def test_other_non_tensor_selves(value, expected):
    with pytest.raises(TypeError, match=r"^tanh\(\): argument 'self' \(position 1\) must be "
                                        r"Tensor, " + expected):
        E.tanh(value)


def test_tensor_subclasses_and_integral_tensors_still_pass():
    p = E.nn.Parameter(E.tensor(X))
    np.testing.assert_allclose(E.sin(p).detach().numpy(), np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(E.atan2(p, E.tensor(X)).detach().numpy(), np.arctan2(X, X),
                               rtol=1e-6)
    r = E.exp(E.tensor(I))   # int64 goes the promoting path, past the guard
    assert r.dtype is E.float32
    np.testing.assert_allclose(r.numpy(), np.exp(I), rtol=1e-6)


@pytest.mark.parametrize("call, expected", [   # ops where PyTorch takes a number self
    (lambda x, i: E.add(2, x), 2 + X),
    (lambda x, i: E.add(2, x, alpha=3), 2 + 3 * X),
    (lambda x, i: E.sub(2, x), 2 - X),
    (lambda x, i: E.mul(2.0, x), 2.0 * X),
    (lambda x, i: E.div(2, x), 2 / X),
    (lambda x, i: E.true_divide(2, x), 2 / X),
    (lambda x, i: E.floor_divide(7, x), 7 // X),
    (lambda x, i: E.remainder(7, x), np.remainder(7, X)),
    (lambda x, i: E.pow(2, x), 2.0 ** X),
    (lambda x, i: E.bitwise_and(6, i), 6 & I),
    (lambda x, i: E.bitwise_or(6, i), 6 | I),
    (lambda x, i: E.bitwise_xor(6, i), 6 ^ I),
    (lambda x, i: E.bitwise_left_shift(1, i), 1 << I),
    (lambda x, i: E.bitwise_right_shift(64, i), 64 >> I),
    (lambda x, i: E.where(x > 2, 1, 2.5), np.where(X > 2, 1, 2.5)),
    (lambda x, i: E.where(x > 2, 0.0, x), np.where(X > 2, 0.0, X)),
])
def test_a_number_self_is_taken_where_pytorch_takes_it(call, expected):
    got = call(E.tensor(X, dtype=E.float64), E.tensor(I))
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("call, expected", [
    (lambda: E.add(2, 3), 5), (lambda: E.sub(2, 3), -1), (lambda: E.mul(2, 3.5), 7.0),
    (lambda: E.div(3, 2), 1.5), (lambda: E.floor_divide(7, 2), 3),
])
def test_numbers_alone_where_pytorch_takes_them(call, expected):
    r = call()
    assert isinstance(r, E.Tensor) and r.ndim == 0 and r.item() == expected


@pytest.mark.parametrize("call, names", [
    (lambda: E.pow(2, 3), "'self' or 'exponent', got int and int"),
    (lambda: E.remainder(7, 2.5), "'self' or 'other', got int and float"),
    (lambda: E.bitwise_and(True, False), "'self' or 'other', got bool and bool"),
    (lambda: E.bitwise_left_shift(1, 3), "'self' or 'other', got int and int"),
])
def test_numbers_alone_raise_for_a_scalar_self_overload(call, names):
    with pytest.raises(TypeError, match=r"expected a Tensor for " + names + r"; wrap one in "
                                        r"a tensor first: ember\.\w+\(ember\.tensor\("):
        call()


def test_operators_with_a_number_on_the_left():
    x, i = E.tensor(X, dtype=E.float64), E.tensor(I)
    pairs = [(2 + x, 2 + X), (2 - x, 2 - X), (2 * x, 2 * X), (2 / x, 2 / X),
             (7 // x, 7 // X), (7 % x, 7 % X), (2 ** x, 2.0 ** X), (6 & i, 6 & I),
             (6 | i, 6 | I), (6 ^ i, 6 ^ I), (1 << i, 1 << I), (64 >> i, 64 >> I),
             (2 < x, 2 < X), (2 == x, 2 == X)]
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_a_number_other_is_still_taken():
    x = E.tensor(X, dtype=E.float64)
    np.testing.assert_allclose(E.fmod(x, 2).numpy(), np.fmod(X, 2))
    np.testing.assert_array_equal(E.eq(x, 2.5).numpy(), X == 2.5)
    np.testing.assert_allclose(E.clamp(x, 1, 2).numpy(), np.clip(X, 1, 2))
    np.testing.assert_allclose(E.maximum(x, 2.0).numpy(), np.maximum(X, 2.0))


def test_gradient_through_a_number_self():
    x = E.tensor(X, dtype=E.float64, requires_grad=True)
    (E.pow(2.0, x) + E.sub(2, x)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0 ** X * math.log(2.0) - 1.0, rtol=1e-12)


# --- argument checks: a value the check would return unchanged skips the call ----------------

def test_bool_str_float_and_dtype_arguments_past_and_off_their_defaults():
    x = E.tensor(X, dtype=E.float64)
    assert x.sum(0, np.True_).tolist() == [X.sum()]  # a numpy bool is converted
    with pytest.raises(TypeError, match=r"^sum\(\): argument 'keepdim' \(position 3\) must be "
                                        r"bool, not int$"):
        x.sum(0, 1)
    assert x.sum(dtype=E.float32).dtype is E.float32 and x.sum().dtype is E.float64
    np.testing.assert_allclose(E.div(x, 2.0, rounding_mode="floor").numpy(), np.floor(X / 2))
    with pytest.raises(TypeError, match=r"^div\(\): argument 'rounding_mode' \(position 3\) "
                                        r"must be str, not int$"):
        E.div(x, 2.0, rounding_mode=1)
    ref = E.layer_norm(x, (4,), eps=1e-5).numpy()
    np.testing.assert_allclose(E.layer_norm(x, (4,), eps=np.float32(1e-5)).numpy(), ref)
    np.testing.assert_allclose(E.layer_norm(x, (4,), eps=0).numpy(),
                               (X - X.mean()) / X.std(), rtol=1e-12)
    with pytest.raises(TypeError, match=r"^layer_norm\(\): argument 'eps' \(position 5\) "
                                        r"must be float, not str$"):
        E.layer_norm(x, (4,), eps="small")


def test_dims_in_range_negative_and_out_of_range():
    x = E.tensor(X)
    assert x.softmax(-1).tolist() == x.softmax(0).tolist()
    assert E.tensor(2.0).softmax(-1).item() == E.tensor(2.0).softmax(0).item() == 1.0
    assert E.ones(2, 3).unsqueeze(2).shape == (2, 3, 1)  # dim_extra: one past the end
    assert E.ones(2, 3).unsqueeze(-1).shape == (2, 3, 1)
    with pytest.raises(IndexError, match=r"softmax\(\): dimension out of range \(expected to "
                                         r"be in range of \[-1, 0\], but got 1\)"):
        x.softmax(1)
    with pytest.raises(IndexError, match=r"unsqueeze\(\): dimension out of range"):
        E.ones(2).unsqueeze(2)


def test_tensor_arguments_take_subclasses_and_refuse_the_rest():
    x, w = E.tensor(X), E.nn.Parameter(E.ones(4, dtype=E.float64))
    np.testing.assert_allclose(E.layer_norm(x, (4,), weight=w).detach().numpy(),
                               E.layer_norm(x, (4,)).numpy())
    with pytest.raises(TypeError, match=r"^layer_norm\(\): argument 'weight' \(position 3\) "
                                        r"must be Tensor or None, not str$"):
        E.layer_norm(x, (4,), weight="w")
    with pytest.raises(TypeError, match=r"^index_select\(\): argument 'index' \(position 3\) "
                                        r"must be Tensor, not list$"):
        E.index_select(x, 0, [0])
    class Sub(E.Tensor):  # a subclass that, unlike Parameter, says so in __class__
        __slots__ = ()
    s = E.ones(4, dtype=E.float64)
    s.__class__ = Sub
    np.testing.assert_allclose(E.layer_norm(x, (4,), weight=s).numpy(),
                               E.layer_norm(x, (4,)).numpy())
    assert s.add_(1) is s and s.tolist() == [2.0] * 4
    with E.no_grad():
        assert w.add_(1).tolist() == [2.0] * 4  # in place on a Parameter
    with pytest.raises(TypeError, match=r"^add_\(\): argument 'self' \(position 1\) must be "
                                        r"Tensor, not float$"):
        E.Tensor.add_(2.0, x)


def test_a_tensor_argument_on_another_backend_raises(alt):
    x, idx = E.tensor(X), E.tensor([0, 2])
    assert E.index_select(x, 0, idx).tolist() == [0.5, 2.5]
    with pytest.raises(E.DeviceMismatchError, match=r"index_select\(\): expected 'index' on "
                                                    r"'cpu' like the other tensors, but it is "
                                                    r"on alt"):
        E.index_select(x, 0, idx.to("alt"))


def test_ops_of_three_or_float_operands_skip_promotion_only_for_one_type():
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    a32, a64 = E.tensor(m, dtype=E.float32), E.tensor(m, dtype=E.float64)
    assert E.addmm(a32, a32, a32).dtype is E.float32  # one Type: no promotion
    r = E.addmm(a32, a64, a32)  # mixed: promoted
    assert r.dtype is E.float64
    np.testing.assert_allclose(r.numpy(), m + m @ m)
    assert E.addmm(E.tensor([1, 2]), E.tensor(m, dtype=E.int64),
                   E.tensor(m, dtype=E.int64)).dtype is E.int64
    i = E.tensor(I)
    assert E.true_divide(i, i).dtype is E.float32  # one int Type: still made float
    np.testing.assert_allclose(E.atan2(i, i).numpy(), np.arctan2(I, I), rtol=1e-6)
    np.testing.assert_allclose(E.atan2(a64, a64).numpy(), np.arctan2(m, m), rtol=1e-12)
    with pytest.raises(E.ShapeError, match=r"addmm\(\)"):
        E.addmm(a32, a32, E.ones(3, 3))


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16, E.float32, E.float64, E.uint8,
                                   E.int32, E.int64])
@pytest.mark.parametrize("n", [3, 2.5, -7])
def test_a_number_on_the_left_keeps_the_rules_of_the_right(dtype, n):
    # the mirrored fast path (2 - x) against the number on the right, which commutes
    t = E.tensor([[1, 200], [5, 0]]).to(dtype)
    for left, right in [(E.add(n, t), E.add(t, n)), (E.mul(n, t), E.mul(t, n)),
                        (E.sub(n, t), E.neg(E.sub(t, n)) if dtype is not E.uint8 else
                         E.sub(E.zeros_like(t), E.sub(t, n)))]:
        assert left.dtype is right.dtype
        np.testing.assert_array_equal(left.float().numpy(), right.float().numpy())
    if n == 2.5 and not dtype.is_floating_point:
        assert E.sub(n, t).dtype is E.float32  # a float number raises an integral tensor


def test_the_mirrored_fast_path_only_where_a_number_may_be_self():
    assert "_a_self = self; _a_other = other._data" in codegen.source_of("sub")
    assert "_a_self = self; _a_other = other._data" not in codegen.source_of("atan2")
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        E.atan2(2.0, E.ones(2))


# ---- composites with generated variants --------------------------------------------------

def _compile_entry(entry: dict, impl, inplace: bool = False):
    """Compile one yaml entry's wrapper beside the real ones (without installing it)."""
    from ember.ops import composite as comp, native
    from ember.ops.schema import Location
    nf = native.parse_entry(entry, Location("test", 1))
    comp.COMPOSITES[nf.kernel_name] = impl
    name, src, extra = codegen.generate(nf, inplace)
    ns = dict(codegen.NAMESPACE, **extra)
    exec(compile(src, "<test>", "exec"), ns)  # noqa: S102
    return ns[name]


@pytest.fixture
def scaled_add_():
    """A composite ``_test_scaled_add(self, other, float alpha)`` with a generated ``_``
    variant (``structured: inplace``): self + alpha * other."""
    from ember.ops import composite as comp
    yield _compile_entry({"func": "_test_scaled_add(Tensor self, Tensor other, float alpha) "
                                  "-> Tensor", "dispatch": "composite",
                          "structured": "inplace"},
                         lambda self, other, alpha: self + other * alpha, inplace=True)
    comp.COMPOSITES.pop("_test_scaled_add", None)


def test_a_composites_generated_inplace_variant_records_autograd(scaled_add_):
    a = E.tensor([1.0, 2.0], dtype=E.float64, requires_grad=True)
    b = E.tensor([3.0, 4.0], dtype=E.float64, requires_grad=True)
    x = a * 1.0                          # a non-leaf, so it may be written in place
    v = x._version
    out = scaled_add_(x, b, 3.0)
    assert out is x and x._version > v
    np.testing.assert_allclose(x.detach().numpy(), [10.0, 14.0])
    (x * E.tensor([1.0, 10.0], dtype=E.float64)).sum().backward()
    # d/da = w (through the old x), d/db = 3 w: both lost if the store were not recorded
    np.testing.assert_allclose(a.grad.numpy(), [1.0, 10.0])
    np.testing.assert_allclose(b.grad.numpy(), [3.0, 30.0])


def test_a_composites_inplace_variant_checks_before_writing(scaled_add_):
    leaf = E.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        scaled_add_(leaf, E.ones(2), 1.0)
    x = E.tensor([1, 2])                 # int64: a float result cannot be stored in it
    with pytest.raises(E.DtypeError, match="can't be cast"):
        scaled_add_(x, E.tensor([0.5, 0.5], requires_grad=True), 1.0)
    assert x.tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="in-place ops cannot grow 'self'"):
        scaled_add_(E.zeros(2) * 1.0, E.ones(3, 2, requires_grad=True), 1.0)
    y = E.zeros(2)                       # nothing requires grad: the plain store
    assert scaled_add_(y, E.ones(2), 2.0) is y and y.tolist() == [2.0, 2.0]


def test_a_promoting_composite_with_an_unpromoted_tensor_argument_compiles():
    # the generated device check once read an undefined _T here (NameError)
    from ember.ops import composite as comp
    try:
        fn = _compile_entry({"func": "_test_pick(Tensor self, Tensor other, Tensor mask) -> "
                                     "Tensor", "dispatch": "composite", "promote": "common",
                             "promote_args": "self, other"},
                            lambda self, other, mask: E.where(mask, self, other))
        got = fn(E.tensor([1.0, 2.0]), E.tensor([5, 6]), E.tensor([True, False]))
        assert got.tolist() == [1.0, 6.0]
    finally:
        comp.COMPOSITES.pop("_test_pick", None)
