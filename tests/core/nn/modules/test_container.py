"""Sequential, ModuleList, ModuleDict: naming, indexing, mutation, forward, repr."""
from collections import OrderedDict

import numpy as np
import pytest
from helpers import assert_close

import ember as E
from ember import nn
from ember.nn import Parameter


class Scale(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = Parameter(E.tensor([float(s)]))

    def forward(self, x):
        return x * self.s

    def extra_repr(self):
        return f"s={self.s.item()}"


def test_sequential_forward_and_names():
    seq = nn.Sequential(Scale(2), Scale(3), Scale(5))
    assert_close(seq(E.ones(2)), np.full(2, 30.0))
    assert list(seq.state_dict()) == ["0.s", "1.s", "2.s"]
    assert len(seq) == 3 and [m.s.item() for m in seq] == [2, 3, 5]


def test_sequential_ordered_dict():
    seq = nn.Sequential(OrderedDict([("a", Scale(2)), ("b", Scale(3))]))
    assert list(seq.state_dict()) == ["a.s", "b.s"]
    assert seq.a is seq[0] and seq[-1] is seq.b
    assert_close(seq(E.ones(1)), np.array([6.0]))


def test_sequential_indexing_and_slicing():
    mods = [Scale(i) for i in range(4)]
    seq = nn.Sequential(*mods)
    assert seq[1] is mods[1] and seq[-1] is mods[3]
    sub = seq[1:3]
    assert isinstance(sub, nn.Sequential) and list(sub) == mods[1:3]
    assert list(sub._modules) == ["1", "2"]  # a slice keeps the names, as PyTorch
    with pytest.raises(IndexError, match="out of range"):
        seq[4]
    seq[0] = Scale(9)
    assert seq[0].s.item() == 9 and list(seq._modules) == ["0", "1", "2", "3"]
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2"] and seq[1] is mods[2]


def test_sequential_mutation():
    seq = nn.Sequential(Scale(1))
    assert seq.append(Scale(2)) is seq
    seq.extend([Scale(3)])
    seq.insert(0, Scale(0))
    assert [m.s.item() for m in seq] == [0, 1, 2, 3]
    assert seq.pop(1).s.item() == 1 and len(seq) == 3
    both = seq + nn.Sequential(Scale(7))
    assert len(both) == 4 and both[3].s.item() == 7
    with pytest.raises(TypeError):
        seq.append(3)
    with pytest.raises(TypeError):
        nn.Sequential(Scale(1), lambda x: x)


def test_module_list():
    ml = nn.ModuleList([Scale(i) for i in range(3)])
    assert len(ml) == 3 and ml[2].s.item() == 2 and ml[-1] is ml[2]
    assert len(list(ml.parameters())) == 3
    assert isinstance(ml[:2], nn.ModuleList) and len(ml[:2]) == 2
    ml.append(Scale(3))
    ml += [Scale(4)]
    ml.insert(1, Scale(10))
    assert [m.s.item() for m in ml] == [0, 10, 1, 2, 3, 4]
    del ml[0]
    assert list(ml._modules) == [str(i) for i in range(5)]
    ml[0] = Scale(8)
    assert ml[0].s.item() == 8
    with pytest.raises(NotImplementedError):
        ml(E.ones(1))
    with pytest.raises(IndexError):
        ml[10]
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert "0" not in dir(ml)


def test_module_list_repr_folds_runs():
    ml = nn.ModuleList([Scale(1), Scale(1), Scale(2), Scale(1)])
    assert repr(ml) == ("ModuleList(\n  (0-1): 2 x Scale(s=1.0)\n  (2): Scale(s=2.0)\n"
                        "  (3): Scale(s=1.0)\n)")


def test_module_dict():
    md = nn.ModuleDict({"a": Scale(1), "b": Scale(2)})
    assert list(md) == ["a", "b"] and "a" in md and len(md) == 2
    md["c"] = Scale(3)
    md.update([("d", Scale(4))])
    assert list(md.keys()) == ["a", "b", "c", "d"]
    assert [m.s.item() for m in md.values()] == [1, 2, 3, 4]
    assert md.pop("a").s.item() == 1
    del md["b"]
    assert [k for k, _ in md.items()] == ["c", "d"]
    assert list(md.state_dict()) == ["c.s", "d.s"]
    with pytest.raises(KeyError):
        md["zz"]
    with pytest.raises(KeyError):
        md["a.b"] = Scale(0)
    md.clear()
    assert len(md) == 0


def test_nested_containers_state_dict_round_trip():
    def build():
        return nn.Sequential(nn.ModuleDict({"x": nn.ModuleList([Scale(1), Scale(2)])}),
                             Scale(3))

    a, b = build(), build()
    with E.no_grad():
        a[0]["x"][1].s.fill_(42.0)
    assert list(a.state_dict()) == ["0.x.0.s", "0.x.1.s", "1.s"]
    b.load_state_dict(a.state_dict())
    assert b[0]["x"][1].s.item() == 42.0
