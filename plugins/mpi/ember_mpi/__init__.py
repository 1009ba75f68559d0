"""ember's ``mpi`` process-group backend (``ember_mpi.plugin`` registers it)."""
