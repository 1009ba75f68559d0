"""Registers the Triton fuser for CUDA devices (the ``ember_fusers`` hook).

Triton is imported only when a group is compiled, so loading the plugin costs nothing; a
machine without Triton gets a PluginUnavailable that ``ember plugins`` shows.
"""
from __future__ import annotations

import importlib.util

from ember.errors import PluginUnavailable
from ember.plugins import hookimpl


@hookimpl
def ember_fusers():
    """``[TritonFuser("cuda")]``; raises PluginUnavailable without Triton."""
    if importlib.util.find_spec("triton") is None:
        raise PluginUnavailable("Triton is not installed (pip install triton)")
    from .fuser import TritonFuser
    return [TritonFuser("cuda")]
