"""ember.nn.Module machinery, tested with toy modules (no layers from other files)."""
import copy
from collections import OrderedDict

import numpy as np
import pytest
from helpers import assert_close, to_np

import ember as E
from ember import nn
from ember.nn import Parameter


class Affine(nn.Module):
    """y = x * scale + shift, with a step-count buffer and a scratch buffer."""

    def __init__(self, n=3):
        super().__init__()
        self.scale = Parameter(E.ones(n))
        self.shift = Parameter(E.zeros(n))
        self.register_buffer("steps", E.tensor(0))
        self.register_buffer("scratch", E.zeros(n), persistent=False)

    def forward(self, x):
        return x * self.scale + self.shift

    def extra_repr(self):
        return f"n={self.scale.shape[0]}"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Affine()
        self.body = nn.Sequential(Affine(), Affine())
        self.w = Parameter(E.full((3,), 2.0))

    def forward(self, x):
        return self.body(self.first(x)) * self.w


def test_registration_and_lookup():
    m = Affine()
    assert list(m._parameters) == ["scale", "shift"]
    assert list(m._buffers) == ["steps", "scratch"]
    assert m.scale is m._parameters["scale"] and "scale" not in m.__dict__
    m.plain = 5
    assert m.plain == 5 and "plain" not in m._parameters
    m.child = Affine(2)
    assert list(m._modules) == ["child"]
    with pytest.raises(AttributeError, match="'Affine' object has no attribute 'nope'"):
        m.nope


def test_named_members_prefixes_and_order():
    n = Net()
    assert [k for k, _ in n.named_parameters()] == [
        "w", "first.scale", "first.shift", "body.0.scale", "body.0.shift", "body.1.scale",
        "body.1.shift"]
    assert [k for k, _ in n.named_parameters(prefix="model", recurse=False)] == ["model.w"]
    assert [k for k, _ in n.named_buffers()][:2] == ["first.steps", "first.scratch"]
    assert [k for k, _ in n.named_children()] == ["first", "body"]
    assert [k for k, _ in n.named_modules()] == ["", "first", "body", "body.0", "body.1"]
    assert len(list(n.parameters())) == 7 and len(list(n.buffers())) == 6
    assert list(n.children())[0] is n.first and list(n.modules())[0] is n


def test_shared_modules_and_parameters_deduplicated():
    n = Net()
    n.again = n.first  # the same module under two names
    assert [k for k, _ in n.named_modules()].count("again") == 0
    assert len(list(n.parameters())) == 7
    assert len(list(n.named_parameters(remove_duplicate=False))) == 9
    n.body[1].scale = n.first.scale  # a tied parameter
    assert len(list(n.parameters())) == 6
    # state_dict keeps every name, like PyTorch
    assert "again.scale" in n.state_dict()


def test_setattr_rules():
    m = Affine()
    with pytest.raises(TypeError, match="cannot assign .* as parameter 'scale'"):
        m.scale = E.ones(3)
    m.scale = None
    assert m.scale is None and "scale" in m._parameters
    assert [k for k, _ in m.named_parameters()] == ["shift"]
    m.steps = E.tensor(5)  # a buffer takes any tensor
    assert m.steps.item() == 5 and "steps" in m._buffers
    with pytest.raises(TypeError, match="as buffer 'steps'"):
        m.steps = 3
    m.child = Affine()
    with pytest.raises(TypeError, match="as child module 'child'"):
        m.child = 3
    m.child = None
    assert m.child is None and list(m.children()) == []
    # a parameter replaces a plain attribute of the same name
    m.extra = 1
    m.extra = Parameter(E.ones(1))
    assert "extra" not in m.__dict__ and "extra" in m._parameters


def test_register_errors():
    m = Affine()
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("scale", E.ones(1))
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match="empty string"):
        m.register_buffer("", E.ones(1))
    with pytest.raises(TypeError, match="should be a string"):
        m.add_module(3, Affine())
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(TypeError, match="required"):
        m.register_parameter("p", E.ones(1))
    with pytest.raises(ValueError, match="non-leaf"):
        m.register_parameter("p", _non_leaf_param())

    class Early(nn.Module):
        def __init__(self):
            self.w = Parameter(E.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def _non_leaf_param():
    p = Parameter(E.ones(2))
    q = p * 2
    q.__class__ = Parameter  # a Parameter that is not a leaf (PyTorch rejects it too)
    return q


def test_delattr_and_dir():
    m = Affine()
    m.child = Affine()
    assert {"scale", "steps", "child", "forward"} <= set(dir(m))
    del m.scale, m.steps, m.child
    assert "scale" not in m._parameters and "steps" not in m._buffers and not m._modules
    m.x = 1
    del m.x
    with pytest.raises(AttributeError):
        m.x


def test_forward_call_and_missing_forward():
    n = Net()
    x = E.tensor([1.0, 2.0, 3.0])
    assert_close(n(x), np.array([2.0, 4.0, 6.0]))
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(x)


def test_gradients_flow_to_parameters():
    n = Net()
    x = E.tensor([1.0, -1.0, 2.0])
    n(x).sum().backward()
    assert_close(n.w.grad, to_np(x))
    assert_close(n.first.shift.grad, np.full(3, 2.0))
    n.zero_grad()
    assert all(p.grad is None for p in n.parameters())
    n(x).sum().backward()
    n.zero_grad(set_to_none=False)
    assert all(to_np(p.grad).sum() == 0 for p in n.parameters())


def test_train_eval_propagate():
    n = Net()
    assert n.training and n.body[1].training
    assert n.eval() is n
    assert not n.training and not n.body[0].training and not n.first.training
    n.train()
    assert all(m.training for m in n.modules())
    n.body.train(False)
    assert n.training and not n.body[1].training
    with pytest.raises(ValueError, match="boolean"):
        n.train("yes")


def test_requires_grad_and_apply():
    n = Net()
    n.requires_grad_(False)
    assert not any(p.requires_grad for p in n.parameters())
    seen = []
    n.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Affine", "Affine", "Affine", "Sequential", "Net"]


def test_state_dict_keys_values_and_detached():
    n = Net()
    sd = n.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["w", "first.scale", "first.shift", "first.steps", "body.0.scale",
                        "body.0.shift", "body.0.steps", "body.1.scale", "body.1.shift",
                        "body.1.steps"]  # non-persistent "scratch" buffers left out
    assert not sd["w"].requires_grad and type(sd["w"]) is E.Tensor
    with E.no_grad():
        n.w.fill_(7.0)
    assert to_np(sd["w"]).tolist() == [7.0] * 3  # shares memory
    kv = n.state_dict(keep_vars=True)
    assert kv["w"] is n.w


def test_load_state_dict_round_trip_in_place():
    src, dst = Net(), Net()
    with E.no_grad():
        for i, p in enumerate(src.parameters()):
            p.fill_(float(i))
    src.first.steps.fill_(4)
    w_before = dst.w
    res = dst.load_state_dict(src.state_dict())
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == "<All keys matched successfully>"
    assert dst.w is w_before and dst.w.requires_grad and dst.w.is_leaf
    for (k, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        np.testing.assert_array_equal(to_np(a), to_np(b), err_msg=k)
    assert dst.first.steps.item() == 4 and dst.first.steps.dtype is E.int64


def test_load_state_dict_strict_errors():
    n = Net()
    sd = n.state_dict()
    del sd["first.shift"]
    sd["body.2.scale"] = E.ones(3)
    sd["bogus"] = E.ones(1)
    sd["w"] = E.ones(4)
    with pytest.raises(RuntimeError) as e:
        n.load_state_dict(sd)
    assert str(e.value) == (
        "Error(s) in loading state_dict for Net:\n"
        '\tMissing key(s) in state_dict: "first.shift". \n'
        '\tUnexpected key(s) in state_dict: "bogus", "body.2.scale". \n'
        "\tsize mismatch for w: copying a param with shape ember.Size([4]) from checkpoint, "
        "the shape in current model is ember.Size([3]).")


def test_load_state_dict_non_strict():
    n = Net()
    sd = {"w": E.full((3,), 5.0), "extra": E.ones(1)}
    res = n.load_state_dict(sd, strict=False)
    assert res.unexpected_keys == ["extra"]
    assert "first.scale" in res.missing_keys and len(res.missing_keys) == 9
    assert to_np(n.w).tolist() == [5.0] * 3
    with pytest.raises(RuntimeError, match="size mismatch"):
        n.load_state_dict({"w": E.ones(2)}, strict=False)
    with pytest.raises(TypeError, match="dict-like"):
        n.load_state_dict([("w", E.ones(3))])


def test_load_state_dict_converts_dtype_and_assign():
    n = Net()
    sd = {k: v.double() for k, v in n.state_dict().items()}
    n.load_state_dict(sd)
    assert n.w.dtype is E.float32  # copied into the existing tensor
    n.load_state_dict(sd, assign=True)
    assert n.w.dtype is E.float64 and type(n.w) is Parameter and n.w.requires_grad


def test_to_dtype_in_place_keeps_parameter_objects():
    n = Net()
    params = list(n.parameters())
    n(E.ones(3)).sum().backward()
    assert n.to(E.float64) is n
    assert [p is q for p, q in zip(params, n.parameters())] == [True] * 7
    assert all(p.dtype is E.float64 and type(p) is Parameter for p in n.parameters())
    assert n.w.grad.dtype is E.float64
    assert n.first.steps.dtype is E.int64  # integer buffers untouched
    assert n.first.scratch.dtype is E.float64
    out = n(E.ones(3, dtype=E.float64))
    assert out.dtype is E.float64
    out.sum().backward()
    n.float()
    assert n.w.dtype is E.float32 and n.first.scratch.dtype is E.float32
    n.double()
    assert n.body[0].shift.dtype is E.float64
    n.to(device="cpu", dtype=E.float32)
    assert n.w.dtype is E.float32 and n.w.device.type == "cpu"
    n.to(E.zeros(1, dtype=E.float64))
    assert n.w.dtype is E.float64
    with pytest.raises(TypeError, match="floating point"):
        n.to(E.int64)


def test_forward_hooks():
    m = Affine()
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: calls.append(("pre", len(args))))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(("post", mod is m)))
    m(E.ones(3))
    assert calls == [("pre", 1), ("post", True)]
    h1.remove()
    h2.remove()
    h2.remove()  # idempotent
    m(E.ones(3))
    assert len(calls) == 2
    # a pre-hook can replace the input, a forward hook the output
    with m.register_forward_pre_hook(lambda mod, args: args[0] * 2):
        assert_close(m(E.ones(3)), np.full(3, 2.0))
    with m.register_forward_hook(lambda mod, args, out: out + 10):
        assert_close(m(E.ones(3)), np.full(3, 11.0))
    assert not m._forward_hooks and not m._forward_pre_hooks


def test_hook_order_prepend_and_kwargs():
    m = Affine()
    order = []
    m.register_forward_hook(lambda *a: order.append("a"))
    m.register_forward_hook(lambda *a: order.append("b"), prepend=True)
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, kwargs), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: order.append(sorted(kwargs)),
                            with_kwargs=True)
    m(x=E.ones(3))
    assert order == ["b", "a", ["x"]]


def test_repr_nested_format():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Affine(2)
            self.act = nn.Module()

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = Affine(4)
            self.blocks = nn.Sequential(Block(), Affine(5))
            self.head = nn.ModuleList([Affine(1), Affine(1)])
            self.dict = nn.ModuleDict({"a": Affine(2)})

    assert repr(Model()) == """Model(
  (stem): Affine(n=4)
  (blocks): Sequential(
    (0): Block(
      (inner): Affine(n=2)
      (act): Module()
    )
    (1): Affine(n=5)
  )
  (head): ModuleList(
    (0-1): 2 x Affine(n=1)
  )
  (dict): ModuleDict(
    (a): Affine(n=2)
  )
)"""


def test_multiline_extra_repr():
    class Multi(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    assert repr(Multi()) == "Multi(\n  a=1\n  b=2\n)"


def test_get_submodule():
    n = Net()
    assert n.get_submodule("body.1") is n.body[1]
    assert n.get_submodule("") is n
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        n.get_submodule("body.nope")


def test_deepcopy_module():
    n = Net()
    n.tied = n.first
    c = copy.deepcopy(n)
    assert c.w is not n.w and type(c.w) is Parameter and c.tied is c.first
    with E.no_grad():
        c.w.fill_(0)
    assert to_np(n.w).tolist() == [2.0] * 3
