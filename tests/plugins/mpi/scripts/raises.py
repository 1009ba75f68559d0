"""Run under ``mpiexec -n 2`` by test_mpi.py: rank 1 raises (argv[1] == "raise") or calls
``sys.exit(3)`` ("exit") while rank 0 waits in an all_reduce; the job must end within a few
seconds, naming rank 1, not after the 60 s timeout."""
import sys
import time
from datetime import timedelta

import ember
import ember.distributed as dist

dist.init_process_group("mpi", timeout=timedelta(seconds=60))
if dist.get_rank() == 1:
    time.sleep(0.2)
    if sys.argv[1] == "exit":
        sys.exit(3)
    raise ValueError("boom on purpose")
dist.all_reduce(ember.ones(3))
print("rank 0 passed the all_reduce: the job did not end", flush=True)
