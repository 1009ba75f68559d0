"""Module.get_parameter / get_buffer (_lookup.py), get_extra_state / set_extra_state in
state_dict (_state.py), and bfloat16() / type() (_convert.py)."""
import pickle

import pytest

import ember as E
from ember import nn


def _net():
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    net.register_buffer("scale", E.ones(1), persistent=False)
    return net


def test_get_parameter_and_get_buffer_follow_dotted_paths():
    net = _net()
    assert net.get_parameter("0.weight") is net[0].weight
    assert net.get_buffer("1.running_mean") is net[1].running_mean
    assert net.get_buffer("scale") is net.scale  # non-persistent buffers too


@pytest.mark.parametrize("call,msg", [
    (lambda n: n.get_parameter("0.nope"), "Linear has no attribute `nope`"),
    (lambda n: n.get_parameter("5.weight"), "Sequential has no attribute `5`"),
    (lambda n: n.get_parameter("scale"), "`scale` is not an nn.Parameter"),
    (lambda n: n.get_parameter("0.training"), "`training` is not an nn.Parameter"),
    (lambda n: n.get_parameter(""), "Sequential has no attribute ``"),
    (lambda n: n.get_buffer("0.weight"), "`weight` is not a buffer"),
    (lambda n: n.get_buffer("1.nope"), "BatchNorm1d has no attribute `nope`"),
])
def test_lookup_errors_are_pytorchs(call, msg):
    with pytest.raises(AttributeError, match=msg):
        call(_net())


class Counter(nn.Module):
    """A module with extra (non-tensor) state."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(E.zeros(2))
        self.calls = 0

    def get_extra_state(self):
        return {"calls": self.calls}

    def set_extra_state(self, state):
        self.calls = state["calls"]


def test_extra_state_round_trips_through_state_dict():
    src = nn.Sequential(Counter(), nn.Linear(2, 2))
    src[0].calls = 7
    sd = src.state_dict()
    assert list(sd) == ["0.w", "0._extra_state", "1.weight", "1.bias"]
    assert sd["0._extra_state"] == {"calls": 7}
    dst = nn.Sequential(Counter(), nn.Linear(2, 2))
    assert dst.load_state_dict(pickle.loads(pickle.dumps(sd))) is not None
    assert dst[0].calls == 7
    del sd["0._extra_state"]
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "0._extra_state"'):
        dst.load_state_dict(sd)
    assert dst.load_state_dict(sd, strict=False).missing_keys == ["0._extra_state"]
    plain = nn.Sequential(nn.Linear(2, 2))
    assert "0._extra_state" not in plain.state_dict()
    with pytest.raises(RuntimeError, match=r'Unexpected key\(s\) in state_dict: '
                                           r'"0._extra_state"'):
        plain.load_state_dict({**plain.state_dict(), "0._extra_state": 1})
    with pytest.raises(RuntimeError, match="override get_extra_state"):
        plain.get_extra_state()


def test_bfloat16_and_type_convert_in_place():
    net = _net()
    weight = net[0].weight
    assert net.bfloat16() is net and weight.dtype is E.bfloat16 and net[0].weight is weight
    assert net[1].num_batches_tracked.dtype is E.int64  # integer buffers keep theirs
    assert net.type(E.float64) is net and weight.dtype is E.float64
    assert net[1].num_batches_tracked.dtype is E.float64  # type() converts every tensor
    assert net.type("float32")[1].running_var.dtype is E.float32
    with pytest.raises(RuntimeError, match="must stay floating point"):
        net.type(E.int32)
    assert weight.dtype is E.float32  # unchanged after the error
    net.requires_grad_(False)
    assert net.type(E.int32)[0].weight.dtype is E.int32
    with pytest.raises(TypeError, match="expected an ember dtype"):
        net.type("torch.nope")
