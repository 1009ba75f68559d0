"""What differs across the Triton releases 3.4 to 3.9 (``pyproject.toml`` allows 3.6 to 3.9:
3.4 and 3.5 do not export ``tl.add``/``tl.sub``/``tl.mul``), pinned where this machine's
Triton cannot show it.

* ``~x`` of an unsigned integer under the interpreter: Triton 3.4 to 3.8 build the all-ones
  operand of ``invert`` with ``np.full(1, -1, dtype)`` (``triton/runtime/interpreter.py``,
  ``InterpreterBuilder.get_all_ones_value``), which numpy 2 refuses for uint8; 3.9 uses
  ``iinfo.max``. The fuser writes ``x ^ all-ones`` instead (``unary_rules.py``); the test
  puts the older method back and runs ``bitwise_not``.
* torch imported by argument specialization: Triton 3.6 and 3.7 import torch, when it is
  installed, the first time they specialize a kernel's arguments
  (``python/src/specialize.cc``, ``init_globals``: ``PyImport_ImportModule("torch")``,
  reached through ``native_specialize_impl`` from ``triton/runtime/jit.py``'s binder and
  ``mangle_type``); 3.4, 3.5, 3.8 and 3.9 do not. Checked against the installed Triton,
  so running this file with another Triton first on ``PYTHONPATH`` checks that one.

Measured on the 3.4.0, 3.5.0, 3.6.0, 3.7.0, 3.8.0 and 3.9.0 wheels (issue 31).
"""
import importlib.util
import subprocess
import sys

import numpy as np
import pytest
import triton

import ember as E

from .test_ops import X, check

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
TRITON = tuple(int(p) for p in triton.__version__.split(".")[:2])
SPECIALIZATION_IMPORTS_TORCH = {(3, 6), (3, 7)}
"""(major, minor) of the Triton releases whose specialization imports torch."""


def _all_ones_before_3_9(self, type):
    """``InterpreterBuilder.get_all_ones_value`` as Triton 3.4 to 3.8 write it."""
    from triton.runtime.interpreter import TensorHandle, _get_np_dtype
    np_type = _get_np_dtype(type)
    if "int" in np_type.name:
        return TensorHandle(np.full(1, -1, dtype=np_type), type.scalar)
    if np_type == np.bool_:
        return TensorHandle(np.full(1, True, dtype=np_type), type.scalar)
    raise TypeError(f"unsupported type {type}")


@pytest.mark.parametrize("dtype", [E.uint8, E.int8, E.int16, E.int32, E.int64, E.bool_],
                         ids=lambda d: d.name)
def test_bitwise_not_under_the_interpreters_of_triton_3_4_to_3_8(dtype, monkeypatch):
    from triton.runtime import interpreter as triton_interpreter
    monkeypatch.setattr(triton_interpreter.InterpreterBuilder, "get_all_ones_value",
                        _all_ones_before_3_9)
    check("ember::bitwise_not", [X(dtype)])


def test_which_tritons_import_torch_when_specializing():
    # A fresh process: this one may have imported torch already (other tests, plugins).
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed: no Triton can import it")
    code = ("import sys, types, numpy as np\n"
            "from triton.runtime.jit import mangle_type\n"
            "from ember_triton_fuser.launch import as_pointer\n"
            "a = types.SimpleNamespace(data=types.SimpleNamespace(ptr=4096, device_id=0),"
            " dtype=np.dtype('float32'))\n"
            "assert 'torch' not in sys.modules\n"
            "assert mangle_type(as_pointer(a)) == '*fp32'\n"
            "print('torch' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = done.stdout.strip() == "True"
    assert imported == (TRITON in SPECIALIZATION_IMPORTS_TORCH), \
        f"Triton {triton.__version__}: specialization imported torch: {imported}"
