"""The sample table itself: every differentiable op in ``derivatives.yaml`` has a sample,
each sample really records its op's backward node, every declared op has a derivatives
entry, and the check helpers in ``op_samples.py`` catch wrong derivatives."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from core.autograd.op_samples import (SAMPLES, Sample, check_grad, check_gradgrad, recorded_nodes,
                                      u)
from ember import ops
from ember.autograd import RECORDERS

DIFFERENTIABLE = sorted(n for n, d in ops.DERIVATIVES.items() if not d.not_differentiable)
GROUPS = {"pointwise", "reductions", "shape", "indexing_linalg", "nn"}


def test_every_differentiable_op_has_a_sample():
    missing = sorted(set(DIFFERENTIABLE) - {s.op for s in SAMPLES})
    assert not missing, (f"differentiable ops without a sample in op_samples.py: {missing}; "
                         f"add one (gradcheck and gradgradcheck then run on it)")


def test_every_inplace_variant_has_a_sample():
    # x.add_(y) records the same node as add: a sample named "inplace..." must call it
    inplace = {nf.kernel_name for nf in ops.FUNCTIONS if nf.inplace_schema is not None}
    covered = {s.op for s in SAMPLES if s.desc.startswith("inplace")}
    missing = sorted((inplace & set(DIFFERENTIABLE)) - covered)
    assert not missing, f"in-place variants without an 'inplace' sample: {missing}"


def test_samples_name_differentiable_ops_and_known_groups():
    unknown = sorted({s.op for s in SAMPLES} - set(DIFFERENTIABLE))
    assert not unknown, f"samples for ops that derivatives.yaml does not differentiate: {unknown}"
    assert {s.group for s in SAMPLES} == GROUPS


def test_sample_ids_are_unique():
    ids = [s.id for s in SAMPLES]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_samples_stay_small():
    # gradcheck runs one forward pass per input element: keep the suite fast
    big = [s.id for s in SAMPLES if any(np.size(a) > 12 for a in s.inputs)]
    assert not big, f"samples with inputs over 12 elements: {big}"


def test_every_declared_op_has_a_derivatives_entry():
    missing = [f"{nf.kernel_name} ({nf.location})" for nf in ops.FUNCTIONS
               if nf.dispatch != "composite" and nf.kernel_name not in ops.DERIVATIVES]
    assert not missing, (f"ops in native_functions.yaml without a derivatives.yaml entry: "
                         f"{missing}; give formulas or 'not_differentiable: true'")


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_sample_records_its_op(sample):
    want = RECORDERS[sample.op][0].__name__
    got = recorded_nodes(sample)
    assert want in got, f"{sample.id} should record {want}; its graph has {sorted(got)}"


# --- the checks fail on wrong derivatives ---------------------------------------------------------

class _Cube(E.autograd.Function):
    """x ** 3 with a backward whose first derivative is right (3 x^2) and whose second is
    wrong (the saved x is detached: d/dx of the backward misses 6 x), or whose first
    derivative is off by 1%."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * (x * x).detach() * ctx.scale, None


def _sample(scale):
    return Sample("pow", f"cube_{scale}", lambda x: _Cube.apply(x, scale), (u(3),), "pointwise")


def test_check_grad_rejects_a_wrong_first_derivative():
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        check_grad(_sample(1.01))
    assert check_grad(_sample(1.0))


def test_check_gradgrad_rejects_a_wrong_second_derivative():
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        check_gradgrad(_sample(1.0))


def test_gradgradcheck_rejects_a_wrong_second_derivative():
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        E.autograd.gradgradcheck(lambda x: _Cube.apply(x, 1.0),
                                 (E.tensor(u(3), requires_grad=True),))
