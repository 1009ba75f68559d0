"""``ember.autograd.functional`` (``core/ember/autograd/functional.py``): vjp, jvp,
jacobian, hessian, vhp, hvp against analytic float64 numpy derivatives and central finite
differences; PyTorch's structure rules (tuple in -> tuple out, nested tuples for tuple ->
tuple jacobians), create_graph, strict mode and errors, whose messages follow
``torch.autograd.functional`` (checked against torch 2.x)."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import functional as AF
from ember.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3))
Y = RNG.standard_normal(3)


def t(a, requires_grad=False):
    return E.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def close(got, want, tol=1e-10):
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=tol, atol=tol)


def fd_jacobian(f, xs, eps=1e-6):
    """Central-difference Jacobian of numpy ``f`` (one array out) w.r.t. each of ``xs``."""
    out = np.asarray(f(*xs))
    jacs = []
    for j, x in enumerate(xs):
        jac = np.zeros(out.shape + x.shape)
        for idx in np.ndindex(x.shape):
            hi = [a.copy() for a in xs]
            lo = [a.copy() for a in xs]
            hi[j][idx] += eps
            lo[j][idx] -= eps
            jac[(...,) + idx] = (np.asarray(f(*hi)) - np.asarray(f(*lo))) / (2 * eps)
        jacs.append(jac)
    return jacs


# --- jacobian ------------------------------------------------------------------------------

def test_jacobian_of_cube_is_diagonal_3x2():
    got = AF.jacobian(lambda a: a ** 3, t(X))
    assert got.shape == (2, 3, 2, 3) and not got.requires_grad
    want = np.zeros((2, 3, 2, 3))
    for idx in np.ndindex(2, 3):
        want[idx + idx] = 3 * X[idx] ** 2
    close(got, want)


def test_jacobian_of_sin_and_of_a_scalar_output():
    close(AF.jacobian(lambda a: a.sin(), t(Y)), np.diag(np.cos(Y)))
    got = AF.jacobian(lambda a: (a ** 2).sum(), t(Y))  # 0-d output: shape of the input
    assert got.shape == (3,)
    close(got, 2 * Y)


def test_jacobian_structure_tuple_in_tuple_out():
    def f(a, b):
        return a * b, (a ** 2).sum() + b
    jac = AF.jacobian(f, (t(X), t(Y)))
    assert isinstance(jac, tuple) and len(jac) == 2
    assert all(isinstance(row, tuple) and len(row) == 2 for row in jac)
    shapes = [[tuple(j.shape) for j in row] for row in jac]
    assert shapes == [[(2, 3, 2, 3), (2, 3, 3)], [(3, 2, 3), (3, 3)]]
    want = fd_jacobian(lambda a, b: a * b, [X.copy(), Y.copy()])
    close(jac[0][0], want[0], 1e-6)
    close(jac[0][1], want[1], 1e-6)
    close(jac[1][0], np.broadcast_to(2 * X, (3, 2, 3)))
    close(jac[1][1], np.eye(3))


def test_jacobian_structure_tensor_vs_tuple():
    one_in_tuple = AF.jacobian(lambda a: a * 2, (t(Y),))
    assert isinstance(one_in_tuple, tuple) and len(one_in_tuple) == 1
    one_out_tuple = AF.jacobian(lambda a: (a * 2,), t(Y))
    assert isinstance(one_out_tuple, tuple) and isinstance(one_out_tuple[0], E.Tensor)
    nested = AF.jacobian(lambda a: (a * 2,), (t(Y),))
    assert isinstance(nested[0], tuple) and isinstance(nested[0][0], E.Tensor)
    close(nested[0][0], 2 * np.eye(3))


def test_jacobian_of_mlp_matches_finite_differences():
    w1, b1 = RNG.standard_normal((5, 3)), RNG.standard_normal(5)
    w2 = RNG.standard_normal((2, 5))

    def mlp(x, w):
        return F.linear(F.linear(x, w, t(b1)).tanh(), t(w2))

    def mlp_np(x, w):
        return np.tanh(x @ w.T + b1) @ w2.T
    x = RNG.standard_normal((4, 3))
    jx, jw = AF.jacobian(mlp, (t(x), t(w1)))
    want = fd_jacobian(mlp_np, [x.copy(), w1.copy()])
    close(jx, want[0], 1e-7)
    close(jw, want[1], 1e-7)


def test_jacobian_unused_input_gives_zeros_or_strict_error():
    jac = AF.jacobian(lambda a, b: a * 2, (t(Y), t(Y)))
    close(jac[1], np.zeros((3, 3)))
    with pytest.raises(RuntimeError, match="Output 0 .* independent of input 1.*strict"):
        AF.jacobian(lambda a, b: a * 2, (t(Y), t(Y)), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 .*does not require gradients"):
        AF.jacobian(lambda a: E.ones(3, dtype=E.float64), t(Y), strict=True)


def test_jacobian_create_graph_is_differentiable():
    x = t(Y, requires_grad=True)
    jac = AF.jacobian(lambda a: a.sin(), x, create_graph=True)
    assert jac.requires_grad
    jac.sum().backward()  # d/dx sum(diag(cos x)) = -sin x
    close(x.grad, -np.sin(Y))
    assert not AF.jacobian(lambda a: a.sin(), x).requires_grad


def test_jacobian_vectorize_gives_the_same_and_rejects_strict():
    f = lambda a: a.exp() * a  # noqa: E731
    close(AF.jacobian(f, t(Y), vectorize=True), AF.jacobian(f, t(Y)).numpy())
    with pytest.raises(RuntimeError, match="strict=True.*vectorized=True"):
        AF.jacobian(f, t(Y), strict=True, vectorize=True)


def test_jacobian_strategies():
    with pytest.raises(NotImplementedError, match="forward-mode"):
        AF.jacobian(lambda a: a, t(Y), strategy="forward-mode")
    with pytest.raises(ValueError, match="reverse-mode"):
        AF.jacobian(lambda a: a, t(Y), strategy="sideways")


def test_jacobian_does_not_touch_the_inputs_grad():
    x = t(Y, requires_grad=True)
    AF.jacobian(lambda a: a ** 2, x)
    assert x.grad is None


def test_jacobian_of_an_empty_output_is_empty():
    assert AF.jacobian(lambda a: a[:0], t(Y)).shape == (0, 3)


@pytest.mark.parametrize("bad, where", [([t(Y)], "given inputs has type list"),
                                        ((t(Y), 3), "value at index 1 has type int")])
def test_non_tensor_inputs_raise_type_error(bad, where):
    with pytest.raises(TypeError, match=f"inputs given to jacobian must be either a Tensor.*"
                                        f"{where}"):
        AF.jacobian(lambda *a: a[0], bad)


def test_non_tensor_output_raises_type_error():
    with pytest.raises(TypeError, match="outputs of the user-provided function given to vjp"):
        AF.vjp(lambda a: 3.0, t(Y), t(Y))


# --- vjp / jvp ------------------------------------------------------------------------------

def test_vjp_and_jvp_match_the_analytic_jacobian():
    v_out, v_in = RNG.standard_normal(3), RNG.standard_normal(3)
    out, vjp = AF.vjp(lambda a: a.sin() * a, t(Y), t(v_out))
    jac = np.diag(np.cos(Y) * Y + np.sin(Y))
    close(out, np.sin(Y) * Y)
    close(vjp, v_out @ jac)
    out, jvp = AF.jvp(lambda a: a.sin() * a, t(Y), t(v_in))
    close(jvp, jac @ v_in)


def test_vjp_jvp_structure_follows_inputs_and_outputs():
    def f(a, b):
        return a * b, (a ** 2).sum()
    out, vjp = AF.vjp(f, (t(X), t(Y)), (t(np.ones((2, 3))), t(1.0)))
    assert isinstance(out, tuple) and isinstance(vjp, tuple) and len(vjp) == 2
    close(vjp[0], Y + 2 * X)
    close(vjp[1], X.sum(0))
    out, jvp = AF.jvp(f, (t(X), t(Y)), (t(np.ones((2, 3))), t(np.zeros(3))))
    assert isinstance(jvp, tuple) and jvp[0].shape == (2, 3) and jvp[1].shape == ()
    close(jvp[0], np.broadcast_to(Y, (2, 3)))
    close(jvp[1], 2 * X.sum())


def test_vjp_default_v_only_for_a_scalar_output():
    out, g = AF.vjp(lambda a: (a ** 2).sum(), t(Y))
    close(g, 2 * Y)
    with pytest.raises(RuntimeError, match="v can only be None.*single element"):
        AF.vjp(lambda a: a * 2, t(Y))
    with pytest.raises(RuntimeError, match="v can only be None.*single element"):
        AF.jvp(lambda a: a * 2, t(Y))


def test_v_of_the_wrong_shape_or_length_raises():
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be .*\[3\].*\[2\]"):
        AF.vjp(lambda a: a * 2, t(Y), t(np.ones(2)))
    with pytest.raises(RuntimeError, match="Entry 1 in v has invalid size"):
        AF.jvp(lambda a, b: a * b, (t(Y), t(Y)), (t(Y), t(np.ones(2))))
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but "
                                           "got 1"):
        AF.jvp(lambda a, b: a * b, (t(Y), t(Y)), (t(Y),))


def test_vjp_and_jvp_strict_mode():
    with pytest.raises(RuntimeError, match="independent of input 1"):
        AF.vjp(lambda a, b: a.sum(), (t(Y), t(Y)), strict=True)
    with pytest.raises(RuntimeError, match="output of the user-provided function is "
                                           "independent of input 1"):
        AF.jvp(lambda a, b: a * 2, (t(Y), t(Y)), (t(Y), t(Y)), strict=True)
    _, g = AF.vjp(lambda a, b: a.sum(), (t(Y), t(Y)))
    close(g[1], np.zeros(3))


def test_vjp_jvp_create_graph_is_twice_differentiable():
    x = t(Y, requires_grad=True)
    _, g = AF.vjp(lambda a: (a ** 3).sum(), x, create_graph=True)
    g.sum().backward()
    close(x.grad, 6 * Y)
    x.grad = None
    _, jv = AF.jvp(lambda a: a ** 3, x, t(np.ones(3)), create_graph=True)
    jv.sum().backward()
    close(x.grad, 6 * Y)


# --- hessian / vhp / hvp -------------------------------------------------------------------

def f_np(a, b):
    return (a ** 2).sum() * np.sin(b).sum()


def f_em(a, b):
    return (a ** 2).sum() * b.sin().sum()


def hessian_np(a, b):
    """The analytic Hessian blocks of ``f_np``."""
    sa, sb = np.sin(b).sum(), (a ** 2).sum()
    haa = 2 * sa * np.eye(a.size).reshape(a.shape + a.shape)
    hab = np.einsum("ij,k->ijk", 2 * a, np.cos(b))
    hbb = np.diag(-sb * np.sin(b))
    return haa, hab, hbb


def test_hessian_matches_the_analytic_blocks():
    h = AF.hessian(f_em, (t(X), t(Y)))
    haa, hab, hbb = hessian_np(X, Y)
    assert [[tuple(b.shape) for b in row] for row in h] == \
        [[(2, 3, 2, 3), (2, 3, 3)], [(3, 2, 3), (3, 3)]]
    close(h[0][0], haa)
    close(h[0][1], hab)
    close(h[1][0], np.transpose(hab, (2, 0, 1)))
    close(h[1][1], hbb)


def test_hessian_of_cube_sum_and_tensor_structure():
    h = AF.hessian(lambda a: (a ** 3).sum(), t(Y))
    assert isinstance(h, E.Tensor)
    close(h, np.diag(6 * Y))


def test_hessian_requires_a_scalar_function_and_strict_checks():
    with pytest.raises(RuntimeError, match="should contain a single element"):
        AF.hessian(lambda a: a * 2, t(Y))
    with pytest.raises(RuntimeError, match="should return a single Tensor"):
        AF.hessian(lambda a: (a.sum(),), t(Y))
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with "
                                           "respect to input 0 is independent"):
        AF.hessian(lambda a: a.sum() * 2, t(Y), strict=True)
    close(AF.hessian(lambda a: a.sum() * 2, t(Y)), np.zeros((3, 3)))


def test_hessian_create_graph():
    x = t(Y, requires_grad=True)
    h = AF.hessian(lambda a: (a ** 3).sum(), x, create_graph=True)
    assert h.requires_grad
    h.sum().backward()  # sum(diag(6x)) -> 6
    close(x.grad, np.full(3, 6.0))


def test_vhp_and_hvp_match_the_hessian():
    va, vb = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    haa, hab, hbb = hessian_np(X, Y)
    want_a = np.einsum("ijkl,kl->ij", haa, va) + np.einsum("ijk,k->ij", hab, vb)
    want_b = np.einsum("ijk,ij->k", hab, va) + hbb @ vb
    for fn in (AF.vhp, AF.hvp):
        out, (ga, gb) = fn(f_em, (t(X), t(Y)), (t(va), t(vb)))
        close(out, f_np(X, Y))
        close(ga, want_a)
        close(gb, want_b)


def test_hvp_of_a_non_symmetric_use_and_errors():
    out, hv = AF.hvp(lambda a: (a ** 3).sum(), t(Y), t(np.ones(3)))
    close(hv, 6 * Y)
    with pytest.raises(RuntimeError, match="function given to hvp should contain a single"):
        AF.hvp(lambda a: a ** 3, t(Y), t(Y))
    with pytest.raises(RuntimeError, match="function given to vhp should return a single"):
        AF.vhp(lambda a: (a.sum(), a.sum()), t(Y), t(Y))
    with pytest.raises(RuntimeError, match="v can only be None"):
        AF.vhp(lambda a: (a ** 3).sum(), t(Y))


def test_vhp_create_graph_result_is_differentiable():
    x = t(Y, requires_grad=True)
    _, hv = AF.vhp(lambda a: (a ** 3).sum(), x, t(np.ones(3)), create_graph=True)
    assert hv.requires_grad
    hv.sum().backward()  # d/dx sum(6 x) = 6
    close(x.grad, np.full(3, 6.0))


def test_jvp_is_differentiable_per_gradcheck():
    def jvp_of_tanh(x, v):
        return AF.jvp(lambda a: (a * a).tanh(), x, v, create_graph=True)[1]
    args = (t(Y, requires_grad=True), t(RNG.standard_normal(3), requires_grad=True))
    assert gradcheck(jvp_of_tanh, args)
    assert gradgradcheck(jvp_of_tanh, args)
