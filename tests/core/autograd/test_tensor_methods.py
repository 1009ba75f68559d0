"""The autograd layer's part of Tensor (``autograd/tensor_methods.py``): ``backward``,
``register_hook``, ``retain_grad``, ``retains_grad`` are autograd's and keep their
docstrings; the hand-written ops below autograd record history through its hooks
(``Tensor.to``, indexing, ``index_put_``, in-place views, kernel pairs). Values and
errors are compared with torch."""
import numpy as np
import pytest

import ember as E
from ember.autograd import tensor_methods

torch = pytest.importorskip("torch")


def _pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return (E.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True))


def test_methods_are_autograds_and_keep_their_docs():
    for name in ("backward", "register_hook", "retain_grad"):
        fn = getattr(E.Tensor, name)
        assert fn is getattr(tensor_methods, name)
        assert fn.__qualname__ == f"Tensor.{name}" and fn.__doc__
    assert "torch.Tensor.backward" in E.Tensor.backward.__doc__
    assert isinstance(E.Tensor.retains_grad, property)
    assert E.Tensor.retains_grad.__doc__.startswith("Whether ``retain_grad()``")


def test_hooks_and_retain_grad_match_torch():
    (x, tx), seen = _pair((3,)), {}
    for lib, t in (("e", x), ("t", tx)):
        y = t * 2
        y.retain_grad()
        h = y.register_hook(lambda g, lib=lib: seen.setdefault(lib, g * 3))
        t.register_hook(lambda g: g + 1)
        (y * y).sum().backward()
        h.remove()
        assert y.retains_grad and not t.retains_grad
        seen[lib + "y"] = y.grad
    np.testing.assert_allclose(seen["e"].numpy(), seen["t"].numpy())
    np.testing.assert_allclose(seen["ey"].numpy(), seen["ty"].numpy())
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        E.ones(2).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        E.ones(2).retain_grad()


def test_handwritten_ops_record_through_the_hooks():
    """Tensor.to (record_handwritten), x[i] (record_handwritten), x[i] = v
    (begin_inplace / end_inplace), and the kernel pairs of ops/ and linalg/."""
    (x, tx), (v, tv) = _pair((4, 3)), _pair((3,), seed=1)
    outs = []
    for t, val, lib in ((x, v, E), (tx, tv, torch)):
        y = t.to(lib.float32)[1:] * 1  # a copy, then an index view of it
        y[0] = val.to(lib.float32) * 2
        z = lib.linalg.cross(y, y.flip(0) + 1) + y.t().mm(y).trace()
        z.sum().backward()
        outs.append((z.detach().numpy(), t.grad.numpy(), val.grad.numpy()))
    for got, want in zip(*outs):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert E.trace(x * 1).grad_fn.name() == "TraceBackward0"


@pytest.mark.parametrize("write", [lambda t: t.__setitem__(0, 1.0), lambda t: t.unsqueeze_(0)])
def test_inplace_on_a_leaf_raises_as_torch(write):
    for t in _pair((3,)):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            write(t)
