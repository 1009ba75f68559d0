"""Triton's interpreter must be on before ``triton.language`` is imported (its standard
library, ``tl.sigmoid``, ``tl.max``, is decorated at import), so the fuser tests switch
it on here, at collection; tests marked ``triton_interpreter`` need it. Run the GPU tests
(``-m cuda``) with ``TRITON_INTERPRET=0``: then the interpreter tests skip and the
generated kernels compile for the GPU."""
import os
import sys

import pytest

if "triton" not in sys.modules:
    os.environ.setdefault("TRITON_INTERPRET", "1")

INTERPRETING = os.environ.get("TRITON_INTERPRET", "0") == "1"


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(__file__)
    for item in items:
        if not str(item.fspath).startswith(here):
            continue
        if "cuda" in item.keywords:
            if INTERPRETING:
                item.add_marker(pytest.mark.skip(
                    reason="GPU kernels need TRITON_INTERPRET=0 (interpreter is on)"))
        elif "triton_interpreter" in item.keywords and not INTERPRETING:
            item.add_marker(pytest.mark.skip(
                reason="interpreter tests need TRITON_INTERPRET=1 before triton is imported"))
