"""PyTorch's optimizer switches ``foreach`` / ``capturable`` / ``differentiable`` / ``fused``
and a Tensor ``lr`` (issue 35, class 15): accepted with PyTorch's defaults, kept in the
param groups under PyTorch's keys, checked as PyTorch checks them, and meaning what they
mean there. Reference values were recorded from torch 2.13 (CPU, float64)."""
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
import ember.optim as eo

# torch.optim.X([p]).state_dict()["param_groups"][0].keys(), in order (torch 2.13).
TORCH_GROUP_KEYS = {
    "Adadelta": ["lr", "rho", "eps", "weight_decay", "maximize", "capturable", "foreach",
                 "differentiable", "params"],
    "Adafactor": ["lr", "beta2_decay", "eps", "d", "weight_decay", "foreach", "maximize",
                  "params"],
    "Adagrad": ["lr", "lr_decay", "eps", "weight_decay", "initial_accumulator_value",
                "foreach", "maximize", "differentiable", "fused", "params"],
    "Adam": ["lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach",
             "capturable", "differentiable", "fused", "decoupled_weight_decay", "params"],
    "Adamax": ["lr", "betas", "eps", "weight_decay", "foreach", "maximize", "differentiable",
               "capturable", "params"],
    "AdamW": ["lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach",
              "capturable", "differentiable", "fused", "decoupled_weight_decay", "params"],
    "ASGD": ["lr", "lambd", "alpha", "t0", "weight_decay", "foreach", "maximize",
             "differentiable", "capturable", "params"],
    "LBFGS": ["lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change",
              "history_size", "line_search_fn", "params"],
    "NAdam": ["lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay",
              "maximize", "foreach", "capturable", "differentiable", "params"],
    "RAdam": ["lr", "betas", "eps", "weight_decay", "maximize", "foreach", "capturable",
              "decoupled_weight_decay", "differentiable", "params"],
    "RMSprop": ["lr", "momentum", "alpha", "eps", "centered", "weight_decay", "capturable",
                "foreach", "maximize", "differentiable", "params"],
    "Rprop": ["lr", "etas", "step_sizes", "foreach", "maximize", "differentiable",
              "capturable", "params"],
    "SGD": ["lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize", "foreach",
            "differentiable", "fused", "params"],
}
FLAG_DEFAULTS = {"foreach": None, "capturable": False, "differentiable": False, "fused": None}
STEPPED = sorted(set(TORCH_GROUP_KEYS) - {"LBFGS"})
FUSED = ["Adagrad", "Adam", "AdamW", "SGD"]


def _param(values=(1.0, -2.0, 3.0)):
    return E.tensor(list(values), dtype=E.float64, requires_grad=True)


def _trajectory(name, lr, steps=3, **kw):
    """Parameter values after each of ``steps`` steps on f(p) = sum(p**2 * c) + sum(p)."""
    p = _param()
    opt = getattr(eo, name)([p], lr=lr, **kw)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        (p * p * E.tensor([1.0, 0.5, 2.0], dtype=E.float64) + p).sum().backward()
        opt.step()
        out.append(p.detach().numpy().copy())
    return np.stack(out)


@pytest.mark.parametrize("name", sorted(TORCH_GROUP_KEYS))
def test_param_group_keys_are_torchs(name):
    opt = getattr(eo, name)([_param()])
    assert list(opt.state_dict()["param_groups"][0]) == TORCH_GROUP_KEYS[name]
    for key, default in FLAG_DEFAULTS.items():
        if key in TORCH_GROUP_KEYS[name]:
            assert opt.defaults[key] is default
            assert opt.param_groups[0][key] is default


@pytest.mark.parametrize("name", STEPPED)
def test_switches_are_hints_with_the_same_result(name):
    keys = TORCH_GROUP_KEYS[name]
    kw = {k: True for k in ("foreach", "capturable") if k in keys}
    base = _trajectory(name, 0.05)
    np.testing.assert_allclose(_trajectory(name, 0.05, **kw), base, rtol=1e-12, atol=0)
    assert getattr(eo, name)([_param()], **kw).param_groups[0]["foreach"] is True
    if "fused" in keys:
        np.testing.assert_allclose(_trajectory(name, 0.05, fused=True), base, rtol=1e-12,
                                   atol=1e-15)


@pytest.mark.parametrize("name", FUSED)
def test_fused_refuses_foreach_and_differentiable_as_torch(name):
    cls = getattr(eo, name)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        cls([_param()], fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        cls([_param()], fused=True, differentiable=True)
    cls([_param()], fused=False, foreach=True, differentiable=True)   # no error


@pytest.mark.parametrize("name", FUSED)
def test_fused_refuses_a_parameter_that_is_not_floating_point(name):
    p = E.tensor([1, 2])   # torch: "... floating point Tensors ... but torch.int64 and cpu"
    p.grad = E.ones_like(p)
    opt = getattr(eo, name)([p], lr=0.1, fused=True)
    with pytest.raises(RuntimeError, match="requires all the params to be floating point"):
        opt.step()


@pytest.mark.parametrize("name", sorted(TORCH_GROUP_KEYS))
def test_tensor_lr_is_accepted_and_kept(name):
    lr = E.tensor(0.05, dtype=E.float64)
    opt = getattr(eo, name)([_param()], lr=lr)
    assert opt.param_groups[0]["lr"] is lr
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        getattr(eo, name)([_param()], lr=E.tensor([0.1, 0.2]))
    with pytest.raises(ValueError, match="Invalid learning rate"):
        getattr(eo, name)([_param()], lr=E.tensor(-0.1))


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(STEPPED), lr=st.floats(1e-4, 0.5))
def test_tensor_lr_steps_as_the_float(name, lr):
    np.testing.assert_allclose(_trajectory(name, E.tensor(lr, dtype=E.float64)),
                               _trajectory(name, lr), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", STEPPED)
def test_tensor_lr_changed_in_place_takes_effect(name):
    lr = E.tensor(0.05, dtype=E.float64)
    p = _param()
    opt = getattr(eo, name)([p], lr=lr)
    p.grad = E.ones_like(p)
    opt.step()
    lr.fill_(0.0)   # torch's way to change a tensor lr: later steps read it
    if name == "Rprop":   # its step sizes are seeded from lr on the first step only
        return
    if name == "ASGD":   # a step uses the eta the previous step computed from lr
        p.grad = E.ones_like(p)
        opt.step()
    before = p.detach().numpy().copy()
    p.grad = E.ones_like(p)
    opt.step()
    np.testing.assert_array_equal(p.detach().numpy(), before)


def test_lbfgs_tensor_lr_steps_as_the_float():
    def run(lr):
        p = _param()
        opt = eo.LBFGS([p], lr=lr, max_iter=5)

        def closure():
            opt.zero_grad()
            loss = ((p - 1.5) ** 2).sum()
            loss.backward()
            return loss
        opt.step(closure)
        return p.detach().numpy()
    np.testing.assert_allclose(run(E.tensor(0.3, dtype=E.float64)), run(0.3), rtol=1e-12)


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_tensor_lr_with_foreach_needs_capturable(name):
    cls = getattr(eo, name)
    with pytest.raises(ValueError, match="lr as a Tensor is not supported for capturable"):
        cls([_param()], lr=E.tensor(0.01), foreach=True)
    cls([_param()], lr=E.tensor(0.01), foreach=True, capturable=True)


# (optimizer, options, [p after one step, dL/dw, dL/dg]) recorded from torch 2.13 (with
# torch.set_default_dtype(torch.float64), so its step scalars are float64 as ember's) for
# p = w * 1 (w = [1, -2, 3]), p.grad = g * 1 (g = [0.5, 0.25, -1]), one step with lr=0.1
# and differentiable=True, then L = sum(p * [1, 2, 3]).backward().
TORCH_DIFFERENTIABLE = [
    ("SGD", {}, [[0.95, -2.025, 3.1], [1.0, 2.0, 3.0], [-0.1, -0.2, -0.30000000000000004]]),
    ("SGD", {"momentum": 0.9, "nesterov": True},
     [[0.905, -2.0475, 3.19], [1.0, 2.0, 3.0], [-0.1, -0.2, -0.30000000000000004]]),
    ("Adam", {}, [[0.900000002, -2.099999996, 3.099999999], [1.0, 2.0, 3.0],
                  [-3.999999831361123e-09, -3.199999720759905e-08, -2.999999804131903e-09]]),
    ("AdamW", {"amsgrad": True},
     [[0.899000002, -2.097999996, 3.096999999], [0.999, 1.998, 2.997],
      [-3.999999831361123e-09, -3.199999720759905e-08, -2.999999804131903e-09]]),
    ("RMSprop", {"centered": True, "momentum": 0.5},
     [[-0.0050376132390502655, -3.00503741121897, 4.005037714249121], [1.0, 2.0, 3.0],
      [-4.040402417082589e-07, -3.232320633372865e-06, -3.0303024223243824e-07]]),
    ("RMSprop", {}, [[1.9999996048181146e-07, -2.9999996000001596, 3.9999999000000095],
                     [1.0, 2.0, 3.0],
                     [-3.999998401393867e-07, -3.199997441249991e-06, -2.999999400010722e-07]]),
    ("Adagrad", {}, [[0.90000000002, -2.09999999996, 3.09999999999], [1.0, 2.0, 3.0],
                     [-4.000000330961484e-11, -3.200000264769187e-10, -3.000000248221113e-11]]),
    ("Adadelta", {}, [[0.9996837785583488, -2.000316202470831, 3.0003162261848897],
                      [1.0, 2.0, 3.0],
                      [-2.529670346394959e-08, -4.0467441475740273e-07, -9.48669067965275e-09]]),
    ("Adamax", {}, [[0.900000002, -2.099999996, 3.099999999], [1.0, 2.0, 3.0],
                    [-3.9999998591166985e-09, -3.1999997318621354e-08,
                     -2.999999804131903e-09]]),
    ("NAdam", {}, [[0.8943548242773647, -2.105645173609732, 3.105645176779087],
                   [1.0, 2.0, 3.0],
                   [-4.2258069734429915e-09, -3.380645402506488e-08, -3.1693551914846463e-09]]),
    ("RAdam", {}, [[0.95, -2.025, 3.1], [1.0, 2.0, 3.0], [-0.1, -0.2, -0.30000000000000004]]),
    ("ASGD", {}, [[0.94999, -2.0249800000000002, 3.0999700000000003],
                  [0.99999, 1.99998, 2.9999700000000002], [-0.1, -0.2, -0.30000000000000004]]),
    ("Rprop", {}, [[0.9, -2.1, 3.1], [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]),
]


@pytest.mark.parametrize("name, kw, expected", TORCH_DIFFERENTIABLE,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(TORCH_DIFFERENTIABLE)])
def test_differentiable_step_is_recorded_by_autograd(name, kw, expected):
    w = E.tensor([1.0, -2.0, 3.0], dtype=E.float64, requires_grad=True)
    g = E.tensor([0.5, 0.25, -1.0], dtype=E.float64, requires_grad=True)
    p = w * 1.0
    p.retain_grad()
    opt = getattr(eo, name)([p], lr=0.1, differentiable=True, **kw)
    p.grad = g * 1.0
    opt.step()
    (p * E.tensor([1.0, 2.0, 3.0], dtype=E.float64)).sum().backward()
    for got, want in zip((p.detach(), w.grad, g.grad), expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-9, atol=1e-15)


def test_non_differentiable_step_records_nothing():
    w = E.tensor([1.0, -2.0, 3.0], dtype=E.float64, requires_grad=True)
    p = w * 1.0
    p.retain_grad()
    p.grad = E.ones_like(p)
    eo.SGD([p], lr=0.1).step()
    p.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0, 1.0])


@pytest.mark.parametrize("name", STEPPED)
def test_state_dict_round_trips_the_switches(name):
    keys = TORCH_GROUP_KEYS[name]
    kw = {k: True for k in ("foreach", "capturable") if k in keys}
    src = getattr(eo, name)([_param()], lr=0.05, **kw)
    saved = pickle.loads(pickle.dumps(src.state_dict()))
    dst = getattr(eo, name)([_param()], lr=0.05)
    dst.load_state_dict(saved)
    assert list(dst.param_groups[0]) == keys
    for k in kw:
        assert dst.param_groups[0][k] is True


@pytest.mark.parametrize("name", sorted(TORCH_GROUP_KEYS))
def test_an_old_state_dict_without_the_switches_loads(name):
    keys = TORCH_GROUP_KEYS[name]
    p = _param()
    opt = getattr(eo, name)([p], lr=0.05)
    sd = opt.state_dict()
    for k in FLAG_DEFAULTS:   # a file written by an ember without these options
        sd["param_groups"][0].pop(k, None)
    opt2 = getattr(eo, name)([p], lr=0.05)
    opt2.load_state_dict(sd)
    assert sorted(opt2.param_groups[0]) == sorted(keys)
    for k, default in FLAG_DEFAULTS.items():
        if k in keys:
            assert opt2.param_groups[0][k] is default
    if name != "LBFGS":
        p.grad = E.ones_like(p)
        opt2.step()


def test_an_old_pickled_optimizer_gets_the_switches():
    opt = eo.Adam([_param()])
    state = opt.__getstate__()
    for k in FLAG_DEFAULTS:
        state["param_groups"][0].pop(k)
    fresh = eo.Adam.__new__(eo.Adam)
    fresh.__setstate__(state)
    assert [fresh.param_groups[0][k] for k in FLAG_DEFAULTS] == [None, False, False, None]


def test_a_scheduler_fills_a_tensor_lr_in_place_as_torch():
    p = E.nn.Parameter(E.ones(2))
    lr = E.tensor(0.1)
    opt = E.optim.SGD([p], lr=lr)
    sched = E.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    for _ in range(3):
        p.grad = E.ones(2)
        opt.step()
        sched.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == pytest.approx(0.0125)
    assert opt.param_groups[0]["initial_lr"].item() == pytest.approx(0.1)  # a copy
    assert p.tolist() == pytest.approx([1 - 0.1 - 0.05 - 0.025] * 2)
