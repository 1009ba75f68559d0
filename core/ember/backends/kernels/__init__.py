"""Generic kernels by concept; see ``ember.backends.array_api`` for the contract."""
