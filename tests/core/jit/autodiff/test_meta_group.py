"""MetaGroupOp: a cache keyed by the inputs' shapes, Types (and device indices) in front of
the metas' subgraph."""
import pytest

import ember as E
from ember.jit.autodiff.meta_group import MetaGroupOp, meta_key
from ember.jit.ir.parser import parse_ir
from helpers import rand

GROUP = """graph(%a : Tensor, %b : Tensor):
  %m : Any, %r : Any = prim::MetaGroup_0(%a, %b)
  return (%m, %r)
with prim::MetaGroup_0 = graph(%a : Tensor, %b : Tensor):
  %am : Any = prim::TensorMeta(%a)
  %bm : Any = prim::TensorMeta(%b)
  %r : Any = prim::ReduceMeta(%am, %bm)
  return (%am, %r)"""


def group_op():
    g = parse_ir(GROUP)
    (node,) = g.nodes()
    return MetaGroupOp(node)


def test_a_hit_returns_the_cached_metas_and_a_new_shape_misses():
    op = group_op()
    m, r = op(rand(3, 4), rand(3, 4, seed=1))
    assert list(m.shape) == [3, 4] and m.dtype is E.float64 and r is None
    again = op(rand(3, 4, seed=2), rand(3, 4, seed=3))
    assert again[0] is m and op.misses == 1
    m2, r2 = op(rand(3, 4), rand(1, 4))
    assert op.misses == 2 and list(r2.shape) == [3, 4] and m2 is not m
    _, r3 = op(rand(3, 4, dtype=E.float32), rand(3, 4))  # a new Type misses too
    assert op.misses == 3 and r3.dtype is E.float32


def test_the_cache_starts_over_when_full(monkeypatch):
    op = group_op()
    monkeypatch.setattr(op, "max_entries", 2)
    for n in (1, 2, 3, 1):
        op(rand(n, 2), rand(n, 2))
    assert op.misses == 4  # the third shape cleared the cache, so shape 1 missed again
    assert len(op._seen) == 2


def test_meta_key():
    a, b = rand(2, 3), rand(4, dtype=E.float32)
    assert meta_key([a, None, [a, b]]) == (((2, 3), a._type), None,
                                          (((2, 3), a._type), ((4,), b._type)))
    assert meta_key([a, 3]) is None          # not keyed: the group runs uncached
    assert meta_key([[a, "x"]]) is None


def test_unkeyed_inputs_run_uncached():
    g = parse_ir("""graph(%a : Tensor, %n : int):
  %m : Any = prim::MetaGroup_0(%a, %n)
  return (%m)
with prim::MetaGroup_0 = graph(%a : Tensor, %n : int):
  %am : Any = prim::TensorMeta(%a)
  return (%am)""")
    (node,) = g.nodes()
    op = MetaGroupOp(node)
    op(rand(2), 1)
    op(rand(2), 1)
    assert op.misses == 2 and not op._seen


def test_only_a_meta_group_node():
    g = parse_ir("""graph(%a : Tensor):
  %n : Tensor = ember::neg(%a)
  return (%n)""")
    with pytest.raises(ValueError, match="prim::MetaGroup"):
        MetaGroupOp(next(iter(g.nodes())))
