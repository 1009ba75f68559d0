"""The Program IR: what the builder records, how it prints, and what it refuses."""
from __future__ import annotations

import numpy as np
import pytest

from ember.backends.elementwise import EngineError, Program, Value
from ember.backends.elementwise.program import Dims, Op


def test_builder_records_steps_dtypes_and_outputs():
    prog = Program("affine")
    x = prog.input("float16")
    w = prog.input(np.float32)
    xf = prog.cast(x, np.float32)
    t = prog.ufunc("multiply", xf, w)
    u = prog.ufunc(np.add, t, 1.0)
    assert (x.index, x.dtype, u.index, u.dtype) == (0, np.float16, 4, np.float32)
    assert prog.output(u, dtype="float16") == 0
    r = prog.reduce("sum", u, dims="all", keepdim=True)
    assert prog.output(r) == 1
    assert prog.input_dtypes == (np.dtype("float16"), np.dtype("float32"))
    assert [s.op for s in prog.steps] == [Op.INPUT, Op.INPUT, Op.CAST, Op.UFUNC, Op.UFUNC,
                                          Op.REDUCE]
    assert prog.steps[5].dims is Dims.ALL and prog.steps[5].keepdim
    assert prog.outputs[0].dtype == np.float16 and prog.outputs[1].value == r
    assert prog.is_reduction(r) and not prog.is_reduction(u)


def test_dump_prints_one_step_a_line():
    prog = Program("dump")
    x = prog.input("float32")
    c = prog.ufunc("greater", x, 0)
    w = prog.where(c, x, 0.5)
    e = prog.call(np.tanh, w, dtype="float32")
    prog.output(e, dtype="float16")
    prog.output(prog.reduce("amax", e, dims="last", keepdim=False))
    assert str(prog) == repr(prog) == "\n".join([
        "program 'dump' (1 inputs, 2 outputs)",
        "  %0 = input 0 : float32",
        "  %1 = greater(%0, 0) : bool",
        "  %2 = where(%1, %0, 0.5) : float32",
        "  %3 = call tanh(%2) : float32",
        "  %4 = amax(%3, dims=last, keepdim=False) : float32",
        "  output 0 = %3 : float16",
        "  output 1 = %4 : float32"])
    assert repr(x) == "%0: float32"


@pytest.mark.parametrize("args, want", [
    (("float32", 1.0), "float32"),            # a Python float is weak (NEP 50)
    (("int32", 1.5), "float64"),
    (("float16", "float32"), "float32"),
    (("int8", 3), "int8"),
    (("float32", np.float64(1.0)), "float64"),  # a numpy scalar is not
])
def test_ufunc_dtype_defaults_to_numpy_loop(args, want):
    prog = Program()
    vals = [prog.input(a) if isinstance(a, str) else a for a in args]
    assert prog.ufunc("add", *vals).dtype == want


def test_where_and_reduce_default_dtypes():
    prog = Program()
    x16, i = prog.input("float16"), prog.input("int32")
    cond = prog.ufunc("less", x16, 0)
    assert prog.where(cond, x16, 2.5).dtype == np.float16
    assert prog.where(cond, x16, i).dtype == np.float64  # numpy promotion, not torch
    assert prog.reduce("sum", i).dtype == np.int64
    assert prog.reduce("sum", cond).dtype == np.int64
    assert prog.reduce("amax", i, dims="all").dtype == np.int32
    assert prog.reduce("mean", x16).dtype == np.float16


def test_foreign_value_is_refused():
    a, b = Program("a"), Program("b")
    x = a.input("float32")
    b.input("float32")
    for build in (lambda: b.ufunc("exp", x), lambda: b.cast(x, "float64"),
                  lambda: b.output(x), lambda: b.reduce("sum", x),
                  lambda: b.where(b.ufunc("less", x, 0), 1.0, 2.0)):
        with pytest.raises(EngineError, match="belongs to another Program"):
            build()
    with pytest.raises(EngineError, match="expected a Value of this program"):
        b.output("x")
    with pytest.raises(EngineError, match="belongs to another Program"):
        b.output(Value(0, np.dtype("float32"), object()))  # made outside any builder


@pytest.mark.parametrize("use", ["ufunc", "cast", "where", "call", "reduce", "cond"])
def test_reduction_result_may_only_feed_output(use):
    prog = Program("red")
    x = prog.input("float32")
    r = prog.reduce("sum", x, dims="all")
    build = {"ufunc": lambda: prog.ufunc("exp", r), "cast": lambda: prog.cast(r, "float64"),
             "where": lambda: prog.where(prog.ufunc("less", x, 0), r, 0.0),
             "call": lambda: prog.call(np.exp, r, dtype="float32"),
             "reduce": lambda: prog.reduce("amax", r),
             "cond": lambda: prog.where(prog.reduce("amax", prog.ufunc("less", x, 0)), 1, 2)}
    with pytest.raises(EngineError, match="reduction result, which may only feed "
                                          "prog.output"):
        build[use]()
    prog.output(r)  # this is fine


@pytest.mark.parametrize("build, match", [
    (lambda p, x: p.input("not a dtype"), "expected a numpy dtype"),
    (lambda p, x: p.cast(x, None), "expected a dtype, got None"),
    (lambda p, x: p.ufunc("no_such_ufunc", x), "expected a numpy ufunc"),
    (lambda p, x: p.ufunc(len, x), "expected a numpy ufunc"),
    (lambda p, x: p.ufunc("add", x), "takes 2 argument"),
    (lambda p, x: p.ufunc("exp", x, x), "takes 1 argument"),
    (lambda p, x: p.ufunc("divmod", x, x), "2 outputs"),
    (lambda p, x: p.ufunc("bitwise_and", x, x), "has no loop"),
    (lambda p, x: p.ufunc("add", x, [1, 2]), "expected a Value or a Python/numpy scalar"),
    (lambda p, x: p.ufunc("add", x, np.ones(3)), "expected a Value or a Python/numpy"),
    (lambda p, x: p.where(x, 1.0, 2.0), "expected a bool condition"),
    (lambda p, x: p.call("exp", x, dtype="float32"), "expected a callable"),
    (lambda p, x: p.call(lambda a: a, x, x, dtype="float32"), "cannot take 2"),
    (lambda p, x: p.reduce("prod", x), "expected a kind in"),
    (lambda p, x: p.reduce("sum", x, dims=0), "expected dims 'last' or 'all'"),
    (lambda p, x: p.reduce("mean", x, dtype="int32"), "floating or complex dtype"),
    (lambda p, x: p.output(x, dtype="nope"), "expected a numpy dtype"),
])
def test_build_errors(build, match):
    prog = Program("bad")
    x = prog.input("float32")
    with pytest.raises(EngineError, match=match) as info:
        build(prog, x)
    assert str(info.value).startswith("bad: ")
    assert isinstance(info.value, ValueError)


def test_call_requires_dtype_and_takes_any_constant():
    prog = Program()
    x = prog.input("float32")
    with pytest.raises(TypeError):
        prog.call(np.clip, x, 0, 1)  # dtype is keyword-only and required
    v = prog.call(np.clip, x, None, 1.0, dtype="float32")  # None passes through
    assert prog.steps[v.index].args[1:] == (None, 1.0)
