"""Utilities: ``ember.utils.data`` (datasets and loaders)."""
from . import data  # noqa: F401
