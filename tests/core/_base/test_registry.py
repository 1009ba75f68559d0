"""``ember._base.registry.Registry``: one hook's table, in batches by owner. Registering
and unregistering an owner moves exactly its items; a deferred batch is listed on first
read only; ``reset`` keeps ember's own items; every change moves ``generation()``."""
import pytest

from ember._base import registry as R


def make(**callbacks):
    return R.Registry("test_hook", **callbacks)


def test_owners_batches_in_order_and_exact_unregister():
    t = make()
    a, b, c = object(), object(), object()
    t.register([a, b], "first")
    t.register([c], "second")
    assert t.owners() == ["first", "second"]
    assert t.entries(load=False) == [("first", a), ("first", b), ("second", c)]
    assert t.unregister("first") == [a, b]
    assert t.items(load=False) == [c]
    assert t.unregister("first") == []   # again: nothing, no error


def test_register_refuses_a_second_batch_and_a_bad_owner():
    t = make()
    t.register([1], "p")
    with pytest.raises(ValueError, match=r"owner 'p' already registered.*unregister\('p'\)"):
        t.register([2], "p")
    for bad in ("", None, 3):
        with pytest.raises(TypeError, match="expected a non-empty str owner"):
            t.register([2], bad)
    assert t.items(load=False) == [1]


def test_a_deferred_batch_is_listed_on_first_read_only():
    calls = []

    def listing():
        calls.append(1)
        return ["x", "y"]
    t = make()
    t.register(listing, R.BUILTIN)
    assert calls == [] and t.plugin_items() == []   # the plugins' view leaves it alone
    assert t.items(load=False) == ["x", "y"] == t.items(load=False)
    assert calls == [1]


def test_reset_keeps_embers_own_items():
    t = make()
    t.register(["builtin"], R.BUILTIN)
    t.register(["plugged"], "plugin")
    t.reset()
    assert t.entries(load=False) == [(R.BUILTIN, "builtin")]


def test_on_add_failure_leaves_the_batch_out():
    added, removed = [], []

    def on_add(item):
        if item == "bad":
            raise RuntimeError("refused")
        added.append(item)
    t = make(on_add=on_add, on_remove=removed.append)
    with pytest.raises(RuntimeError, match="refused"):
        t.register(["ok", "bad"], "p")
    assert t.owners() == [] and added == ["ok"] and removed == ["ok"]


def test_every_change_moves_the_generation():
    t = make()
    seen = [R.generation()]
    t.register([1], "p")
    seen.append(R.generation())
    t.unregister("p")
    seen.append(R.generation())
    assert seen[0] < seen[1] < seen[2] and t.version == seen[2]


def test_replacing_plugin_items_restores_their_owners():
    t = make()
    t.register(["b"], R.BUILTIN)
    t.register(["p1"], "one")
    t.register(["p2"], "two")
    saved = t.plugin_batches()
    assert saved == ["p1", "p2"]
    t.replace_plugin_items(["patched"])
    assert t.entries(load=False) == [(R.BUILTIN, "b"), ("(set directly)", "patched")]
    t.replace_plugin_items(saved)
    assert t.owners() == [R.BUILTIN, "one", "two"]
    assert t.unregister("one") == ["p1"]


def test_table_gives_one_table_per_hook():
    assert R.table("ember_jit_passes") is R.table("ember_jit_passes")
    assert R.table("ember_fusers") is not R.table("ember_jit_passes")


def test_bump_generation_moves_the_one_counter():
    before = R.generation()
    R.bump_generation()
    assert R.generation() == before + 1


def test_a_table_that_indexes_its_items_refuses_a_deferred_batch():
    seen = []
    t = R.Registry("test_indexed", on_add=seen.append)
    with pytest.raises(TypeError, match="must be a list"):
        t.register(lambda: [1], "someone")
    assert t.owners() == [] and seen == []
