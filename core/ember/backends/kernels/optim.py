"""Fused optimizer kernels: one Adam update of one parameter, in place.

``_fused_adam_`` is not a declared op (like ``index``): ``ember.optim.Adam`` calls it
directly on a parameter's arrays, the way PyTorch's ``Adam(fused=True)`` calls
``torch._fused_adam_``. It computes exactly what Adam's unfused path computes with ember
ops (the same ufuncs in the same order, each number cast to the parameter's dtype as an
op's wrapped number is), so the two paths give bit-identical parameters; it only skips
the dispatch, autograd bookkeeping and temporaries of nine ops a parameter. Float32 and
float64 only: Adam keeps its op path for the other dtypes.

Reference: torch.optim.Adam (``_single_tensor_adam``, ``_fused_adam``); Kingma & Ba,
"Adam: A Method for Stochastic Optimization" (2014).
"""
from __future__ import annotations

from .pointwise import WIDE_FLOATS, scalar_to

#: The parameter dtypes the fused kernel serves.
FUSED_DTYPES = WIDE_FLOATS


def kernels(xp) -> dict:
    add, multiply, divide = xp.add, xp.multiply, xp.true_divide

    def fused_adam_(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, beta1, beta2,
                    step_size, eps_hat, weight_decay, decay, maximize):
        """One Adam step of ``param`` (any shape, float32 or float64), in place.

        ``grad``, ``exp_avg``, ``exp_avg_sq`` and ``max_exp_avg_sq`` (None without
        amsgrad) are arrays of ``param``'s shape and dtype; the moments are updated in
        place. ``step_size`` is ``-lr * sqrt(bc2) / bc1``, ``eps_hat`` ``eps *
        sqrt(bc2)``; ``decay`` is AdamW's ``1 - lr * weight_decay`` (None for Adam's L2
        ``weight_decay``). Returns nothing; the caller bumps version counters.
        """
        dt = param.dtype

        def s(v):
            return scalar_to(v, dt)

        g = xp.negative(grad) if maximize else grad
        if decay is not None:
            multiply(param, s(decay), out=param)
        elif weight_decay != 0:
            g = add(g, multiply(param, s(weight_decay)))
        multiply(exp_avg, s(beta1), out=exp_avg)
        add(exp_avg, multiply(g, s(1 - beta1)), out=exp_avg)
        multiply(exp_avg_sq, s(beta2), out=exp_avg_sq)
        add(exp_avg_sq, multiply(multiply(g, g), s(1 - beta2)), out=exp_avg_sq)
        v = exp_avg_sq
        if max_exp_avg_sq is not None:
            xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
            v = max_exp_avg_sq
        # NOTE: temporaries are not reused through out=: for a 0-d parameter the ufuncs
        # return scalars, which out= refuses
        q = divide(exp_avg, add(xp.sqrt(v), s(eps_hat)))
        add(param, multiply(q, s(step_size)), out=param)

    return {"_fused_adam_": fused_adam_}
