"""The argument-conversion table (``ops/arguments.py``): one source for the generated
wrappers and the JIT's array-mode plans.

Each schema type's line in a wrapper and ``arguments.convert`` (what a plan does to a
constant) give the same value, or the same error with the same text, for the same input;
both read the table when they run, so a conversion added to it reaches both.
"""
import numpy as np
import pytest

import ember as E
from ember import dispatch
from ember.jit.runtime import plan_array_mode
from ember.jit.ir.parser import parse_ir
from ember.jit.runtime.plan import ExecutionPlan
from ember.ops import FUNCTIONS, arguments, codegen, emit_dispatch
from ember.ops.arguments import ARGUMENT_CONVERSIONS, Conversion
from ember.ops.schema import parse_schema

# values per schema type: accepted ones, converted ones and ones refused with a TypeError
VALUES = {
    "int": [3, -1, np.int64(4), True, 2.0, None, "3", E.tensor(2)],
    "SymInt": [3, np.int32(5), 1.5],
    "int[]": [(1, 2), [3, np.int64(4)], 5, (1.0,), "ab", None],
    "int[2]": [(1, 2), 3, np.int8(2), [1, 2.5]],
    "bool": [True, False, np.bool_(True), 1, None, "yes"],
    "bool[3]": [(True, False, True), [True], (1, 0, 1)],
    "float": [1.5, 2, np.float32(0.5), E.tensor(2.5), "x", True, None],
    "Scalar": [1, 2.5, True, np.float64(3.0), E.tensor([4.0]), E.ones(2), "s", None],
    "str": ["mean", 3, None],
    "ScalarType": [E.float32, None, "float64", 3],
}


def _outcome(fn):
    try:
        v = fn()
    except (TypeError, ValueError) as e:
        return type(e), str(e)
    return type(v), v.item() if hasattr(v, "item") and not isinstance(v, E.Tensor) else v


def _run_line(a, pos, value):
    """Run the wrapper's lines for argument ``a`` on ``value``; the converted value."""
    lines = emit_dispatch._check(a, pos, "op", False)
    ns = arguments.namespace()
    src = "def f(" + a.name + "):\n" + "".join("    " + ln + "\n" for ln in lines) + \
        f"    return {a.name}\n"
    exec(compile(src, "<test>", "exec"), ns)  # noqa: S102
    return ns["f"](value)


@pytest.mark.parametrize("typ", sorted(VALUES))
@pytest.mark.parametrize("optional", [False, True])
def test_the_wrappers_line_and_the_plans_conversion_agree(typ, optional):
    a = parse_schema(f"op(Tensor self, {typ}{'?' if optional else ''} x) -> Tensor") \
        .arguments[1]
    for value in VALUES[typ]:
        line = _outcome(lambda: _run_line(a, 2, value))
        plan = _outcome(lambda: plan_array_mode._convert_arg(a, value, "op", 2))
        assert line == plan, (typ, optional, value)
        if value is None and optional:
            assert line == (type(None), None)


def test_the_errors_name_the_op_the_argument_and_the_expected_type():
    a = parse_schema("max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[]) -> "
                     "Tensor").arguments[2]
    with pytest.raises(TypeError, match=r"^max_pool2d\(\): argument 'stride' \(position 3\) "
                                        r"must be tuple of ints of length 2, not str$"):
        arguments.convert(a, "ab", "max_pool2d", 3)
    with pytest.raises(TypeError, match=r"argument 'stride' \(position 3\) must be tuple of "
                                        r"ints of length 2, not str"):
        E.max_pool2d(E.ones(1, 4, 4), 2, "ab")


def test_every_declared_argument_is_checked_from_the_table():
    """Every non-Tensor argument of every op in native_functions.yaml: the check its
    wrapper calls is the table's, under the name the wrappers' globals give it."""
    seen = set()
    for nf in FUNCTIONS:
        src = codegen.source_of(codegen.wrapper_name(nf))
        for pos, a in enumerate(nf.schema.arguments, 1):
            conv = ARGUMENT_CONVERSIONS.get(a.type.base)
            if a.type.base == "Tensor" or conv is None:
                continue
            many = a.type.is_list and conv.check_list is not None
            name = conv.list_name if many else conv.name
            assert f"{a.name} = {name}({a.name}, '{nf.schema.name}', '{a.name}', {pos}" \
                in src, (nf.schema.name, a.name)
            assert codegen.NAMESPACE[name] is (conv.check_list if many else conv.check)
            seen.add(a.type.base)
    assert seen == set(ARGUMENT_CONVERSIONS) - {"SymInt"}  # (no op declares SymInt yet)


CHAIN = """graph(%x : Float(2, 3, device=cpu), %y : Float(2, 3, device=cpu)):
  %two : float = prim::Constant[value=2.0]()
  %b : Float(2, 3, device=cpu) = ember::add(%x, %y, %two)
  return (%b)"""


def test_a_conversion_added_to_the_table_reaches_the_wrappers_and_the_plans(monkeypatch):
    calls = []

    def spy(v, op, name, pos):
        calls.append((op, name, pos, v))
        return dispatch.check_scalar(v, op, name, pos) * 10

    monkeypatch.setitem(ARGUMENT_CONVERSIONS, "Scalar", Conversion(spy, "_spy", None))
    # the wrapper: written from the table, with the table's globals
    nf = next(nf for nf in FUNCTIONS if nf.kernel_name == "add")
    name, src, extra = codegen.generate(nf, False, [])
    assert "alpha = _spy(alpha, 'add', 'alpha', 3)" in src
    ns = dict(codegen.NAMESPACE, **extra)
    ns.update(arguments.namespace())
    exec(compile(src, "<test add>", "exec"), ns)  # noqa: S102
    x, y = E.ones(2, 3), E.full((2, 3), 0.5)
    assert ns[name](x, y, alpha=2).tolist() == [[11.0] * 3] * 2  # 1 + 0.5 * 20
    assert calls == [("add", "alpha", 3, 2)]
    # the plan: the constant converted once, when the plan is built
    plan = ExecutionPlan(parse_ir(CHAIN), array_mode=True)
    built = len(calls)  # (memory planning lowers the node too)
    assert built > 1 and set(calls[1:]) == {("add", "alpha", 3, 2.0)}
    (out,) = plan.run([x, y])
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 11.0))
    assert len(calls) == built


def test_a_plan_refuses_what_the_wrapper_refuses_with_its_error():
    bad = CHAIN.replace("float = prim::Constant[value=2.0]", "str = prim::Constant[value=\"a\"]")
    with pytest.raises(TypeError) as eager:
        E.add(E.ones(2, 3), E.ones(2, 3), alpha="a")
    with pytest.raises(TypeError) as planned:
        ExecutionPlan(parse_ir(bad), array_mode=True)
    assert str(planned.value) == str(eager.value) == \
        "add(): argument 'alpha' (position 3) must be Number, not str"
