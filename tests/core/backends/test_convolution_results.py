"""Issue 35, class 5: the convolution dispatcher checks what an algorithm returns (forward
and backward, grouped or not) against the shapes and dtype it knows, names the algorithm
that returned something else, falls back to the next eligible one, and says why in
``explain``. The reference is torch's convolution in float64."""
import re
import sys
import textwrap
import warnings

import numpy as np
import pytest
from helpers import needs_torch
from hypothesis import HealthCheck, given, settings, strategies as st

import ember as E
from ember.backends import convolution
from ember.plugins import manager

PLUGIN = '''
from ember.plugins import hookimpl


class Suspect:
    """Delegates to native_im2col, then passes its result through ``forward_fn`` /
    ``backward_fn`` (set by the test)."""

    name, priority, device_type = "suspect", 1000, "cpu"
    supports_groups = True

    def __init__(self):
        self.native = None
        self.forward_fn = self.backward_fn = lambda r: r
        self.calls = []

    def supports(self, params):
        return True

    def forward(self, input, weight, bias, params):
        self.calls.append(("forward", params.groups))
        return self.forward_fn(self.native.forward(input, weight, bias, params))

    def backward(self, grad_output, input, weight, params, output_mask):
        self.calls.append(("backward", params.groups))
        return self.backward_fn(self.native.backward(grad_output, input, weight, params,
                                                     output_mask))


ALGO = Suspect()


@hookimpl
def ember_convolution_algorithms():
    return [ALGO]
'''


@pytest.fixture
def suspect(tmp_path, monkeypatch):
    mod = "ember_t35_suspect_conv"
    (tmp_path / f"{mod}.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "ember_t35_suspect_conv-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ember-t35-suspect-conv\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text(f"[ember]\nsuspect = {mod}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    manager.reload()
    algo = sys.modules[mod].ALGO
    algo.native = next(a for a in convolution.algorithms("cpu") if a.name == "native_im2col")
    yield algo
    monkeypatch.undo()
    sys.modules.pop(mod, None)
    manager.reload()


FORWARD_FAULTS = {
    "None": (lambda r: None, r"its forward returned None, expected a numpy.ndarray of shape"),
    "a list": (lambda r: r.tolist(), r"its forward returned a list, expected a numpy.ndarray"),
    "a tuple": (lambda r: (r,), r"its forward returned a tuple, expected a numpy.ndarray"),
    "a Tensor": (lambda r: E.from_numpy(r), r"its forward returned a Tensor, expected"),
    "a float": (lambda r: float(r.sum()), r"its forward returned a float"),
    "flattened": (lambda r: r.reshape(-1), r"its forward returned shape \(\d+,\), expected"),
    "one channel short": (lambda r: r[:, :-1], r"its forward returned shape \(\d+, \d+, "),
    "float32": (lambda r: r.astype(np.float32), r"its forward returned dtype float32, "
                                                 r"expected float64 \(the input's\)"),
}
BACKWARD_FAULTS = {
    "None": (lambda g: None, r"its backward returned a NoneType, expected a tuple "
                             r"\(grad_input, grad_weight, grad_bias\)"),
    "two values": (lambda g: g[:2], r"its backward returned 2 values, expected a tuple"),
    "a list of lists": (lambda g: [None if a is None else a.tolist() for a in g],
                        r"its backward returned a list, expected a numpy.ndarray of shape "
                        r".* for grad_input"),
    "grad_input flattened": (lambda g: (g[0].reshape(-1), *g[1:]),
                             r"returned shape \(\d+,\), expected .* for grad_input"),
    "grad_weight float32": (lambda g: (g[0], g[1].astype(np.float32), g[2]),
                            r"returned dtype float32, expected float64 .* for grad_weight"),
    "grad_weight None": (lambda g: (g[0], None, g[2]),
                         r"returned None, expected a numpy.ndarray of shape .* for "
                         r"grad_weight"),
    "grad_bias of one more channel": (
        lambda g: (g[0], g[1], None if g[2] is None else np.append(g[2], 0.0)),
        r"for grad_bias"),
}

shapes = st.fixed_dictionaries({
    "n": st.integers(1, 2), "groups": st.sampled_from([1, 2]), "c": st.integers(1, 2),
    "out": st.integers(1, 2), "size": st.integers(3, 6), "k": st.integers(1, 3),
    "stride": st.integers(1, 2), "padding": st.integers(0, 1),
    "transposed": st.booleans(), "bias": st.booleans()})


def conv(lib, x, w, b, s):
    f = lib.nn.functional
    if s["transposed"]:
        return f.conv_transpose2d(x, w, b, stride=s["stride"], padding=s["padding"],
                                  groups=s["groups"])
    return f.conv2d(x, w, b, stride=s["stride"], padding=s["padding"], groups=s["groups"])


def case(s, rng):
    g = s["groups"]
    cin, cout = s["c"] * g, s["out"] * g
    x = rng.standard_normal((s["n"], cin, s["size"], s["size"]))
    w = rng.standard_normal((cin, s["out"], s["k"], s["k"]) if s["transposed"] else
                            (cout, s["c"], s["k"], s["k"]))
    b = rng.standard_normal(s["out"] * g if s["transposed"] else cout) if s["bias"] else None
    return x, w, b


def run_both(s, x, w, b):
    """(ember output, grads) and torch's for one case, gradients of out.sum() * 1.5; skips
    the test without torch."""
    torch = needs_torch()
    out = {}
    for lib in (E, torch):
        tx, tw = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        tb = None if b is None else lib.tensor(b, requires_grad=True)
        y = conv(lib, tx, tw, tb, s)
        (y.sum() * 1.5).backward()
        grads = [t.grad.numpy() for t in (tx, tw, tb) if t is not None]
        out[lib.__name__] = (y.detach().numpy(), grads)
    return out["ember"], out["torch"]


def fresh(suspect, forward_fn, backward_fn):
    """Set the suspect's faults and forget earlier refusals (hypothesis runs many examples
    in one plugin load, and a refusal is kept per params)."""
    suspect.forward_fn, suspect.backward_fn = forward_fn, backward_fn
    suspect.calls.clear()
    convolution._refused.clear()
    convolution._cache.clear()


def assert_matches(mine, ref):
    np.testing.assert_allclose(mine[0], ref[0], rtol=1e-10, atol=1e-10)
    for a, r in zip(mine[1], ref[1]):
        np.testing.assert_allclose(a, r, rtol=1e-10, atol=1e-10)


SLOW = settings(max_examples=12, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@SLOW
@given(s=shapes, fault=st.sampled_from(sorted(FORWARD_FAULTS)), seed=st.integers(0, 99))
def test_a_wrong_forward_result_is_refused_and_the_next_algorithm_runs(suspect, s, fault,
                                                                        seed):
    corrupt, why = FORWARD_FAULTS[fault]
    fresh(suspect, corrupt, lambda g: g)
    x, w, b = case(s, np.random.default_rng(seed))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        mine, ref = run_both(s, x, w, b)
    assert_matches(mine, ref)
    mine_warnings = [str(m.message) for m in record if "'suspect'" in str(m.message)]
    assert len(mine_warnings) == 1, mine_warnings
    assert re.search(why, mine_warnings[0]), mine_warnings[0]
    assert "falling back to the next eligible algorithm" in mine_warnings[0]
    report = str(convolution.explain(E.tensor(x), E.tensor(w), None if b is None else
                                     E.tensor(b), stride=s["stride"], padding=s["padding"],
                                     transposed=s["transposed"], groups=s["groups"]))
    assert "suspect: declined (its forward returned" in report, report
    assert "-> suspect" not in report
    # refused for these params: the next call does not ask it again, nor warns
    calls = len(suspect.calls)
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        assert_matches(run_both(s, x, w, b)[0], ref)
    assert not [m for m in again if "'suspect'" in str(m.message)]
    assert ("forward", s["groups"]) not in suspect.calls[calls:]


@SLOW
@given(s=shapes, fault=st.sampled_from(sorted(BACKWARD_FAULTS)), seed=st.integers(0, 99))
def test_a_wrong_backward_result_is_refused_and_the_next_algorithm_runs(suspect, s, fault,
                                                                         seed):
    corrupt, why = BACKWARD_FAULTS[fault]
    if fault == "grad_bias of one more channel" and not s["bias"]:
        s = {**s, "bias": True}
    fresh(suspect, lambda r: r, corrupt)
    x, w, b = case(s, np.random.default_rng(seed))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        mine, ref = run_both(s, x, w, b)
    assert_matches(mine, ref)
    mine_warnings = [str(m.message) for m in record if "'suspect'" in str(m.message)]
    assert len(mine_warnings) == 1 and "its backward returned" in mine_warnings[0]
    assert re.search(why, mine_warnings[0]), mine_warnings[0]
    for bias in (None, b):   # the refusal holds for the forward too, with or without bias
        report = str(convolution.explain(
            E.tensor(x), E.tensor(w), None if bias is None else E.tensor(bias),
            stride=s["stride"], padding=s["padding"], transposed=s["transposed"],
            groups=s["groups"]))
        assert "suspect: declined (its backward returned" in report, report


def test_grouped_calls_are_checked_per_group(suspect):
    suspect.supports_groups = False   # the dispatcher splits groups: each part is checked
    suspect.forward_fn = lambda r: r[:, :, :-1]
    s = {"n": 2, "groups": 3, "c": 2, "out": 2, "size": 5, "k": 3, "stride": 1,
         "padding": 1, "transposed": False, "bias": True}
    x, w, b = case(s, np.random.default_rng(0))
    with pytest.warns(UserWarning, match=r"'suspect' \(cpu\) its forward returned shape "
                                         r"\(2, 2, 4, 5\), expected \(2, 2, 5, 5\)"):
        mine, ref = run_both(s, x, w, b)
    assert_matches(mine, ref)
    assert ("forward", 1) in suspect.calls   # it ran on one group's params


def test_when_every_algorithm_returns_garbage_the_error_names_each(suspect, monkeypatch):
    suspect.forward_fn = lambda r: None
    monkeypatch.setattr(suspect.native, "forward", lambda *a: [[0.0]])
    x, w = E.randn(1, 1, 4, 4, dtype=E.float64), E.randn(1, 1, 3, 3, dtype=E.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(NotImplementedError) as info:
            E.nn.functional.conv2d(x, w)
    msg = str(info.value)
    assert "conv2d: no convolution algorithm supports this call on 'cpu'" in msg
    assert "suspect: declined (its forward returned None" in msg
    assert "native_im2col: declined (its forward returned a list" in msg
