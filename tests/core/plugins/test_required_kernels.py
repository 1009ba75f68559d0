"""The minimal kernel set of a backend (``validation.REQUIRED_KERNELS``): a backend with
only those kernels runs factories, printing, autograd and a Linear + MSE training step;
each one is needed; a backend lacking some registers with one warning naming every missing
kernel; a missing factory kernel raises a typed error, not ``KeyError: 'full'``."""
import types

import numpy as np
import pytest

import ember as E
from ember import cli
from ember.backends import array_api, registry
from ember.plugins import hookimpl, load_module, unload_module
from ember.plugins.validation import REQUIRED_KERNELS, missing_kernels
from ember.types import Backend

ALL = array_api.make_kernels(np)
REQUIRED = [k for group in REQUIRED_KERNELS.values() for k in group.kernels]
D = "minimal"


def factories():
    assert E.zeros(2, 3, device=D).sum().item() == 0.0
    E.ones(2, device=D), E.full((2,), 3.0, device=D), E.empty(2, device=D)
    assert E.arange(5, device=D).tolist() == [0, 1, 2, 3, 4]
    E.zeros_like(E.ones(2, device=D)), E.ones_like(E.ones(2, device=D))


def random():
    E.rand(2, device=D), E.randn(2, device=D), E.randint(0, 5, (3,), device=D)


def printing():
    x = E.tensor([[1.5, float("nan")], [2.0, 3.0]], device=D)
    assert repr(x) == ("tensor([[1.5000,    nan],\n        [2.0000, 3.0000]], "
                       "device='minimal')")
    assert x.tolist()[1] == [2.0, 3.0] and x.numpy().shape == (2, 2)


def autograd():
    w = E.tensor([1.0, 2.0, 3.0], device=D, requires_grad=True)
    (w * w + 2 * w).sum().backward()
    assert w.grad.tolist() == [4.0, 6.0, 8.0]


def training():
    E.manual_seed(0)
    lin = E.nn.Linear(4, 2, device=D)
    opt = E.optim.SGD(lin.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    x = E.tensor(rng.standard_normal((8, 4), np.float32), device=D)
    y = E.tensor(rng.standard_normal((8, 2), np.float32), device=D)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = E.nn.functional.mse_loss(lin(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


USES = {"factories": factories, "random": random, "autograd": autograd,
        "training": training}


def backend_module(kernels):
    mod = types.ModuleType("ember_t36_minimal")

    @hookimpl
    def ember_backends():
        return [Backend(name=D, xp=np, kernels=dict(kernels), type_prefix="Minimal",
                        array_type=np.ndarray, to_numpy=lambda a: a,
                        from_numpy=lambda a, i: a, make_rng=np.random.default_rng,
                        is_host=True)]
    mod.ember_backends = ember_backends
    return mod


@pytest.fixture
def minimal():
    """``minimal(kernels)`` loads backend 'minimal' with those kernels; unloaded after."""
    loaded = []

    def load(names):
        info = load_module(backend_module({k: ALL[k] for k in names}), name=D)
        assert info.error is None
        loaded.append(D)
        return info
    yield load
    for name in loaded:
        unload_module(name)


def test_the_cpu_backend_has_every_required_kernel():
    assert missing_kernels(registry.get_backend("cpu").kernels) == {}


def test_the_required_kernels_are_enough(minimal, recwarn):
    minimal(REQUIRED)
    assert not [w for w in recwarn if "lacks kernels" in str(w.message)]
    for use in (*USES.values(), printing):
        use()


@pytest.mark.parametrize("group, kernel", [(g, k) for g, grp in REQUIRED_KERNELS.items()
                                           for k in grp.kernels])
def test_each_required_kernel_is_needed(minimal, group, kernel):
    with pytest.warns(UserWarning, match=rf"backend 'minimal' of plugin 'minimal' lacks "
                                         rf"kernels ember needs: for .*: {kernel}\b"):
        minimal([k for k in REQUIRED if k != kernel])
    with pytest.raises(NotImplementedError, match=rf"^{kernel}: "):
        USES[group]()


def test_a_partial_backend_registers_with_one_warning_naming_every_missing_kernel(
        minimal, capsys):
    with pytest.warns(UserWarning) as rec:
        info = minimal(["full", "add", "t"])
    (warning,) = [w for w in rec if "lacks kernels" in str(w.message)]
    text = str(warning.message)
    assert ("for the factories (ember.zeros, ones, full, empty, arange, *_like): empty, "
            "arange; for random numbers (ember.rand, randn, randint; nn layers' init): rand, "
            "randn, randint; for backward() through elementwise ops and sums: mul, sum, "
            "expand; for a training step (nn.Linear, F.mse_loss, backward, optim.SGD): "
            "addmm, mm, sub, mean, div, copy_.") in text
    assert "lacks required kernels: empty, arange, rand" in info.registered[
        "ember_backends"][0]
    assert E.full((2,), 1.0, device=D).tolist() == [1.0, 1.0]   # registered all the same
    assert cli.main(["plugins"]) == 0
    assert "lacks required kernels: empty, arange" in capsys.readouterr().out


@pytest.mark.parametrize("call, op", [(lambda: E.zeros(2, device=D), "full"),
                                      (lambda: E.empty(2, device=D), "empty"),
                                      (lambda: E.randn(2, device=D), "randn"),
                                      (lambda: E.arange(3, device=D), "arange")])
def test_a_missing_factory_kernel_is_a_typed_error_naming_op_backend_and_way_out(
        minimal, call, op):
    with pytest.warns(UserWarning, match="lacks kernels"):
        minimal(["add"])
    with pytest.raises(NotImplementedError) as err:
        call()
    assert not isinstance(err.value, KeyError)
    assert str(err.value) == (
        f"{op}: backend 'minimal' has no kernel '{op}'; backends that have it: cpu; add "
        f"'{op}' to the kernel table of backend 'minimal' (docs/plugins.md, 'The minimal "
        f"kernel set'), or move the tensors to a backend that has it.")
    kernels = registry.get_backend(D).kernels
    assert op not in kernels and kernels.get(op) is None   # optional probes stay quiet
