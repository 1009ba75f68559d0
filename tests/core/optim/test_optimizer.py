"""The Optimizer base: param groups, zero_grad, state dicts, closures, errors."""
import copy
import pickle

import numpy as np
import pytest
from helpers import assert_close, to_np

import ember as E
from ember.optim import SGD, Adam, Optimizer
from ember.optim.optimizer import required


def leaf(*values, dtype=None):
    return E.tensor(list(values), dtype=dtype).requires_grad_()


# --- construction and param groups -------------------------------------------------------
def test_a_single_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        SGD(leaf(1.0), lr=0.1)


def test_a_set_of_params_is_a_type_error():
    with pytest.raises(TypeError, match="ordered collections"):
        SGD({leaf(1.0)}, lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        SGD([{"params": {leaf(1.0)}}], lr=0.1)


def test_an_empty_parameter_list_is_a_value_error():
    with pytest.raises(ValueError, match="empty parameter list"):
        SGD([], lr=0.1)


def test_non_tensors_and_non_leaves_are_rejected():
    with pytest.raises(TypeError, match="can only optimize Tensors.*float"):
        SGD([leaf(1.0), 2.0], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        SGD([leaf(1.0) * 2], lr=0.1)


def test_a_non_leaf_that_retains_grad_is_accepted():
    x = leaf(1.0) * 2
    x.retain_grad()
    SGD([x], lr=0.1)


def test_groups_take_defaults_for_missing_options():
    a, b = leaf(1.0), leaf(2.0)
    opt = SGD([{"params": a}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    g0, g1 = opt.param_groups
    assert g0["params"] == [a] and g0["lr"] == 0.1 and g0["momentum"] == 0.9
    assert g1["lr"] == 0.5 and g1["momentum"] == 0.9


def test_add_param_group():
    a, b = leaf(1.0), leaf(2.0)
    opt = SGD([a], lr=0.1)
    opt.add_param_group({"params": (t for t in [b]), "lr": 0.01})
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["lr"] == 0.01
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([a])
    with pytest.raises(ValueError, match="'params' entry"):
        opt.add_param_group({"lr": 0.1})


def test_duplicate_params_in_a_group_warn():
    a = leaf(1.0)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        SGD([a, a], lr=0.1)


class _Plain(Optimizer):
    """A minimal subclass: a required option and a hand-written update."""

    def __init__(self, params, lr=required):
        super().__init__(params, {"lr": lr})

    def _step_group(self, group):
        for p in group["params"]:
            if p.grad is not None:
                p.sub_(p.grad, alpha=group["lr"])


def test_required_options_must_be_given():
    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        _Plain([leaf(1.0)])
    p = leaf(1.0)
    p.grad = E.tensor([2.0])
    _Plain([{"params": [p], "lr": 0.25}]).step()
    assert float(p) == 0.5


def test_base_step_needs_an_update():
    with pytest.raises(NotImplementedError, match="_step_group"):
        p = leaf(1.0)
        p.grad = E.tensor([1.0])
        Optimizer([p], {}).step()


# --- zero_grad and step --------------------------------------------------------------------
def test_zero_grad_sets_to_none_by_default():
    a, b = leaf(1.0, 2.0), leaf(3.0)
    (a.sum() * b.sum()).backward()
    opt = SGD([a, b], lr=0.1)
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_zero_grad_in_place():
    a = leaf(1.0, 2.0)
    (a * a).sum().backward()
    grad = a.grad
    SGD([a], lr=0.1).zero_grad(set_to_none=False)
    assert a.grad is grad and to_np(grad).tolist() == [0.0, 0.0]
    assert not grad.requires_grad


def test_step_records_no_history_even_in_grad_mode():
    a = leaf(1.0, 2.0)
    a.grad = E.tensor([1.0, 1.0]).requires_grad_()
    with E.enable_grad():
        Adam([a], lr=0.1).step()
    assert a.grad_fn is None and a.is_leaf


def test_closure_runs_with_grad_enabled():
    a = leaf(2.0)
    opt = SGD([a], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    with E.no_grad():
        loss = opt.step(closure)
    assert float(loss) == 4.0 and float(a) == 0.0


# --- state dicts ----------------------------------------------------------------------------
def two_group_adam():
    a, b, c = leaf(1.0, 2.0), leaf(3.0), leaf(-1.0, 0.5, 2.0)
    opt = Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1)
    for p in (a, b, c):
        p.grad = p.detach() * 2
    opt.step()
    return opt, (a, b, c)


def test_state_dict_structure():
    opt, (a, b, c) = two_group_adam()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    assert set(sd["state"]) == {0, 1, 2}
    assert sd["state"][2]["step"] == 1 and sd["state"][2]["exp_avg"] is opt.state[c]["exp_avg"]
    # the optimizer's own groups keep their tensors
    assert opt.param_groups[0]["params"][0] is a


def test_load_state_dict_copies_and_rebinds():
    opt, _ = two_group_adam()
    sd = opt.state_dict()
    new = [leaf(0.0, 0.0), leaf(0.0), leaf(0.0, 0.0, 0.0)]
    opt2 = Adam([{"params": new[:2]}, {"params": new[2:]}], lr=0.01)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[1]["lr"] == 0.5 and opt2.param_groups[1]["params"] == [new[2]]
    loaded = opt2.state[new[2]]["exp_avg"]
    assert loaded is not sd["state"][2]["exp_avg"]
    assert_close(loaded, to_np(sd["state"][2]["exp_avg"]))
    # changing the source afterwards leaves the loaded optimizer alone
    sd["state"][2]["exp_avg"].zero_()
    assert to_np(loaded).any()


def test_load_state_dict_casts_to_the_param_dtype():
    opt, _ = two_group_adam()
    sd = opt.state_dict()
    new = [leaf(0.0, 0.0, dtype=E.float64), leaf(0.0, dtype=E.float64),
           leaf(0.0, 0.0, 0.0, dtype=E.float64)]
    opt2 = Adam([{"params": new[:2]}, {"params": new[2:]}])
    opt2.load_state_dict(sd)
    assert opt2.state[new[0]]["exp_avg_sq"].dtype is E.float64
    assert opt2.state[new[0]]["step"] == 1


def test_load_state_dict_mismatches_are_value_errors():
    opt, _ = two_group_adam()
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups: 2 saved, 1"):
        Adam([leaf(1.0)]).load_state_dict(sd)
    with pytest.raises(ValueError, match="group 0 has 2 saved parameters, 1 here"):
        Adam([{"params": [leaf(1.0)]}, {"params": [leaf(1.0)]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="keys 'state' and 'param_groups'"):
        Adam([leaf(1.0)]).load_state_dict({"state": {}})


def test_sgd_state_dict_round_trip():
    rng = np.random.default_rng(3)
    grads = [rng.standard_normal(4) for _ in range(6)]

    def train(p, opt, gs):
        for g in gs:
            p.grad = E.tensor(g)
            opt.step()

    a = E.tensor(np.ones(4)).requires_grad_()
    train(a, SGD([a], lr=0.1, momentum=0.9, nesterov=True), grads)
    b = E.tensor(np.ones(4)).requires_grad_()
    opt = SGD([b], lr=0.1, momentum=0.9, nesterov=True)
    train(b, opt, grads[:2])
    saved = pickle.loads(pickle.dumps(opt.state_dict()))
    c = b.detach().clone().requires_grad_()
    opt2 = SGD([c], lr=0.1, momentum=0.9, nesterov=True)
    opt2.load_state_dict(saved)
    train(c, opt2, grads[2:])
    np.testing.assert_array_equal(to_np(c), to_np(a))


def test_optimizer_pickles_and_deep_copies():
    opt, _ = two_group_adam()
    for clone in (pickle.loads(pickle.dumps(opt)), copy.deepcopy(opt)):
        assert len(clone.param_groups) == 2 and len(clone.state) == 3


def test_repr_lists_group_options():
    text = repr(SGD([leaf(1.0)], lr=0.1, momentum=0.9))
    assert text.startswith("SGD (\nParameter Group 0\n") and "    momentum: 0.9\n" in text
    assert "params" not in text
