"""``Optimizer``: the base of every optimizer (``torch.optim.Optimizer``).

An optimizer holds ``param_groups`` (a list of dicts: ``"params"``, a list of leaf tensors,
plus that group's options, defaulted from ``defaults``) and ``state`` (a dict keyed by
parameter holding whatever the algorithm keeps per parameter: step counts, moment
buffers). ``step()`` updates the parameters that have a ``.grad`` in place, under
``ember.no_grad()``, so each update bumps the parameter's version counter and autograd
sees saved parameters change.

``state_dict()`` / ``load_state_dict()`` follow PyTorch's structure: ``{"state": {int id:
{...}}, "param_groups": [{..., "params": [int ids]}]}``, where ids number the parameters
in group order. What ember chose where PyTorch leaves room:

- ``state_dict()`` returns the live state tensors, as PyTorch does: deep-copy it (or save
  it) before stepping on if you need a snapshot. ``load_state_dict()`` copies every state
  tensor (cast to its parameter's dtype and device), so the loaded optimizer never shares
  memory with the dict it was given.
- Per-parameter ``"step"`` counts are Python ints (PyTorch keeps 0-d float tensors; the
  values are the same).
- A set of tensors is refused as ``params`` too (PyTorch refuses it only inside a group
  dict): its order, hence the state dict's ids, would change from run to run.
- No step/state-dict hooks.
- PyTorch's implementation switches ``foreach``, ``fused``, ``capturable`` and
  ``differentiable`` are accepted on every optimizer PyTorch has them on, with its
  defaults (None / False), and kept in ``param_groups`` so a state dict has PyTorch's
  keys. Ember has one implementation per optimizer (a short loop of in-place ember ops
  per parameter; Adam also a fused kernel): ``foreach`` and ``fused`` are hints, checked
  as PyTorch checks them (``fused=True`` with ``foreach=True`` or ``differentiable=True``,
  or a parameter that is not floating point, raise PyTorch's RuntimeError);
  ``capturable=True`` is accepted with nothing to capture (ember has no CUDA graphs);
  ``differentiable=True`` runs ``step()`` with grad mode on, so the update is recorded by
  autograd as in PyTorch.
- ``lr`` may be a one-element Tensor (PyTorch's tensor lr): each step reads its current
  value, so changing it in place takes effect.
"""
from __future__ import annotations

import copy
import numbers
import warnings
from collections import defaultdict
from itertools import chain

from ..autograd.grad_mode import enable_grad, set_grad_enabled
from ..factories import zeros_like
from ..tensor import Tensor, _check_grad

__all__ = ["Optimizer", "required"]




class _RequiredParameter:
    """Singleton marking a group option that has no default (``torch.optim.optimizer.required``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_SET_MESSAGE = ("optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list "
                "instead.")


def check_hparam(name: str, value, *, low: float = 0.0, high: float | None = None,
                 label: str | None = None, tensor_ok: bool = False) -> None:
    """Raise unless ``value`` is a real number with ``low <= value`` (and ``< high``).

    TypeError for a non-number, ValueError for one out of range, worded like PyTorch's
    ("Invalid learning rate: -0.1"). With ``tensor_ok`` (``lr``, as PyTorch) a one-element
    Tensor is checked by its value; one of another size raises PyTorch's ValueError
    ("Tensor lr must be 1-element").
    """
    label = label or f"{name} value"
    if tensor_ok and isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"Tensor {name} must be 1-element; got shape {list(value.shape)}"
                             f"; pass a 0-d tensor, e.g. ember.tensor(0.01)")
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} "
                        f"({value!r}); pass a float (use .item() for a one-element tensor)")
    if not value >= low or (high is not None and not value < high):
        rng = f">= {low}" if high is None else f"in [{low}, {high})"
        raise ValueError(f"Invalid {label}: {value}; expected {name} {rng}")


def check_flags(name: str, defaults: dict) -> None:
    """Check PyTorch's implementation switches in ``defaults`` as PyTorch does.

    RuntimeError (PyTorch's words) for ``fused=True`` together with ``differentiable=True``
    or ``foreach=True``; ``name`` is the optimizer's, for the message.
    """
    if defaults.get("fused"):
        if defaults.get("differentiable"):
            raise RuntimeError(f"{name}: `fused` does not support `differentiable`; pass "
                               f"fused=None")
        if defaults.get("foreach"):
            raise RuntimeError(f"{name}: `fused` and `foreach` cannot be `True` together.; "
                               f"pass only one of them")


def group_values(group: dict) -> dict:
    """``group`` with a Tensor ``lr`` read as a Python float (its current value): what a
    step computes with. The group itself is returned when its lr is a number."""
    lr = group.get("lr")
    if isinstance(lr, Tensor):
        return {**group, "lr": lr.item()}
    return group


class Optimizer:
    """Base class of all optimizers (``torch.optim.Optimizer``).

    Args:
        params: an iterable of tensors (one group), or of dicts (one group each) with a
            ``"params"`` entry and per-group options overriding ``defaults``. Tensors must
            be leaves (or retain grad), e.g. ``model.parameters()``.
        defaults: the options' default values; ``required`` marks one with no default.

    Subclasses implement ``_step_group(group)`` (the update of one group, run under
    ``no_grad``) or override ``step`` itself as in PyTorch.

    Raises:
        TypeError: ``params`` is a single Tensor, a set, or holds something not a Tensor.
        ValueError: an empty parameter list, a non-leaf tensor, a parameter in two groups,
            or a group missing a required option.
    """

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got a Tensor; wrap it in a list: [t]")
        if isinstance(params, (set, frozenset)):
            raise TypeError(_SET_MESSAGE)
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list; pass the tensors to "
                             "optimize, e.g. model.parameters()")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)
        check_flags(type(self).__name__, defaults)

    # --- groups ------------------------------------------------------------------------
    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters with its own options.

        Options the group leaves out take the optimizer's defaults. Useful to unfreeze
        layers while training. Raises as described on the class; a tensor listed twice in
        the group only warns (PyTorch does the same).
        Reference: torch.optim.Optimizer.add_param_group.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError("param_group must have a 'params' entry with the tensors to "
                             f"optimize; got keys {sorted(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(_SET_MESSAGE)
        else:
            params = list(params)
        param_group["params"] = params
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params "
                                f"is {type(p).__name__}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor; optimize the leaf it was "
                                 "computed from, or make a new leaf with .detach()"
                                 ".requires_grad_()")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        ids = {id(p) for p in params}
        if len(ids) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "each step would update them more than once; list each tensor once",
                          stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # --- gradients and steps ------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the ``.grad`` of every parameter (``torch.optim.Optimizer.zero_grad``).

        ``set_to_none=True`` (default) sets them to None, so the next step skips
        parameters that get no gradient; False zeroes them in place (detached first).
        """
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        """Update every parameter that has a ``.grad``, group by group; return the loss.

        ``closure`` (optional) is a callable that re-evaluates the model and returns the
        loss; it runs with grad mode on, before the update.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._check_grads()
        # NOTE: PyTorch's differentiable=True: the update is recorded by autograd.
        with set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            for group in self.param_groups:
                self._step_group(group_values(group))
        return loss

    def _check_grads(self) -> None:
        """Raise before any update unless every ``.grad`` still fits its parameter (shape,
        dtype, device): a step updates all parameters or none. A gradient can stop fitting
        when ``p.data`` is replaced after backward."""
        for j, group in enumerate(self.param_groups):
            for i, p in enumerate(group["params"]):
                g = p._grad
                if g is not None:
                    _check_grad(p, g, f"optimizer step: parameter {i} of param group {j}: "
                                      f"its .grad")
                    if group.get("fused") and not p.is_floating_point():
                        raise RuntimeError(
                            f"`fused=True` requires all the params to be floating point "
                            f"Tensors of supported devices but {p.dtype} and "
                            f"{p.device.type} (parameter {i} of param group {j}); pass "
                            f"fused=None, or floating point parameters")

    def _step_group(self, group: dict) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement _step_group(group) "
                                  f"or override step(closure=None)")

    def _params_with_grad(self, group: dict, *buffers: str):
        """Yield ``(p, grad, state)`` for each parameter of ``group`` with a gradient: the
        shared start of an update step, in PyTorch's order.

        The state is created on first use, ``{"step": 0}`` plus a zero tensor like ``p``
        for each name in ``buffers``; ``state["step"]`` is then advanced. ``grad`` is
        negated when ``group["maximize"]``; a nonzero ``group["weight_decay"]`` shrinks
        ``p`` in place by ``1 - lr * weight_decay`` when
        ``group.get("decoupled_weight_decay")`` (AdamW-style), else adds
        ``weight_decay * p`` to ``grad`` (an L2 penalty).
        """
        lr, weight_decay = group["lr"], group["weight_decay"]
        maximize, decoupled = group["maximize"], group.get("decoupled_weight_decay", False)
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = 0
                for name in buffers:
                    state[name] = zeros_like(p)
            state["step"] += 1
            if maximize:
                grad = -grad
            if weight_decay != 0:
                if decoupled:
                    p.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(p, alpha=weight_decay)
            yield p, grad, state

    # --- state dict ----------------------------------------------------------------------
    def state_dict(self) -> dict:
        """The optimizer's state as ``{"state": {id: {...}}, "param_groups": [...]}``.

        Parameters are replaced by integer ids numbering them in group order; group options
        are copied, state tensors are the live ones (see the module docstring).
        Reference: torch.optim.Optimizer.state_dict.
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a ``state_dict()``: group options and per-parameter state.

        Parameters are matched by position (the saved ids in group order against this
        optimizer's groups). State tensors are copied and cast to their parameter's dtype
        (if floating) and device; ``"step"`` is kept as saved.

        Raises:
            ValueError: not a state dict, a different number of groups, or a group of a
                different size than this optimizer's.
        """
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= state_dict.keys():
            got = sorted(state_dict) if isinstance(state_dict, dict) else type(state_dict).__name__
            raise ValueError(f"expected an optimizer state dict with keys 'state' and "
                             f"'param_groups' (from Optimizer.state_dict()), got {got}")
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError(f"loaded state dict has a different number of parameter groups: "
                             f"{len(saved_groups)} saved, {len(groups)} in this optimizer; "
                             f"build the optimizer with the same groups as the saved one")
        for i, (g, s) in enumerate(zip(groups, saved_groups)):
            if len(g["params"]) != len(s["params"]):
                raise ValueError(f"loaded state dict contains a parameter group that doesn't "
                                 f"match the size of optimizer's group: group {i} has "
                                 f"{len(s['params'])} saved parameters, {len(g['params'])} "
                                 f"here")
        id_map = dict(zip(chain.from_iterable(s["params"] for s in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v)
            else:
                state[k] = v
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            _fill_defaults(s, self.defaults)
        self.state = state
        self.param_groups = saved_groups

    # --- pickling and printing --------------------------------------------------------------
    def __getstate__(self) -> dict:
        # NOTE: an LR scheduler patches ``step`` on the instance; that closure stays behind.
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for group in self.param_groups:
            _fill_defaults(group, self.defaults)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"


def _fill_defaults(group: dict, defaults: dict) -> None:
    """Give a group saved before an option existed (an older ember's file, without
    ``foreach`` / ``capturable`` / ...) that option's default, as PyTorch's
    ``__setstate__`` does."""
    for name, default in defaults.items():
        if default is not required:
            group.setdefault(name, default)


def _cast(param: Tensor, value, key=None):
    """A copy of ``value`` with its tensors on ``param``'s device (and dtype, if floating)."""
    if isinstance(value, Tensor):
        if key == "step":  # PyTorch keeps step counts as saved (issue 74424)
            return value.clone()
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device, copy=True)
        return value.to(device=param.device, copy=True)
    if isinstance(value, dict):
        return {k: _cast(param, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v) for v in value)
    return value
