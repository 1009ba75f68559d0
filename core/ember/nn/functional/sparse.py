"""Embedding lookup (``torch.nn.functional.embedding``) and ``one_hot``, the sparse
functions of ``torch.nn.functional``.

``embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)`` is a composite op:
``index_select`` of the rows, so the gradient is scatter-added into ``weight`` by
index_select's own derivative (differentiable again). The two gradient options change
only the gradient, never the values, with the detach trick ``v.detach() + (v - v.detach())
* s`` (value ``v`` exactly, gradient ``s * grad``):

* ``padding_idx``: positions looking up that row are replaced by their detached value
  (``where``), so the row gets no gradient, as in PyTorch;
* ``scale_grad_by_freq``: each position's gradient is divided by the number of times its
  index occurs in ``indices`` (counted with ``scatter_add``).

``max_norm`` lives in the functional front ``embedding(input, weight, ...)``: like
PyTorch it renormalizes the referenced rows of ``weight`` in place, without recording
gradient, before the lookup. Sparse gradients are not supported (ember has no sparse
tensors).
"""
from __future__ import annotations

from ember.ops import namespace as E
from ember._base.grad_mode import is_grad_enabled, no_grad
from ember.errors import DtypeError, ShapeError
from ember.ops.composite import composite

__all__ = ["embedding", "one_hot"]


def _check(weight, indices, padding_idx):
    """Validate the lookup's operands; return ``padding_idx`` normalized to [0, n) or None."""
    if weight.ndim != 2:
        raise ShapeError(f"embedding(): expected weight of shape (num_embeddings, "
                         f"embedding_dim), got {tuple(weight.shape)}")
    if indices.dtype is not E.int64 and indices.dtype is not E.int32:
        raise DtypeError(f"embedding(): expected indices of dtype int64 or int32, got "
                         f"{indices.dtype}; convert them with .long()")
    n = weight.shape[0]
    if padding_idx is None:
        return None
    if not -n <= padding_idx < n:
        raise ValueError(f"embedding(): padding_idx must be within num_embeddings: expected "
                         f"an index in [{-n}, {n}), got {padding_idx}")
    return padding_idx % n


def _gradient_scaled(v, scale):
    # value exactly v (v - v.detach() is 0), gradient scale * grad
    d = v.detach()
    return d + (v - d) * scale


@composite("embedding")
def _embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse):
    if sparse:
        raise NotImplementedError("embedding(): sparse=True needs sparse gradients, which ember "
                                  "does not have; use sparse=False (a dense gradient)")
    padding_idx = _check(weight, indices, padding_idx)
    n, dim = weight.shape
    flat = indices.reshape(-1)
    try:
        rows = E.index_select(weight, 0, flat)
    except IndexError:
        lo, hi = int(flat.min()), int(flat.max())
        bad = lo if lo < 0 else hi
        raise IndexError(f"embedding(): index {bad} is out of range: indices must be in [0, "
                         f"num_embeddings) = [0, {n})") from None
    if weight.requires_grad and is_grad_enabled():
        if scale_grad_by_freq:
            ones = E.ones(tuple(flat.shape), dtype=weight.dtype, device=weight.device)
            counts = E.zeros(n, dtype=weight.dtype, device=weight.device)
            counts = counts.scatter_add(0, flat, ones)
            rows = _gradient_scaled(rows, E.index_select(counts, 0, flat).reciprocal()
                                    .unsqueeze(1))
        if padding_idx is not None:
            rows = E.where((flat == padding_idx).unsqueeze(1), rows.detach(), rows)
    return rows.reshape(tuple(indices.shape) + (dim,))


def _renorm_(weight, indices, max_norm: float, norm_type: float) -> None:
    """Scale each row of ``weight`` referenced by ``indices`` whose ``norm_type``-norm
    exceeds ``max_norm`` to norm ``max_norm`` (in place, not recorded by autograd)."""
    with no_grad():
        flat = indices.reshape(-1)
        rows = E.index_select(weight, 0, flat)
        norms = E.norm(rows, norm_type, 1, keepdim=True)
        # the 1e-7 is PyTorch's (embedding_renorm_); repeated indices write equal rows
        scale = E.where(norms > max_norm, max_norm / (norms + 1e-7), E.ones_like(norms))
        weight[flat] = rows * scale


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Look up rows of ``weight`` by the integer indices in ``input``.

    Args:
        input: int64 or int32 indices of any shape ``(*)``, each in [0, num_embeddings).
        weight: the table, ``(num_embeddings, embedding_dim)``, floating.
        padding_idx: a row (negative counts from the end) that gets no gradient.
        max_norm: if given, the rows referenced by ``input`` whose ``norm_type``-norm
            exceeds it are rescaled to norm ``max_norm`` *in place* in ``weight`` first
            (not recorded by autograd), as in PyTorch.
        norm_type: the p of the p-norm for ``max_norm``.
        scale_grad_by_freq: divide each row's gradient by its index's count in ``input``.
        sparse: must be False (ember has no sparse tensors).
    Returns:
        ``(*, embedding_dim)`` in ``weight``'s dtype.
    Raises:
        DtypeError: non-integer indices. IndexError: an index out of range.
        ShapeError: ``weight`` not 2-D. ValueError: ``padding_idx`` out of range, or
        ``max_norm`` not positive. NotImplementedError: ``sparse=True``.
    Reference: torch.nn.functional.embedding.
    """
    if max_norm is not None:
        if not max_norm > 0:
            raise ValueError(f"embedding(): max_norm must be positive, got {max_norm}")
        _check(weight, input, padding_idx)
        try:
            _renorm_(weight, input, float(max_norm), float(norm_type))
        except IndexError:
            pass  # the lookup below reports it with embedding's message
    return E.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def one_hot(tensor, num_classes=-1):
    """One-hot encoding of class indices: ``(*)`` int64 -> ``(*, num_classes)`` int64, 1 at
    each index and 0 elsewhere (not differentiable). num_classes=-1 infers max + 1.

    Raises DtypeError for a dtype other than int64 (use ``.long()``), IndexError for a
    class < 0 or >= num_classes, ValueError for num_classes < -1 or one inferred from an
    empty tensor. Reference: torch.nn.functional.one_hot.
    """
    return E.one_hot(tensor, num_classes)
