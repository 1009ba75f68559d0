"""The ``mpi`` backend under mpiexec: scripts/collectives.py checks every collective against
numpy on 2 and 3 ranks; scripts/raises.py (through ``ember run``) checks that a rank that
raises or exits ends the job at once, naming the rank. Skipped without mpi4py or mpiexec."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ember.cli import mpiexec

pytest.importorskip("mpi4py", reason="the mpi backend needs mpi4py: pip install -e plugins/mpi")
MPIEXEC = mpiexec()
pytestmark = pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found: pip install mpich")
SCRIPTS = Path(__file__).parent / "scripts"


def _env():
    env = {k: v for k, v in os.environ.items() if k != "EMBER_DISTRIBUTED_DEBUG"}
    env["OMP_NUM_THREADS"] = "1"
    return env


@pytest.mark.parametrize("n", [2, 3])
def test_every_collective_against_numpy(n):
    p = subprocess.run([MPIEXEC, "-n", str(n), sys.executable, str(SCRIPTS / "collectives.py")],
                       capture_output=True, text=True, timeout=180, env=_env())
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    for r in range(n):
        assert f"OK {r}" in p.stdout, out


@pytest.mark.parametrize("mode, says", [
    ("raise", "ember.distributed: rank 1 of 2 raised ValueError: boom on purpose; aborting "
              "the job"),
    ("exit", "DistBackendError: rank 1 left (its script ended or called sys.exit) while rank "
             "0 waits for it"),
], ids=["raise", "exit"])
def test_a_rank_that_raises_or_leaves_ends_the_job_naming_it(mode, says):
    start = time.monotonic()
    # NOTE: one case goes through `ember run` (the CLI end to end), the other straight to
    # mpiexec, sparing an `import ember` (seconds on a busy CI machine)
    launch = ([sys.executable, "-m", "ember", "run", "-n", "2"] if mode == "raise" else
              [MPIEXEC, "-n", "2", sys.executable])
    p = subprocess.run([*launch, str(SCRIPTS / "raises.py"), mode],
                       capture_output=True, text=True, timeout=180, env=_env())
    took = time.monotonic() - start
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert says in out, out
    assert "rank 0 passed" not in out, out
    assert took < 60, f"the job took {took:.1f} s: it waited for the 60 s timeout"
