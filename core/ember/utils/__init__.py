"""Utilities: ``ember.utils.data`` (datasets and loaders), ``ember.utils.checkpoint``
(activation checkpointing)."""
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
