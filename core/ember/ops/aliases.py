"""PyTorch's alternative names for ops, as a table: ``arccos`` is ``acos``, ``greater`` is
``gt``, ``multiply`` is ``mul``, ``ember.abs_(x)`` is ``x.abs_()``.

An alias is the very same callable as its target (``ember.arccos is ember.acos``), so it
is the same op in every respect: arguments, dtypes, errors, autograd (``AcosBackward``)
and tracing. NOTE: that is also the one departure from PyTorch: a traced graph names the
target (``ember::acos``), as PyTorch's own alias normalization does, and ``help()`` shows
the target's docstring.

``ALIASES`` maps an alias to ``(target, forms)``; forms are ``f`` (``ember.<alias>``), ``m``
(``Tensor.<alias>``), ``m_`` (``Tensor.<alias>_`` is ``Tensor.<target>_``) and ``f_``
(``ember.<alias>_``). ``INPLACE_FUNCTIONS`` lists the in-place methods that PyTorch also
exposes at top level (``torch.exp_(x)``): ``ember.<name>`` is ``Tensor.<name>``.
``install`` runs once at ``import ember`` and refuses to overwrite a name that is already
taken, so a later real op of the same name shows up as an error, not a silent shadow.
"""
from __future__ import annotations

ALIASES: dict[str, tuple[str, str]] = {
    # trigonometry, numpy's spelling
    "arccos": ("acos", "f m m_ f_"),
    "arccosh": ("acosh", "f m m_ f_"),
    "arcsin": ("asin", "f m m_ f_"),
    "arcsinh": ("asinh", "f m m_ f_"),
    "arctan": ("atan", "f m m_ f_"),
    "arctanh": ("atanh", "f m m_ f_"),
    "arctan2": ("atan2", "f m m_"),
    # comparisons
    "greater": ("gt", "f m m_"),
    "greater_equal": ("ge", "f m m_"),
    "less": ("lt", "f m m_"),
    "less_equal": ("le", "f m m_"),
    "not_equal": ("ne", "f m m_"),
    # arithmetic
    "multiply": ("mul", "f m m_"),
    "divide": ("div", "f m m_"),
    "subtract": ("sub", "f m m_"),
    "negative": ("neg", "f m m_ f_"),
    "fix": ("trunc", "f m m_ f_"),
    # shapes and joining
    "concat": ("cat", "f"),
    "swapaxes": ("transpose", "m_"),
    "swapdims": ("transpose", "m_"),
    "ndimension": ("dim", "m"),
    "nelement": ("numel", "m"),
}

INPLACE_FUNCTIONS = (
    "abs_", "acos_", "acosh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "clamp_max_", "clamp_min_", "cos_", "cosh_", "detach_", "erf_", "erfc_", "exp2_", "exp_",
    "expm1_", "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "log10_", "log1p_",
    "log2_", "log_", "logit_", "nan_to_num_", "neg_", "reciprocal_", "relu_", "round_",
    "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "tan_", "tanh_", "trunc_",
    "xlogy_",
)


def _forms(spec: str) -> set:
    forms = set(spec.split())
    unknown = forms - {"f", "m", "m_", "f_"}
    if unknown:
        raise ValueError(f"aliases: unknown form(s) {sorted(unknown)}; use f, m, m_, f_")
    return forms


def install(namespace: dict, tensor_cls) -> None:
    """Bind every alias and in-place function (once, at import). Raises RuntimeError if
    a name is already defined or a target is missing."""
    def target_of(where, name, alias):
        fn = namespace.get(name) if where == "ember" else getattr(tensor_cls, name, None)
        if fn is None:
            raise RuntimeError(f"aliases: {alias!r} names {where}.{name}, which does not "
                               f"exist; fix ops/aliases.py")
        return fn

    def put(where, name, fn):
        taken = name in namespace if where == "ember" else hasattr(tensor_cls, name)
        if taken:
            raise RuntimeError(f"aliases: {where}.{name} is already defined; drop it from "
                               f"ops/aliases.py (or rename the op)")
        if where == "ember":
            namespace[name] = fn
        else:
            setattr(tensor_cls, name, fn)

    for alias, (target, spec) in ALIASES.items():
        forms = _forms(spec)
        if "f" in forms:
            put("ember", alias, target_of("ember", target, alias))
        if "m" in forms:
            put("Tensor", alias, target_of("Tensor", target, alias))
        if "m_" in forms:
            put("Tensor", alias + "_", target_of("Tensor", target + "_", alias + "_"))
        if "f_" in forms:
            put("ember", alias + "_", target_of("Tensor", target + "_", alias + "_"))
    for name in INPLACE_FUNCTIONS:
        put("ember", name, target_of("Tensor", name, name))
