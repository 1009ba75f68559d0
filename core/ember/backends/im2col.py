"""The native convolution algorithm: im2col + GEMM, written once against ``xp``.

Every convolution is reduced to three products of a *regular* convolution with
``G`` groups, input ``x`` (N, C, *S), weight ``w`` (C_out, C/G, *K) and output ``y``
(N, C_out, *O)::

    columns  X[g, (c, k), o] = x_pad[n, g*C/G + c, o*stride + k*dilation]   (per image n)
    forward  y  = W @ X                      W: (G, C_out/G, C/G*prod(K))
    weight   gw = sum over images of gY @ X^T
    input    gx = col2im(W^T @ gY)           add each kernel offset's slice back

With stride 1 the input gradient is instead a convolution of gY with the flipped kernel
(a copy per kernel offset instead of col2im's read-add-write), unless C_out is much
larger than C. A transposed convolution is the input gradient of the regular
convolution whose output has the transposed input's shape, and its backward is that
regular convolution's forward (grad_input) and weight gradient, roles swapped.

Layout (why it is fast): the batch is processed in chunks of ``nb`` images whose columns
fit in about ``COLUMN_BYTES`` (cache resident; buffers are reused across chunks). A chunk
is copied once into a zero-bordered buffer, and its columns are a strided view of it
(``as_strided``, no index arrays) copied once into the GEMM operand. That copy runs at the
speed of its innermost contiguous run, so:

* image-major (the default): buffer (nb, C, *S_pad), runs of ``O[-1]``; one GEMM per
  image writes straight into the (N, C_out, *O) output, grad_output is used in place;
* batch-inner, for rows shorter than ``BATCH_INNER_BELOW`` (4x4 feature maps): buffer
  (C, *S_pad, nb), runs of ``O[-1] * nb``, one GEMM per group over all images; y and
  grad_output are transposed to and from (C_out, *O, nb).

Dtypes: float32 and float64 compute in their own dtype; float16 and bfloat16 compute in
float32 and round once at the end (numpy has no half-precision GEMM; PyTorch's CPU
kernels accumulate in float32 too). Integral and bool inputs are declined.

Reference: Chellapilla et al., "High Performance Convolutional Neural Networks for
Document Processing" (2006), the im2col lowering; torch's ``slow_conv2d`` / ``col2im``.
"""
from __future__ import annotations

import itertools
import math
import threading
from collections import OrderedDict

from .convolution import ConvParams, Decline, bias_grad

__all__ = ["Im2colConvolution"]

COLUMN_BYTES = 4 << 20   # target size of one chunk's column matrix (L2/L3 resident)
BATCH_INNER_BELOW = 8     # output rows shorter than this put the image axis innermost
_PLAN_CACHE_SIZE = 256
# NOTE: a chunk's buffers (padded input, columns, GEMM results) are kept per thread for the
# most recent plans: freshly allocated buffers of a few hundred KB come from mmap, and their
# page faults cost more than the copies into them (3x the whole forward of the digits CNN's
# second convolution). At most COLUMN_BYTES-sized chunks, so a few MB per plan.
_WORKSPACE_PLANS = 8


def _inside(first: int, stride: int, n_out: int, pad: int, size: int):
    """Outputs ``j`` in [0, n_out) whose tap ``first + stride * j`` (padded coordinates)
    lies in the input [pad, pad + size): (slice of j, slice of input positions), or None
    when there are none."""
    lo = max(0, -((first - pad) // stride))                 # ceil((pad - first) / stride)
    hi = min(n_out - 1, (pad + size - 1 - first) // stride)
    if hi < lo:
        return None
    start = first + stride * lo - pad
    return slice(lo, hi + 1), slice(start, start + stride * (hi - lo) + 1, stride)


class _Plan:
    """The geometry of one regular convolution, precomputed once per ``ConvParams``.

    ``spatial`` is the input's spatial size and ``out`` the output's; for a transposed
    call they are the transposed output's and input's (the regular conv it inverts).

    Two layouts of a chunk of ``m`` images (see the module docstring):

    * image-major: buffer (m, C, *padded); columns (m, G, C/G*prod(K), prod(O)), one GEMM
      per image and group, whose results are already (m, C_out, *O), so y and grad_output
      need no transposes;
    * ``batch_inner``: buffer (C, *padded, m); columns (G, C/G*prod(K), prod(O)*m), one
      GEMM per group; y and grad_output are moved to and from (C_out, *O, m).
    """

    __slots__ = ("n", "c", "c_out", "groups", "ckk", "kg", "kernel", "out", "padded", "nb",
                 "batch_inner", "interior", "to_buf", "from_buf", "views", "col2im", "flipped",
                 "spatial")

    def __init__(self, n, c, c_out, groups, spatial, kernel, out, stride, padding, dilation,
                 itemsize):
        nd = len(spatial)
        self.flipped = None   # set by Im2colConvolution._plan where it applies
        self.n, self.c, self.c_out, self.groups = n, c, c_out, groups
        self.kernel, self.out, self.spatial = tuple(kernel), tuple(out), tuple(spatial)
        self.ckk = c // groups * math.prod(kernel)
        self.kg = c_out // groups
        self.padded = tuple(s + 2 * p for s, p in zip(spatial, padding))
        per_image = (self.ckk * groups + c_out) * math.prod(out) * itemsize
        self.nb = max(1, min(n, COLUMN_BYTES // max(per_image, 1)))
        # NOTE: gathering columns costs one strided copy whose speed is set by its
        # innermost contiguous run: out[-1] image-major, out[-1] * m batch-inner.
        self.batch_inner = out[-1] < BATCH_INNER_BELOW and self.nb > 1
        inner = tuple(slice(p, p + s) for s, p in zip(spatial, padding))
        everything = (slice(None),)
        if self.batch_inner:
            self.interior = (slice(None), *inner, slice(None))
            self.to_buf, self.from_buf = (*range(1, nd + 2), 0), (nd + 1, *range(nd + 1))
        else:
            self.interior = (slice(None), slice(None), *inner)
            self.to_buf = self.from_buf = None
            everything = (slice(None), slice(None))
        self.views = {m: self._view(m, stride, dilation) for m in
                      {self.nb, n % self.nb or self.nb}}
        # col2im: for each kernel offset, (index into the columns, slice of the input
        # gradient) over the outputs whose tap lands inside the input (not its padding):
        # the sums go straight into an unpadded (C, *S, m) or (m, C, *S) array.
        self.col2im = []
        for offset in itertools.product(*map(range, kernel)):
            taps = [_inside(k * d, q, o, p, s) for k, d, q, o, p, s in
                    zip(offset, dilation, stride, out, padding, spatial)]
            if all(t is not None for t in taps):
                src = (*everything, *offset, *(t[0] for t in taps))
                dst = (*everything, *(t[1] for t in taps))
                self.col2im.append((src, dst))

    def buffer_shape(self, m: int) -> tuple:
        return (self.c, *self.padded, m) if self.batch_inner else (m, self.c, *self.padded)

    def unpadded_shape(self, m: int) -> tuple:
        """The input's chunk in this layout: (C, *S, m) batch-inner, (m, C, *S)."""
        return (self.c, *self.spatial, m) if self.batch_inner else (m, self.c, *self.spatial)

    def grad_shape(self, m: int) -> tuple:
        """Batch-inner layout of y and grad_output chunks: (C_out, *O, m)."""
        return (self.c_out, *self.out, m)

    def gemm_shape(self, m: int, rows: int) -> tuple:
        """(.., G, rows, columns): ``rows`` ckk for columns, kg for y / grad_output."""
        if self.batch_inner:
            return (self.groups, rows, -1)
        return (m, self.groups, rows, -1)

    def _view(self, m, stride, dilation):
        """(shape, element strides) of the columns of an m-image buffer: (G, C/G, *K, *O,
        m) batch-inner, (m, G, C/G, *K, *O) image-major."""
        shape = self.buffer_shape(m)
        st = [1]
        for size in reversed(shape[1:]):
            st.append(st[-1] * size)
        st.reverse()                        # contiguous element strides of the buffer
        cg = self.c // self.groups
        if self.batch_inner:
            ch, sp = st[0], st[1:-1]
            lead, tail = [], [(m, 1)]
        else:
            ch, sp = st[1], st[2:]
            lead, tail = [(m, st[0])], []
        dims = lead + [(self.groups, ch * cg), (cg, ch)]
        dims += [(k, d * s) for k, d, s in zip(self.kernel, dilation, sp)]
        dims += [(o, q * s) for o, q, s in zip(self.out, stride, sp)] + tail
        return tuple(a for a, _ in dims), tuple(b for _, b in dims)


class Im2colConvolution:
    """im2col + GEMM convolution for one backend's array namespace ``xp``.

    Supports 1 to 3 spatial dims, stride, padding, dilation, groups, transposed with
    output_padding, and bias; arrays (N, C, *spatial) of float16, bfloat16, float32 or
    float64. ``priority`` 0: the fallback every faster algorithm outranks.
    """

    name = "native_im2col"
    priority = 0
    supports_groups = True

    def __init__(self, xp, device_type: str):
        self.xp = xp
        self.device_type = device_type
        self._as_strided = xp.lib.stride_tricks.as_strided
        self._plans: dict = {}
        self._tls = threading.local()

    def __repr__(self) -> str:
        return f"Im2colConvolution({self.device_type!r})"

    def supports(self, params: ConvParams):
        """True for floating dtypes; a ``Decline`` for integral and bool ones."""
        if not params.dtype.is_floating_point:
            return Decline(f"dtype {params.dtype} is not floating point (convolution takes "
                           f"float16, bfloat16, float32 or float64)")
        return True

    # ---- the algorithm protocol ----

    def forward(self, input, weight, bias, params: ConvParams):
        """``_convolution``: (N, C_in, *S) x weight -> (N, C_out, *O), plus bias."""
        xp = self.xp
        plan = self._plan(params)
        w = self._weight(weight)
        out = xp.empty(params.output_shape, dtype=input.dtype)
        # NOTE: batch-inner, the bias goes onto the GEMM's long rows before the transpose
        # (2x faster than onto the short rows of the (N, C_out, *O) output)
        on_rows = bias if plan.batch_inner and not params.transposed else None
        if params.transposed:
            self._input_grad(plan, w, input, out)
        else:
            self._run(plan, w, x=input, y_out=out, bias=on_rows)
        if bias is not None and on_rows is None:
            out += bias.reshape((1, -1) + (1,) * params.spatial_dims)
        return out

    def backward(self, grad_output, input, weight, params: ConvParams, output_mask):
        """``convolution_backward``: (grad_input, grad_weight, grad_bias), each None where
        ``output_mask`` is False."""
        xp = self.xp
        need_input, need_weight, need_bias = output_mask
        if input.size == 0 or grad_output.size == 0:  # an empty batch: zero gradients
            def zeros(like, shape):
                return xp.zeros(shape, dtype=like.dtype)
            return (zeros(input, input.shape) if need_input else None,
                    zeros(weight, weight.shape) if need_weight else None,
                    zeros(weight, (params.output_shape[1],)) if need_bias else None)
        plan = self._plan(params)
        w = self._weight(weight) if need_input else None
        gi = xp.empty(input.shape, dtype=input.dtype) if need_input else None
        gw = None
        if params.transposed:   # the regular conv sees grad_output as its input
            if need_input or need_weight:
                gw = self._run(plan, w, x=grad_output, gy=input if need_weight else None,
                               y_out=gi, want_gw=need_weight)
        elif need_input:
            gw = self._input_grad(plan, w, grad_output, gi, input, need_weight)
        elif need_weight:
            gw = self._run(plan, None, x=input, gy=grad_output, want_gw=True)
        if gw is not None:
            gw = gw.reshape(weight.shape).astype(weight.dtype, copy=False)
        gb = bias_grad(xp, grad_output) if need_bias else None
        return gi, gw, gb

    # ---- internals ----

    def _compute_dtype(self, dtype):
        xp = self.xp
        return dtype if dtype in (xp.float32, xp.float64) else xp.dtype(xp.float32)

    def _weight(self, weight):
        """The weight in the compute dtype (itself when it already is)."""
        return weight.astype(self._compute_dtype(weight.dtype), copy=False)

    def _plan(self, p: ConvParams) -> _Plan:
        plan = self._plans.get(p)
        if plan is None:
            if len(self._plans) >= _PLAN_CACHE_SIZE:
                self._plans.clear()
            itemsize = max(p.dtype.itemsize, 4)      # half precision computes in float32
            n, ci = p.input_shape[:2]
            if p.transposed:      # the regular conv from the output back to the input
                out_shape = p.output_shape
                plan = _Plan(n, out_shape[1], ci, p.groups, out_shape[2:], p.kernel_size,
                             p.input_shape[2:], p.stride, p.padding, p.dilation, itemsize)
            else:
                plan = _Plan(n, ci, p.weight_shape[0], p.groups, p.input_shape[2:],
                             p.kernel_size, p.output_shape[2:], p.stride, p.padding,
                             p.dilation, itemsize)
            plan.flipped = self._flipped_plan(plan, p, itemsize)
            self._plans[p] = plan
        return plan

    @staticmethod
    def _flipped_plan(plan: _Plan, p: ConvParams, itemsize: int):
        """With stride 1, the input gradient is itself a convolution: of grad_output with
        the flipped, channel-swapped kernel and padding ``d * (k - 1) - p``. Gathering its
        columns copies prod(K) * C_out values an input element where col2im does prod(K)
        * C read-add-writes: used unless C_out > 1.5 * C, and only where it gives the
        input's size exactly (not with output_padding, nor padding > d * (k - 1))."""
        spatial = p.output_shape[2:] if p.transposed else p.input_shape[2:]
        pad = tuple(d * (k - 1) - q for d, k, q in zip(p.dilation, plan.kernel, p.padding))
        if 2 * plan.c_out > 3 * plan.c or any(s != 1 for s in p.stride) or \
                any(q < 0 for q in pad) or \
                any(o + 2 * q - d * (k - 1) != s for o, q, d, k, s in
                    zip(plan.out, pad, p.dilation, plan.kernel, spatial)):
            return None
        return _Plan(plan.n, plan.c_out, plan.c, plan.groups, plan.out, plan.kernel, spatial,
                     p.stride, pad, p.dilation, itemsize)

    def _input_grad(self, plan: _Plan, w, gy, gx_out, x=None, want_gw=False):
        """``gx = conv_input_grad(gy, w)`` into ``gx_out`` (and ``gw`` from ``x``, ``gy``
        when ``want_gw``): a convolution with the flipped kernel where ``plan`` has one,
        else col2im."""
        if plan.flipped is None:
            return self._run(plan, w, x=x, gy=gy, gx_out=gx_out, want_gw=want_gw)
        gw = self._run(plan, None, x=x, gy=gy, want_gw=True) if want_gw else None
        g, nd = plan.groups, w.ndim - 2
        c_out, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
        flipped = w.reshape(g, c_out // g, cg, *kernel).swapaxes(1, 2)
        flipped = flipped[(Ellipsis,) + (slice(None, None, -1),) * nd]
        flipped = self.xp.ascontiguousarray(flipped).reshape(g * cg, c_out // g, *kernel)
        self._run(plan.flipped, flipped, x=gy, y_out=gx_out)
        return gw

    def _workspace(self, plan: _Plan) -> dict:
        """This thread's buffers for ``plan`` (chunk size -> name -> array), kept for the
        last ``_WORKSPACE_PLANS`` plans used."""
        cache = getattr(self._tls, "plans", None)
        if cache is None:
            cache = self._tls.plans = OrderedDict()
        ws = cache.get(plan)
        if ws is None:
            ws = cache[plan] = {}
            if len(cache) > _WORKSPACE_PLANS:
                cache.popitem(last=False)
        else:
            cache.move_to_end(plan)
        return ws

    def _run(self, plan: _Plan, w, x=None, gy=None, y_out=None, gx_out=None, want_gw=False,
             bias=None):
        """One pass over the batch in chunks of the regular convolution of ``plan``.

        ``x`` (N, C, *S) and ``gy`` (N, C_out, *O) are the inputs; writes ``y = conv(x,
        w)`` (plus ``bias``, (C_out,), batch-inner only) into ``y_out``, ``gx =
        conv_input_grad(gy, w)`` into ``gx_out`` and returns ``gw = conv_weight_grad(x,
        gy)`` (G, C_out/G, C/G*prod(K)) when ``want_gw``.
        Only the columns and layouts those need are built; each is built once a chunk.
        """
        xp = self.xp
        ct = w.dtype if w is not None else self._compute_dtype((x if x is not None
                                                                else gy).dtype)
        g, kg, ckk, bi = plan.groups, plan.kg, plan.ckk, plan.batch_inner
        wm = w.reshape(g, kg, ckk) if w is not None else None
        wt = wm.transpose(0, 2, 1) if gx_out is not None else None
        gw = None
        bufs = self._workspace(plan)
        for n0 in range(0, plan.n, plan.nb):
            n1 = min(plan.n, n0 + plan.nb)
            m = n1 - n0
            buf = bufs.get(m)
            if buf is None:
                buf = bufs[m] = {}
            cols = gyt = None
            if x is not None:
                if "x" not in buf:   # zeroed once: only the interior is written
                    xb = buf["x"] = xp.zeros(plan.buffer_shape(m), dtype=ct)
                    buf["cols"] = xp.empty(plan.views[m][0], dtype=ct)
                    shape, strides = plan.views[m]
                    # the columns as a strided view of the buffer, made once (as_strided
                    # costs more than the copy of a small chunk)
                    buf["taps"] = self._as_strided(xb, shape, tuple(s * xb.itemsize
                                                                    for s in strides))
                buf["x"][plan.interior] = x[n0:n1].transpose(plan.to_buf) if bi else x[n0:n1]
                xp.copyto(buf["cols"], buf["taps"])
                cols = buf["cols"].reshape(plan.gemm_shape(m, ckk))
            if gy is not None:
                if bi:
                    if "gy" not in buf:
                        buf["gy"] = xp.empty(plan.grad_shape(m), dtype=ct)
                    xp.copyto(buf["gy"], gy[n0:n1].transpose(plan.to_buf))
                    gyt = buf["gy"].reshape(g, kg, -1)
                else:
                    gyt = gy[n0:n1].astype(ct, copy=False).reshape(m, g, kg, -1)
            if y_out is not None:
                if bi:
                    if "y" not in buf:
                        buf["y"] = xp.empty((g, kg, cols.shape[-1]), dtype=ct)
                    y = xp.matmul(wm, cols, out=buf["y"])
                    if bias is not None:
                        y += bias.reshape(g, kg, 1)
                    y = y.reshape(plan.grad_shape(m))
                    y_out[n0:n1] = y.transpose(plan.from_buf)
                elif y_out.dtype == ct:   # the GEMM writes the output in place
                    xp.matmul(wm, cols, out=y_out[n0:n1].reshape(m, g, kg, -1))
                else:
                    y_out[n0:n1] = xp.matmul(wm, cols).reshape(y_out[n0:n1].shape)
            if want_gw:
                part = xp.matmul(gyt, cols.swapaxes(-1, -2))
                if not bi:
                    part = part.sum(axis=0)
                gw = part if gw is None else gw + part
            if gx_out is not None:
                if "gcols" not in buf:
                    buf["gcols"] = xp.empty((g, ckk, gyt.shape[-1]) if bi else
                                            (m, g, ckk, gyt.shape[-1]), dtype=ct)
                gcols = xp.matmul(wt, gyt, out=buf["gcols"])
                gcols = gcols.reshape((plan.c, *plan.kernel, *plan.out, m) if bi else
                                      (m, plan.c, *plan.kernel, *plan.out))
                in_place = not bi and gx_out.dtype == ct   # summed in gx_out's layout
                if in_place:
                    gxb = gx_out[n0:n1]
                else:
                    if "gx" not in buf:
                        buf["gx"] = xp.empty(plan.unpadded_shape(m), dtype=ct)
                    gxb = buf["gx"]
                gxb.fill(0)
                for src, dst in plan.col2im:
                    gxb[dst] += gcols[src]
                if not in_place:
                    gx_out[n0:n1] = gxb.transpose(plan.from_buf) if bi else gxb
        return gw
