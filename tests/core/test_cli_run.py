"""``ember run -n N script.py args``: the mpiexec command it builds, and its errors (the
launch itself runs in tests/plugins/mpi/test_mpi.py)."""
import subprocess
import sys

import pytest

from ember import cli


@pytest.fixture
def calls(monkeypatch):
    seen = []
    monkeypatch.setattr(cli, "mpiexec", lambda: "/x/bin/mpiexec")
    monkeypatch.setattr(subprocess, "call", lambda cmd: seen.append(cmd) or 3)
    return seen


def test_run_wraps_mpiexec(calls, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("")
    assert cli.main(["run", "-n", "4", str(script), "--epochs", "2", "-n", "9"]) == 3
    assert calls == [["/x/bin/mpiexec", "-n", "4", sys.executable, str(script), "--epochs",
                      "2", "-n", "9"]]
    cli.main(["run", "-n", "2", "-f", "hosts", str(script)])
    assert calls[1][:5] == ["/x/bin/mpiexec", "-n", "2", "-f", "hosts"]


def test_missing_mpiexec_says_what_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(cli, "mpiexec", lambda: None)
    assert cli.main(["run", "-n", "2", str(tmp_path / "a.py")]) == 2
    assert "mpiexec not found; `pip install ember-mpi`" in capsys.readouterr().err


def test_missing_script_and_bad_counts(calls, tmp_path, capsys):
    assert cli.main(["run", "-n", "2", str(tmp_path / "nope.py")]) == 2
    assert "no such script" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["run", "-n", "0", "x.py"])
    assert "expected a number of ranks >= 1, got '0'" in capsys.readouterr().err
    assert calls == []


def test_mpiexec_is_found_beside_python_first(monkeypatch):
    seen = []
    monkeypatch.setattr(cli.shutil, "which",
                        lambda name, path=None: seen.append(path) or ("/s/mpiexec" if path
                                                                     else None))
    assert cli.mpiexec() == "/s/mpiexec"
    assert seen[0] == cli.sysconfig.get_path("scripts")
