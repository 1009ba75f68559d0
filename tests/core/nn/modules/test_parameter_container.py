"""ParameterList and ParameterDict: registration (parameters, named_parameters,
state_dict keys), list and dict behaviour, wrapping of plain tensors, errors, repr."""
from collections import OrderedDict

import numpy as np
import pytest

import ember as E
from ember import nn


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.plist = nn.ParameterList([E.zeros(2), nn.Parameter(E.ones(3))])
        self.pdict = nn.ParameterDict({"w": E.ones(2, 2)})


def test_registration_and_state_dict_keys():
    m = Holder()
    assert [n for n, _ in m.named_parameters()] == ["plist.0", "plist.1", "pdict.w"]
    assert list(m.state_dict()) == ["plist.0", "plist.1", "pdict.w"]
    assert len(list(m.parameters())) == 3
    assert all(type(p) is nn.Parameter and p.requires_grad for p in m.parameters())


def test_state_dict_round_trip():
    a, b = Holder(), Holder()
    with E.no_grad():
        a.plist[0].fill_(5.0)
        a.pdict["w"].fill_(7.0)
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(b.plist[0].detach().numpy(), [5.0, 5.0])
    np.testing.assert_array_equal(b.pdict["w"].detach().numpy(), np.full((2, 2), 7.0))


def test_parameter_list_behaviour():
    p = nn.Parameter(E.ones(1))
    pl = nn.ParameterList()
    assert len(pl) == 0
    pl.append(E.zeros(2)).extend([p, E.ones(4)])
    pl += [E.ones(5)]
    assert len(pl) == 4 and pl[1] is p and pl[-1].shape == (5,)
    assert [q.shape for q in pl] == [(2,), (1,), (4,), (5,)]
    assert type(pl[0]) is nn.Parameter
    pl[0] = E.full((3,), 2.0)
    assert type(pl[0]) is nn.Parameter and pl[0].shape == (3,)
    sliced = pl[1:3]
    assert isinstance(sliced, nn.ParameterList) and sliced[0] is p and len(sliced) == 2
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2", "3"]
    pl.append("not a tensor")  # kept as a plain attribute, as PyTorch does
    assert pl[4] == "not a tensor" and len(list(pl.parameters())) == 4


def test_parameter_list_errors():
    pl = nn.ParameterList([E.zeros(1)])
    with pytest.raises(IndexError, match="out of range"):
        pl[1]
    with pytest.raises(TypeError, match="should be called with an iterable, but got Tensor"):
        pl.extend(E.zeros(2))
    with pytest.raises(RuntimeError, match="should not be called"):
        pl()
    with pytest.raises(TypeError, match="cannot assign 'int' as parameter"):
        pl[0] = 3
    assert len(pl) == 1 and pl[0].shape == (1,)


def test_parameter_dict_behaviour():
    pd = nn.ParameterDict({"b": E.zeros(2), "a": E.ones(3)})
    assert list(pd) == ["a", "b"]  # a plain dict is added in sorted order (PyTorch's rule)
    pd2 = nn.ParameterDict(OrderedDict([("b", E.zeros(1)), ("a", E.zeros(1))]))
    assert list(pd2.keys()) == ["b", "a"]
    pd["c"] = E.ones(1)
    assert type(pd["c"]) is nn.Parameter and "c" in pd and len(pd) == 3
    assert [k for k, _ in pd.items()] == ["a", "b", "c"]
    assert pd.get("zz") is None and pd.setdefault("d", E.zeros(2)).shape == (2,)
    assert pd.pop("d").shape == (2,) and "d" not in pd
    del pd["a"]
    assert [n for n, _ in pd.named_parameters()] == ["b", "c"]
    assert pd.popitem()[0] == "c" and list(pd) == ["b"]
    merged = pd | {"e": E.zeros(1)}
    assert list(merged) == ["b", "e"] and merged["b"] is pd["b"]
    pd.update([("f", E.zeros(1))])
    assert list(pd) == ["b", "f"]
    pd.clear()
    assert len(pd) == 0 and list(pd.parameters()) == []


def test_parameter_dict_errors_leave_it_unchanged():
    pd = nn.ParameterDict({"w": E.zeros(1)})
    with pytest.raises(TypeError, match="not a string"):
        pd[1] = E.zeros(1)
    with pytest.raises(KeyError, match="contain"):
        pd["a.b"] = E.zeros(1)
    with pytest.raises(KeyError):
        pd["missing"]
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        pd.update([("a", E.zeros(1), 0)])
    with pytest.raises(TypeError, match="iterable of key/value pairs"):
        pd.update(3)
    with pytest.raises(RuntimeError, match="should not be called"):
        pd()
    assert list(pd) == ["w"]


def test_repr():
    pl = nn.ParameterList([E.zeros(2, 3), 3])
    assert repr(pl) == ("ParameterList(\n    (0): Parameter containing: [ember.float32 of size "
                        "2x3]\n    (1): Object of type: int\n)")
    # one entry prints on one line, as PyTorch's Module.__repr__ does it
    pd = nn.ParameterDict({"w": E.zeros(4, dtype=E.float64)})
    assert repr(pd) == "ParameterDict(  (w): Parameter containing: [ember.float64 of size 4])"
    assert repr(nn.ParameterList()) == "ParameterList()"
