"""Backends: the registry of what plugins registered, and the generic array-API kernels."""
