"""Issue 36: ``ember.jit.trace`` compiles one plan per ArgumentSpec (its check used to run
under no_grad and compile a second plan, so every pass ran and logged twice), and its
check names the random nodes (dropout in train mode) instead of reporting a mismatch."""
import re
import warnings

import pytest

import ember as E
import ember.jit
from ember.jit import TracerWarning


def counting(stage="specialization"):
    graphs = []
    return graphs, ember.jit.register_pass(lambda g: graphs.append(str(g)), stage=stage,
                                           name="counter")


def model():
    E.manual_seed(0)
    return E.nn.Sequential(E.nn.Linear(3, 4), E.nn.Tanh(), E.nn.Linear(4, 2))


def runs(grad, check_trace, stage="specialization"):
    """How often a pass ran for one trace and two calls with the example's spec."""
    graphs, handle = counting(stage)
    with handle, E.set_grad_enabled(grad):
        m, x = model(), E.randn(5, 3)
        tm = ember.jit.trace(m, (x,), check_trace=check_trace)
        tm(x)
        tm(E.randn(5, 3))
    assert tm.recompile_reasons() == []
    return len(graphs)


@pytest.mark.parametrize("grad, graphs", [(True, 2), (False, 1)], ids=["grad", "no_grad"])
def test_one_trace_and_calls_run_each_pass_once_per_graph(grad, graphs):
    # with gradients two graphs compile: the traced one and its differentiable graph's f
    # (its own executor); the trace's check used to compile the traced graph once more
    # under no_grad, so a pass ran 3 times
    assert runs(grad, check_trace=True) == runs(grad, check_trace=False) == graphs


def test_a_new_argument_spec_compiles_once_more():
    graphs, handle = counting()
    with handle:
        m, x = model(), E.randn(5, 3)
        tm = ember.jit.trace(m, (x,))
        tm(x)
        assert len(graphs) == 2  # the traced graph and the differentiable graph's f
        with E.no_grad():  # another ArgumentSpec (grad mode off): one more plan
            tm(x)
            tm(x)
    assert len(graphs) == 3


def test_backward_adds_only_the_backward_graph():
    graphs, handle = counting("nondiff")
    with handle:
        m, x = model(), E.randn(5, 3)
        tm = ember.jit.trace(m, (x,))
        n = len(graphs)
        tm(x).sum().backward()
        tm(x).sum().backward()
    assert len(graphs) == n + 1


def dropout_model(p=0.5):
    return E.nn.Sequential(E.nn.Linear(3, 4), E.nn.ReLU(), E.nn.Dropout(p),
                           E.nn.Sequential(E.nn.Linear(4, 4), E.nn.Dropout(p)))


def test_dropout_in_train_mode_is_named_with_its_module_and_line():
    m, x = dropout_model(), E.randn(6, 3)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ember.jit.trace(m, (x,)); line = _line()  # noqa: E702 - the line the trace names
    (w,) = [r for r in record if issubclass(r.category, TracerWarning)]
    msg = str(w.message)
    assert msg.startswith("Trace had nondeterministic nodes. Did you forget to call .eval() "
                          "on your model? Nodes:\n"), msg
    nodes = re.findall(r"^\t(.*)$", msg, re.M)
    assert len(nodes) == 2, msg
    assert nodes[0].startswith("ember::dropout at 2 (Dropout) -> %"), nodes[0]
    assert nodes[1].startswith("ember::dropout at 3.1 (Dropout) -> %"), nodes[1]
    assert all(n.endswith(f"traced at {__file__}:{line}") for n in nodes), nodes
    assert "does not match" not in msg and w.filename == __file__


def _line():
    import inspect
    return inspect.currentframe().f_back.f_lineno


def test_random_factories_are_named_in_a_function():
    def fn(x):
        return E.bernoulli(x.sigmoid()) * E.nn.functional.dropout(x, 0.2, training=True)

    with pytest.warns(TracerWarning, match=r"Nodes:\n\tember::bernoulli -> %\w+, traced at "
                                           r".*\n\tember::dropout -> %"):
        ember.jit.trace(fn, (E.randn(2, 3),))


@pytest.mark.filterwarnings("error::ember.jit.TracerWarning")
def test_no_warning_in_eval_mode():
    m, x = dropout_model().eval(), E.randn(6, 3)
    tm = ember.jit.trace(m, (x,))
    assert E.allclose(tm(x), m(x))
