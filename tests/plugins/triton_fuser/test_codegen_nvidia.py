"""Generated kernels through Triton's real front end for an sm_90 GPU (no GPU needed).

The interpreter runs Python, so it accepts source the compiler would reject (a dtype
mismatch in ``tl.where``, a libdevice overload that does not exist). Here every kernel the
fuser generates for a set of groups (pointwise, broadcast, chunk, rows, every dtype
family) is lowered to Triton IR by ``ASTSource.make_ir``. That needs Triton without its
interpreter, which the other tests of this folder switch on at import (conftest.py), so
the check runs in a fresh process.
"""
import os

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.jit.runtime import fuser as jit_fuser

from ember_triton_fuser import HostOnlyFuser

from ._nvidia import nvidia_ttir, run_without_interpreter

POINTER = {"bool": "*i8", "uint8": "*u8", "int8": "*i8", "int16": "*i16", "int32": "*i32",
           "int64": "*i64", "float16": "*fp16", "bfloat16": "*bf16", "float32": "*fp32",
           "float64": "*fp64"}
RNG = np.random.default_rng(0)


def t(*shape, dtype=np.float32):
    return E.tensor(RNG.uniform(1, 5, shape).astype(dtype))


def lstm_cell(x, hx, cx, w_ih, w_hh, b):
    gates = x.mm(w_ih.t()) + hx.mm(w_hh.t()) + b
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


CASES = [
    (lambda a, b: ((a * 1.5 + b).sigmoid() * a - 0.25).tanh().abs() + b.exp(),
     lambda: (t(64, 32), t(64, 32))),
    (lambda a, b: (a - b) * a + b, lambda: (t(3, 4, 5), t(5))),
    (lstm_cell, lambda: (t(8, 6), t(8, 5), t(8, 5), t(20, 6), t(20, 5), t(20))),
    (lambda a: F.softmax(a * 2, -1), lambda: (t(6, 37),)),
    (lambda a: F.log_softmax(a, -1) + 1, lambda: (t(6, 37),)),
    (lambda a, w, b: F.layer_norm(a, (24,), w, b) * 2, lambda: (t(7, 24), t(24), t(24))),
    (lambda a: (a * 2).sum(-1), lambda: (t(4, 9),)),
    (lambda a: (a * 2).amax(-1, keepdim=True) + a.amin(-1, keepdim=True) * a,
     lambda: (t(4, 9),)),
    (lambda a, m: (a * m.exp()).sum(-1, keepdim=True) + (m * 2).sum(-1, keepdim=True),
     lambda: (t(4, 6), t(4, 1))),
    (lambda a, b: ((a * b + 3) // -3) % 7 + (a & b),   # by a tensor: unfused
     lambda: (t(6, 7, dtype=np.int32), t(6, 7, dtype=np.int32))),
    (lambda a, b: (a * b).sum(-1, keepdim=True) + a,
     lambda: (t(6, 7, dtype=np.int64), t(6, 7, dtype=np.int64))),
    (lambda a, b: (a * b + 0.5).sigmoid() - b,
     lambda: (t(8, 9, dtype=np.float16), t(8, 9, dtype=np.float16))),
    (lambda a: F.softmax(a, -1) * 3, lambda: (t(8, 9, dtype=np.float64),)),
    (lambda a, b: (a * b + 0.5).sigmoid() - b,
     lambda: (t(8, 9).to(E.bfloat16), t(8, 9).to(E.bfloat16))),
    (lambda a, b: (a > b) | (a == 3), lambda: (t(6, 7, dtype=np.int8), t(6, 7, dtype=np.int8))),
    # FusedConcat: pieces stored into slices of one buffer, an input piece copied
    (lambda a, b: E.cat([(a * b).sigmoid(), a, (a - b).tanh()], 1), lambda: (t(8, 5), t(8, 5))),
    (lambda h, x: E.cat([h.exp(), x.sigmoid()], 0),
     lambda: (t(2, 8, dtype=np.float16), t(2, 8))),
    (lambda a: E.cat([F.softmax(a, -1), F.log_softmax(a, -1)], -1), lambda: (t(6, 37),)),
]


class Capturing(HostOnlyFuser):
    """Builds real (not interpreted) kernels for CPU groups without launching them, and
    keeps each (plan, CallSpec) built."""

    def __init__(self):
        super().__init__((9, 0))
        self.built = []

    def compile(self, subgraph):
        kernel = super().compile(subgraph)
        fill = kernel._fill

        def capture(spec, *args):
            fill(spec, *args)
            self.built.append((kernel.plan, spec))
        kernel._fill = capture
        return kernel


def _ttir(plan, spec):
    dtypes = [a.dtype for a in plan.args] + [o.dtype for o in plan.outputs]
    signature = {}
    for i, name in enumerate(spec.kernel.arg_names):
        signature[name] = (POINTER[dtypes[i].name] if i < len(dtypes) else
                           "constexpr" if name in spec.constexprs else "i32")
    return nvidia_ttir(spec.kernel, signature, dict(spec.constexprs))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_generated_kernels_compile_for_nvidia(case, monkeypatch):
    pytest.importorskip("triton.backends.nvidia")
    if os.environ.get("TRITON_INTERPRET", "0") == "1":
        pytest.skip("compiles in a process without the interpreter: see the next test")
    fn, make_args = CASES[case]
    fuser = Capturing()
    jit_fuser.clear_fusion_fallbacks()
    with jit_fuser.using_fuser("cpu", fuser):
        args = make_args()
        E.jit.trace(fn, args, check_trace=False)(*args)
    assert fuser.built and jit_fuser.fusion_fallbacks() == []
    for plan, spec in fuser.built:
        assert "tt.func" in str(_ttir(plan, spec)), spec.source.text


def test_generated_kernels_compile_without_the_interpreter():
    pytest.importorskip("triton.backends.nvidia")
    if os.environ.get("TRITON_INTERPRET", "0") != "1":
        pytest.skip("the compile checks ran directly")
    run_without_interpreter(__file__, "test_generated_kernels_compile_for_nvidia", len(CASES))
