"""interpreter.py: numpy arrays as Triton pointers, jit without the environment, and the
interpreter's libdevice, checked against numpy/math in float64 and against the names and
arities of Triton's real libdevice."""
import inspect
import itertools
import linecache
import math
import os

import ml_dtypes
import numpy as np
import pytest
import triton
import triton.language as tl
from triton.runtime.jit import mangle_type

import ember as E

from ember_triton_fuser import interpreter
from ember_triton_fuser.interpreter import LIBDEVICE, HostPointer, as_pointer
from ember_triton_fuser.ops import LIBDEVICE_FUNCTIONS, LIBDEVICE_NAME

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
_names = itertools.count()


def load(source: str, interpret: bool = True):
    """The kernel defined by ``source`` (a ``def``), jitted with ``interpreter.jit``."""
    name = source.split("def ", 1)[1].split("(", 1)[0]
    filename = f"<test_interpreter {name} {next(_names)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = interpreter.kernel_globals(interpret)
    exec(compile(source, filename, "exec"), namespace)
    return interpreter.jit(namespace[name], interpret)


STRIDED_SCALE = """
def scale(out, inp, n, so, si, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(inp + i * si, mask=mask)
    tl.store(out + i * so, x * 2, mask=mask)
"""


# ---- HostPointer -----------------------------------------------------------------------------
MANGLED = {"bool": "*i8", "uint8": "*u8", "int8": "*i8", "int16": "*i16", "int32": "*i32",
           "int64": "*i64", "float16": "*fp16", "bfloat16": "*bf16", "float32": "*fp32",
           "float64": "*fp64"}


@pytest.mark.parametrize("dtype", E.types.all_scalar_types, ids=lambda d: d.name)
def test_pointer_dtype_names_mangle_as_triton_pointers(dtype):
    p = as_pointer(np.zeros(4, dtype.numpy))
    assert mangle_type(p) == MANGLED[dtype.name]
    assert p.dtype == ("int8" if dtype is E.bool_ else dtype.name)


def test_data_ptr_is_the_address_of_element_zero():
    base = np.arange(20, dtype=np.float32)
    address = base.ctypes.data
    assert as_pointer(base).data_ptr() == address
    assert as_pointer(base[3:]).data_ptr() == address + 3 * 4
    assert as_pointer(base[::-1]).data_ptr() == address + 19 * 4
    assert as_pointer(base.reshape(4, 5)[1:, ::2]).data_ptr() == address + 5 * 4
    assert as_pointer(base, 12).data_ptr() == address + 12  # a piece, without a view


def test_as_pointer_refuses_what_it_cannot_hold():
    with pytest.raises(TypeError, match="numpy array"):
        as_pointer([1.0, 2.0])
    with pytest.raises(TypeError, match="complex64"):
        as_pointer(np.zeros(3, np.complex64))


def test_kernel_writes_strided_views_of_the_callers_arrays_in_place():
    kernel = load(STRIDED_SCALE)
    buf = np.full(20, -1.0, np.float32)
    src = np.arange(10, dtype=np.float32)
    out, inp = buf[1::2], src[::-1]             # every other element; a reversed input
    kernel[(1,)](as_pointer(out), as_pointer(inp), 10, out.strides[0] // 4,
                 inp.strides[0] // 4, BLOCK=16)
    np.testing.assert_array_equal(buf[1::2], 2 * src[::-1])
    np.testing.assert_array_equal(buf[0::2], -1.0)  # untouched between the view's elements


def test_kernel_updates_an_array_in_place_when_it_is_both_input_and_output():
    kernel = load(STRIDED_SCALE)
    a = np.arange(8, dtype=np.int64)
    p = as_pointer(a)
    kernel[(1,)](p, p, 8, 1, 1, BLOCK=8)
    np.testing.assert_array_equal(a, 2 * np.arange(8))


def test_bfloat16_and_bool_arrays_round_trip():
    kernel = load("""
def copy(out, flags, inp, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(inp + i, mask=mask).to(tl.float32)
    f = tl.load(flags + i, mask=mask) != 0
    tl.store(out + i, tl.where(f, x, -x).to(tl.bfloat16), mask=mask)
""")
    x = np.array([1.5, -2.0, 3.25, 0.0078125], ml_dtypes.bfloat16)
    flags = np.array([True, False, True, False])
    out = np.zeros(4, ml_dtypes.bfloat16)
    kernel[(1,)](as_pointer(out), as_pointer(flags), as_pointer(x), 4, BLOCK=4)
    want = np.where(flags, 1, -1) * x.astype(np.float32)
    np.testing.assert_array_equal(out.astype(np.float32), want)


def test_the_grid_executor_protocol_moves_no_memory():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)[:, 1:]
    p = HostPointer(a)
    storage = p.untyped_storage()
    assert storage.cpu() is storage and storage.data_ptr() == p.data_ptr()
    q = p.new_empty(0, device="cpu")
    q.set_(storage, p.storage_offset(), p.size(), p.stride())
    assert q.data_ptr() == p.data_ptr() and p.stride() == (3, 1) and p.size() == (2, 2)
    p.untyped_storage().copy_(q.untyped_storage())  # copying to itself: nothing happens
    with pytest.raises(RuntimeError, match="never move"):
        p.untyped_storage().copy_(HostPointer(np.zeros(2)).untyped_storage())


# ---- jit and kernel_globals ------------------------------------------------------------------
def test_jit_picks_the_mode_without_changing_the_environment():
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction
    before = (os.environ.get("TRITON_INTERPRET"), triton.knobs.runtime.interpret)
    assert isinstance(load(STRIDED_SCALE, True), InterpretedFunction)
    assert isinstance(load(STRIDED_SCALE, False), JITFunction)
    assert (os.environ.get("TRITON_INTERPRET"), triton.knobs.runtime.interpret) == before


def test_kernel_globals():
    from triton.language.extra import libdevice
    compiled, interpreted = interpreter.kernel_globals(False), interpreter.kernel_globals(True)
    assert set(compiled) == set(interpreted) == {"triton", "tl", LIBDEVICE_NAME}
    assert compiled[LIBDEVICE_NAME] is libdevice and interpreted[LIBDEVICE_NAME] is LIBDEVICE
    assert compiled["tl"] is tl and interpreter.kernel_globals(True) is not interpreted


# ---- the interpreter's libdevice -------------------------------------------------------------
def _arity(fn) -> int:
    return sum(1 for p in inspect.signature(fn).parameters if p != "_semantic")


def test_stand_in_has_libdevices_names_and_arities():
    from triton.language.extra import libdevice
    for name in LIBDEVICE_FUNCTIONS:
        real = getattr(libdevice, name)
        assert _arity(real) == (2 if name in ("atan2", "pow", "fmod", "copysign") else 1), name
        assert callable(getattr(LIBDEVICE, name))


REFERENCE = {  # numpy/math in float64
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "expm1": np.expm1, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "erf": np.vectorize(math.erf),
    "erfc": np.vectorize(math.erfc), "atan2": np.arctan2, "trunc": np.trunc, "rint": np.rint,
    "pow": np.power, "fmod": np.fmod, "copysign": np.copysign,
}
X = np.array([0.0, -0.0, 0.3, -0.7, 1.0, -1.0, 2.5, -3.5, 10.0, -20.0, 0.5, 1.5, np.nan,
              np.inf, -np.inf, 100.0])
Y = np.array([1.0, 2.0, -0.5, 3.0, -2.0, 0.25, 2.0, 3.0, -1.0, 2.0, 0.5, -1.5, 1.0, 2.0,
              3.0, 7.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(LIBDEVICE_FUNCTIONS))
def test_stand_in_computes_in_a_kernel(name, dtype):
    binary = name in ("atan2", "pow", "fmod", "copysign")
    args = "x, y" if binary else "x"
    kernel = load(f"""
def k(out, xp, yp, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(xp + i)
    y = tl.load(yp + i)
    tl.store(out + i, {LIBDEVICE_NAME}.{name}({args}))
""")
    x, y = X.astype(dtype), Y.astype(dtype)
    out = np.zeros(16, dtype)
    kernel[(1,)](as_pointer(out), as_pointer(x), as_pointer(y), BLOCK=16)
    want = REFERENCE[name](*((x.astype(np.float64), y.astype(np.float64)) if binary
                             else (x.astype(np.float64),))).astype(dtype)
    if name == "pow":  # C99 (libdevice): (-inf) ** 3 = -inf; numpy agrees there
        assert out[14] == -np.inf
    rtol = 2e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(out, want, rtol=rtol, atol=1e-30, equal_nan=True)


def test_stand_in_pow_follows_c99_where_numpy_does_not():
    from triton.runtime.interpreter import TensorHandle
    x = np.array([-np.inf, -0.0, -8.0, -2.0, np.inf, 0.0, -np.inf, 1.0])
    e = np.array([0.5, 0.5, 1 / 3, 3.0, -0.5, -1.0, 3.0, np.nan])

    def t(a):
        return tl.tensor(TensorHandle(a, tl.float64), tl.block_type(tl.float64, [len(a)]))
    got = LIBDEVICE.pow(t(x), t(e)).handle.data
    np.testing.assert_array_equal(got, [np.inf, 0.0, np.nan, -8.0, 0.0, np.inf, -np.inf, 1.0])
    assert not np.signbit(got[1])


def test_stand_in_refuses_what_libdevice_refuses():
    from triton.runtime.interpreter import TensorHandle
    def t(dtype, np_dtype):
        return tl.tensor(TensorHandle(np.ones(4, np_dtype), dtype), tl.block_type(dtype, [4]))
    f32, f64, i32 = t(tl.float32, np.float32), t(tl.float64, np.float64), t(tl.int32, np.int32)
    with pytest.raises(TypeError, match="float32 or float64"):
        LIBDEVICE.pow(f32, f64)
    with pytest.raises(TypeError, match="float32 or float64"):
        LIBDEVICE.exp(i32)
    with pytest.raises(TypeError, match="float32 or float64"):
        LIBDEVICE.pow(f64, 0.5)       # a Python float is float32 to libdevice's dispatch
    assert LIBDEVICE.pow(f32, 0.5).handle.data.dtype == np.float32
    scalar = LIBDEVICE.exp(1.0)
    assert scalar.dtype == tl.float32 and not scalar.type.is_block()
