"""Sliding blocks: ``unfold`` (im2col) and its adjoint ``fold`` (col2im).

Both are composite ops (``native_functions.yaml``, section ``nn: pooling``) built from
ember ops, so each is the other's gradient without a kernel and autograd goes to any
order:

* ``im2col`` zero-pads H and W, takes one strided slice per kernel offset (i, j) -- the
  (L_h, L_w) grid of cells that offset touches in every block -- and stacks the kh kw
  slices as rows: (N, C, kh kw, L_h, L_w) -> (N, C kh kw, L).
* ``col2im`` does the reverse per kernel offset: spreads its (L_h, L_w) row onto the
  stride grid (zeros between, by padding a new axis and flattening), pads it to its
  place in the padded plane, sums the kh kw planes and crops the padding.

kh kw slices (or planes) instead of a loop over the L blocks keeps the Python work
independent of the image size. Both run as kernel pairs (``autograd/kernel_pair.py``):
``im2col_array`` (kh kw strided copies into one result) and ``col2im_array`` (kh kw
strided in-place adds into zeros), each the other's backward, one autograd node per call;
the op-by-op forms stay the reference for double backward and tracing.
Reference: torch.nn.functional.unfold / fold (im2col, col2im as in Chellapilla et al. 2006).
"""
from __future__ import annotations

from ember.ops import namespace as E
from ember.autograd import kernel_pair as _fused
from ember.errors import ShapeError
from ember.ops.composite import composite

__all__ = ["unfold", "fold"]


def _check_args(kernel_size, dilation, padding, stride) -> None:
    for name, what, (a, b), ok in (
            ("kernel size", "kernel", kernel_size, lambda v: v > 0),
            ("dilation", "dilation", dilation, lambda v: v > 0),
            ("padding", "pad", padding, lambda v: v >= 0),
            ("stride", "stride", stride, lambda v: v > 0)):
        if not (ok(a) and ok(b)):
            rule = "be non-negative" if name == "padding" else "be greater than zero"
            raise ShapeError(f"{name} should {rule}, but got {what}_height: {a} {what}_width: "
                             f"{b}")


def _blocks(size, kernel_size, dilation, padding, stride) -> tuple:
    """(L_h, L_w): how many block positions fit along H and W."""
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in
                 zip(size, kernel_size, dilation, padding, stride))


def _check_floating(op: str, x) -> None:
    if not x.is_floating_point():
        raise NotImplementedError(f"{op}(): expected a floating input (float16, bfloat16, "
                                  f"float32, float64), got {x.dtype}; convert it first, "
                                  f"e.g. x.float()")


def _check_im2col(self, kernel_size, dilation, padding, stride) -> tuple:
    """Checks of unfold's arguments; returns (L_h, L_w)."""
    if self.ndim not in (3, 4) or any(n == 0 for n in self.shape[-3:]):
        raise ShapeError(f"unfold(): expected a 3-D (C, H, W) or 4-D (N, C, H, W) input with "
                         f"non-zero C, H and W (N may be 0), got shape {list(self.shape)}")
    _check_args(kernel_size, dilation, padding, stride)
    _check_floating("unfold", self)
    size = tuple(self.shape[-2:])
    lh, lw = _blocks(size, kernel_size, dilation, padding, stride)
    if lh < 1 or lw < 1:
        raise ShapeError(f"Given input with spatial size {size}, kernel_size="
                         f"{tuple(kernel_size)}, dilation={tuple(dilation)}, padding="
                         f"{tuple(padding)}, calculated shape of the array of sliding blocks "
                         f"as {(lh, lw)}, but its components must be at least one.")
    return lh, lw


def _im2col_reference(self, kernel_size, dilation, padding, stride, *_):
    """The op-by-op form: one strided slice of the padded input per kernel offset."""
    lh, lw = _blocks(tuple(self.shape[-2:]), kernel_size, dilation, padding, stride)
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    x = E.pad(self, (pw, pw, ph, ph)) if ph or pw else self
    rows = [x[..., i * dh:i * dh + (lh - 1) * sh + 1:sh, j * dw:j * dw + (lw - 1) * sw + 1:sw]
            for i in range(kh) for j in range(kw)]
    lead, c = tuple(self.shape[:-3]), self.shape[-3]
    return E.stack(rows, -3).reshape(lead + (c * kh * kw, lh * lw))


def _spread(x, dim: int, step: int, n: int):
    """x with step - 1 zeros after each cell along ``dim`` (negative), cut to n cells."""
    if step == 1:
        return x
    x = x.unsqueeze(dim)  # the new axis sits after the spread one
    pad = [0, 0] * (-dim - 1) + [0, step - 1]
    x = E.pad(x, pad)
    shape = list(x.shape)
    shape[dim - 1:dim + 1 if dim + 1 else None] = [shape[dim - 1] * step]
    return x.reshape(shape).narrow(dim, 0, n)


def _check_col2im(self, output_size, kernel_size, dilation, padding, stride) -> None:
    if self.ndim not in (2, 3) or any(n == 0 for n in self.shape[-2:]):
        raise ShapeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                         f"batch size and non-zero dimensions for input, but got: "
                         f"{list(self.shape)}")
    _check_args(kernel_size, dilation, padding, stride)
    if output_size[0] <= 0 or output_size[1] <= 0:
        raise ShapeError(f"fold(): output_size should be greater than zero, but got "
                         f"{tuple(output_size)}")
    _check_floating("fold", self)
    kh, kw = kernel_size
    ck, length = self.shape[-2:]
    if ck % (kh * kw):
        raise ShapeError(f"Expected size of input's dimension 1 to be divisible by the product "
                         f"of kernel_size, but got input.size(1)={ck} and kernel_size="
                         f"{tuple(kernel_size)}.")
    lh, lw = _blocks(output_size, kernel_size, dilation, padding, stride)
    if lh < 1 or lw < 1 or lh * lw != length:
        raise ShapeError(f"Given output_size={tuple(output_size)}, kernel_size="
                         f"{tuple(kernel_size)}, dilation={tuple(dilation)}, padding="
                         f"{tuple(padding)}, stride={tuple(stride)}, expected size of input's "
                         f"dimension 2 to match the calculated number of sliding blocks {lh} * "
                         f"{lw} = {lh * lw}, but got input.size(2)={length}.")


def _col2im_reference(self, output_size, kernel_size, dilation, padding, stride, *_):
    """The op-by-op form: each kernel offset's row spread onto the stride grid, padded to
    its place, summed."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    lh, lw = _blocks(output_size, kernel_size, dilation, padding, stride)
    ck = self.shape[-2]
    lead, c = tuple(self.shape[:-2]), ck // (kh * kw)
    h, w = output_size
    hp, wp = h + 2 * ph, w + 2 * pw
    span_h, span_w = (lh - 1) * sh + 1, (lw - 1) * sw + 1
    cols = self.reshape(lead + (c, kh, kw, lh, lw))
    out = None
    for i in range(kh):
        for j in range(kw):
            plane = _spread(_spread(cols[..., i, j, :, :], -2, sh, span_h), -1, sw, span_w)
            top, left = i * dh, j * dw
            plane = E.pad(plane, (left, wp - left - span_w, top, hp - top - span_h))
            out = plane if out is None else out + plane
    return out[..., ph:ph + h, pw:pw + w] if ph or pw else out


# NOTE: both ops run as kernel pairs (autograd/kernel_pair.py): each kernel is kh kw
# strided copies (im2col) or in-place strided adds (col2im) on arrays, and each one's
# backward is the other; the op-by-op forms above stay the reference (double backward,
# tracing).
def _offsets(kernel_size, dilation, padding, stride, blocks):
    """Per kernel offset (i, j): the index of the (L_h, L_w) cells it touches in the
    padded plane."""
    (kh, kw), (dh, dw), (sh, sw), (lh, lw) = kernel_size, dilation, stride, blocks
    return [(i, j, (slice(i * dh, i * dh + (lh - 1) * sh + 1, sh),
                    slice(j * dw, j * dw + (lw - 1) * sw + 1, sw)))
            for i in range(kh) for j in range(kw)]


def im2col_array(xp, x, kernel_size, dilation, padding, stride, blocks):
    """unfold of an array x (.., C, H, W) -> (.., C kh kw, L_h L_w): kh kw strided copies
    of the zero-padded planes into one result."""
    (kh, kw), (ph, pw) = kernel_size, padding
    lead, c = x.shape[:-3], x.shape[-3]
    if ph or pw:
        xp_ = xp.zeros(x.shape[:-2] + (x.shape[-2] + 2 * ph, x.shape[-1] + 2 * pw), x.dtype)
        xp_[..., ph:ph + x.shape[-2], pw:pw + x.shape[-1]] = x
        x = xp_
    out = xp.empty(lead + (c, kh, kw) + tuple(blocks), dtype=x.dtype)
    for i, j, cells in _offsets(kernel_size, dilation, padding, stride, blocks):
        out[..., i, j, :, :] = x[(Ellipsis,) + cells]
    return out.reshape(lead + (c * kh * kw, blocks[0] * blocks[1]))


def col2im_array(xp, cols, output_size, kernel_size, dilation, padding, stride, blocks):
    """fold of an array cols (.., C kh kw, L) -> (.., C, *output_size): kh kw strided
    in-place adds into the zero-padded planes, cropped."""
    (kh, kw), (ph, pw), (h, w) = kernel_size, padding, output_size
    lead = cols.shape[:-2]
    c = cols.shape[-2] // (kh * kw)
    cols = cols.reshape(lead + (c, kh, kw) + tuple(blocks))
    out = xp.zeros(lead + (c, h + 2 * ph, w + 2 * pw), dtype=cols.dtype)
    for i, j, cells in _offsets(kernel_size, dilation, padding, stride, blocks):
        out[(Ellipsis,) + cells] += cols[..., i, j, :, :]
    return out[..., ph:ph + h, pw:pw + w] if ph or pw else out


def _im2col_forward(xp, arrays, args):
    return im2col_array(xp, arrays[0], *args), None


def _im2col_backward(xp, grad, arrays, state, args, needs):
    x = arrays[0]
    return (col2im_array(xp, grad, x.shape[-2:], *args),)


def _col2im_forward(xp, arrays, args):
    return col2im_array(xp, arrays[0], *args), None


def _col2im_backward(xp, grad, arrays, state, args, needs):
    return (im2col_array(xp, grad, *args[1:]),)


@composite("im2col")
def _im2col(self, kernel_size, dilation, padding, stride):
    blocks = _check_im2col(self, kernel_size, dilation, padding, stride)
    args = (tuple(kernel_size), tuple(dilation), tuple(padding), tuple(stride), blocks)
    return _fused.run("im2col", _im2col_reference, _im2col_forward, _im2col_backward,
                      (self,), args)


@composite("col2im")
def _col2im(self, output_size, kernel_size, dilation, padding, stride):
    _check_col2im(self, output_size, kernel_size, dilation, padding, stride)
    blocks = _blocks(output_size, kernel_size, dilation, padding, stride)
    args = (tuple(output_size), tuple(kernel_size), tuple(dilation), tuple(padding),
            tuple(stride), blocks)
    return _fused.run("col2im", _col2im_reference, _col2im_forward, _col2im_backward,
                      (self,), args)


def _pair(v) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks (im2col): (N, C, H, W) -> (N, C * kh * kw, L), or
    unbatched (C, H, W) -> (C * kh * kw, L).

    Row ``c * kh * kw + i * kw + j`` of column ``l = bh * L_w + bw`` holds input[c, bh *
    s_h - p_h + i * d_h, bw * s_w - p_w + j * d_w] (zero outside the input), L = L_h * L_w
    with L_h = (H + 2 p_h - d_h (kh - 1) - 1) // s_h + 1. ``kernel_size``, ``dilation``,
    ``padding`` and ``stride`` are ints or pairs. Floating dtypes. Its gradient is
    :func:`fold`. Raises ShapeError for a bad rank, an empty C/H/W, a non-positive kernel
    size, dilation or stride, negative padding or no block fitting; NotImplementedError
    for integral input. Reference: torch.nn.functional.unfold.
    """
    return E.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine sliding local blocks into a tensor (col2im), the adjoint of :func:`unfold`:
    (N, C * kh * kw, L) -> (N, C, *output_size), or unbatched (C * kh * kw, L) -> (C,
    *output_size).

    Each column's values are summed into the cells its block covers (overlaps add up;
    cells in the padding are dropped), so ``fold(unfold(x))`` is x times how many blocks
    cover each cell. Arguments as in unfold; ``output_size`` is an int or (H, W). Floating
    dtypes. Raises ShapeError for a bad rank, dim 1 not divisible by kh * kw, an L that
    does not match output_size, and what unfold raises; NotImplementedError for integral
    input. Reference: torch.nn.functional.fold.
    """
    return E.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation),
                    _pair(padding), _pair(stride))
