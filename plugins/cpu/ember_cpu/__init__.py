"""ember-cpu: ember's default backend, the generic array-API kernels on numpy."""
__version__ = "0.1.0"
