"""The fused Adam kernel (kernels/optim.py, ``Adam(fused=...)``): bit-identical to Adam's
path through ember ops, for every option and both dtypes it serves; the fallback to ember
ops for the parameters it cannot update; ``fused=True``'s all-or-nothing check."""
import itertools

import numpy as np
import pytest
from core.optim.optim_cases import random_case
from helpers import to_np

import ember as E
from ember.optim import Adam, AdamW

SHAPES = [(3, 4), (5,), ()]


def train(dtype, steps=4, opt_cls=Adam, dtypes=None, **kw):
    """Parameters after ``steps`` steps of ``opt_cls`` (as numpy) and the optimizer."""
    init, grads = random_case(SHAPES, steps, seed=3)
    dtypes = dtypes or [dtype] * len(SHAPES)
    params = [E.tensor(a, dtype=dt).requires_grad_() for a, dt in zip(init, dtypes)]
    opt = opt_cls(params, **kw)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = E.tensor(g, dtype=p.dtype)
        opt.step()
    return [to_np(p) for p in params], opt


OPTIONS = [dict(weight_decay=wd, amsgrad=a, maximize=mx, decoupled_weight_decay=dc)
           for wd, a, mx, dc in itertools.product([0.0, 0.1], [False, True], [False, True],
                                                  [False, True]) if wd or not dc]


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(
    f"{k}={v}" for k, v in o.items() if v) or "default")
def test_fused_equals_ops_bit_for_bit(dtype, options):
    kw = dict(lr=0.01, betas=(0.8, 0.9), eps=1e-3, **options)
    fused, opt = train(dtype, fused=True, **kw)
    ops, ref_opt = train(dtype, fused=False, **kw)
    for a, b in zip(fused, ops):
        np.testing.assert_array_equal(a, b)
    for p, q in zip(opt.param_groups[0]["params"], ref_opt.param_groups[0]["params"]):
        for k in opt.state[p]:
            if k != "step":
                np.testing.assert_array_equal(to_np(opt.state[p][k]), to_np(ref_opt.state[q][k]))


def test_adamw_passes_fused_through():
    fused, _ = train(E.float32, opt_cls=AdamW, fused=True, lr=0.01)
    ops, _ = train(E.float32, opt_cls=AdamW, fused=False, lr=0.01)
    for a, b in zip(fused, ops):
        np.testing.assert_array_equal(a, b)


def test_amsgrad_switched_on_later_creates_its_state():
    p = E.tensor([1.0, -2.0]).requires_grad_()
    opt = Adam([p], lr=0.1)
    for amsgrad in (False, True):
        opt.param_groups[0]["amsgrad"] = amsgrad
        p.grad = E.tensor([0.5, 0.25])
        opt.step()
    assert "max_exp_avg_sq" in opt.state[p]


def test_each_update_bumps_the_version_counters():
    p = E.tensor([1.0, 2.0]).requires_grad_()
    p.grad = E.tensor([0.1, 0.2])
    opt = Adam([p], amsgrad=True)
    opt.step()
    before = [p._version] + [opt.state[p][k]._version
                             for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")]
    opt.step()
    after = [p._version] + [opt.state[p][k]._version
                            for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")]
    assert all(b > a for a, b in zip(before, after))


def test_other_dtypes_take_the_op_path():
    # float16 and bfloat16 parameters in the same group fall back to ember ops
    dts = [E.float32, E.float16, E.bfloat16]
    mixed, _ = train(None, dtypes=dts, lr=0.01)
    ops, _ = train(None, dtypes=dts, lr=0.01, fused=False)
    for a, b in zip(mixed, ops):
        np.testing.assert_array_equal(a, b)


def test_fused_true_refuses_before_changing_anything():
    a = E.tensor([1.0, 2.0]).requires_grad_()
    b = E.tensor([1.0, 2.0], dtype=E.float16).requires_grad_()
    a.grad, b.grad = E.tensor([0.1, 0.2]), E.tensor([0.1, 0.2], dtype=E.float16)
    opt = Adam([a, b], fused=True)
    with pytest.raises(RuntimeError, match=r"fused=True.*float16.*fused=None"):
        opt.step()
    np.testing.assert_array_equal(to_np(a), [1.0, 2.0])
    assert not opt.state.get(a)


def test_a_gradient_of_another_dtype_is_refused_before_any_update():
    # (issue 35: .grad must have its tensor's dtype, so the kernels never see another)
    p = E.nn.Parameter(E.tensor([1.0, 2.0]))
    with pytest.raises(E.DtypeError, match="different type"):
        p.grad = E.tensor([0.5, -0.5], dtype=E.float64)
    p.grad = E.tensor([0.5, -0.5])
    p.data = p.data.double()  # replaced after backward: the gradient no longer fits
    for fused in (None, False, True):
        with pytest.raises(E.DtypeError, match="parameter 0 of param group 0"):
            Adam([p], lr=0.1, fused=fused).step()
    assert p.tolist() == [1.0, 2.0]


def test_fused_must_be_a_bool_or_none():
    with pytest.raises(TypeError, match="fused must be None, True or False"):
        Adam([E.zeros(2).requires_grad_()], fused="yes")
