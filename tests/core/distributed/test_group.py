"""ember.distributed.group: init/destroy, rank and size from the launcher's environment,
errors before init, the backend choice, the abort-on-uncaught-exception hook."""
import sys
from datetime import timedelta

import pytest

import ember
import ember.distributed as dist
from ember.distributed import process_group as group_mod

from .conftest import FakeBackend

NOT_INIT = ("Default process group has not been initialized, please make sure to call "
            "init_process_group.")


@pytest.mark.parametrize("call", [
    lambda: dist.all_reduce(ember.ones(2)), lambda: dist.broadcast(ember.ones(2), 0),
    lambda: dist.reduce(ember.ones(2), 0), lambda: dist.barrier(),
    lambda: dist.all_gather([ember.ones(2)], ember.ones(2)),
    lambda: dist.all_gather_into_tensor(ember.ones(2), ember.ones(2)),
    lambda: dist.reduce_scatter_tensor(ember.ones(2), ember.ones(2)),
    lambda: dist.gather(ember.ones(2)), lambda: dist.scatter(ember.ones(2)),
    lambda: dist.send(ember.ones(2), 1), lambda: dist.recv(ember.ones(2), 1),
    lambda: dist.isend(ember.ones(2), 1), lambda: dist.irecv(ember.ones(2), 1),
    lambda: dist.all_gather_object([None], 1), lambda: dist.broadcast_object_list([1]),
    dist.get_rank, dist.get_world_size, dist.get_backend, dist.destroy_process_group,
])
def test_before_init_says_so_in_torch_words(register, call):
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError) as e:
        call()
    assert NOT_INIT in str(e.value) and "init_process_group(backend='mpi')" in str(e.value)


def test_init_get_destroy(register):
    b = register(FakeBackend(size=3, rank=2))
    dist.init_process_group("fake", timeout=timedelta(seconds=7))
    assert dist.is_initialized() and dist.is_available()
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (2, 3, "fake")
    assert dist.get_rank(dist.group.WORLD) == 2
    assert b.asked == (-1, -1, timedelta(seconds=7))
    with pytest.raises(RuntimeError, match="twice"):
        dist.init_process_group("fake")
    dist.destroy_process_group()
    assert not dist.is_initialized() and b.group.closed


@pytest.mark.parametrize("env, want", [
    ({"PMI_RANK": "1", "PMI_SIZE": "4"}, (1, 4)),                  # mpich's hydra
    ({"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "5"}, (3, 5)),
    ({"RANK": "0", "WORLD_SIZE": "2", "PMI_RANK": "1", "PMI_SIZE": "4"}, (0, 2)),  # torch's
])
def test_rank_and_size_from_the_launcher(register, monkeypatch, env, want):
    b = register(FakeBackend())
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    dist.init_process_group("fake")
    assert b.asked[:2] == want


def test_arguments_win_over_the_environment(register, monkeypatch):
    b = register(FakeBackend())
    monkeypatch.setenv("PMI_RANK", "1")
    monkeypatch.setenv("PMI_SIZE", "4")
    dist.init_process_group("fake", rank=0, world_size=2)
    assert b.asked[:2] == (0, 2)


def test_backend_choice_and_errors(register):
    other = FakeBackend()
    other.name, other.device_types = "gpuonly", ("cuda",)
    register(other, FakeBackend())
    dist.init_process_group()        # None: the first backend that moves CPU tensors
    assert dist.get_backend() == "fake"
    dist.destroy_process_group()
    with pytest.raises(ValueError, match=r"unknown backend 'gloo'; registered: fake, gpuonly"):
        dist.init_process_group("gloo")
    with pytest.raises(TypeError, match="expected backend as a str"):
        dist.init_process_group(3)
    with pytest.raises(TypeError, match="positive datetime.timedelta"):
        dist.init_process_group("fake", timeout=30)
    with pytest.raises(ValueError, match="0 <= rank < world_size, got rank 2, world_size 2"):
        dist.init_process_group("fake", rank=2, world_size=2)
    with pytest.raises(ValueError, match="no stores"):
        dist.init_process_group("fake", store=object())
    with pytest.raises(ValueError, match="init_method 'tcp://h:1' is not supported"):
        dist.init_process_group("fake", init_method="tcp://h:1")
    assert not dist.is_initialized()


def test_no_backend_installed(register):
    register()
    assert not dist.is_available()
    with pytest.raises(RuntimeError, match="pip install ember-mpi"):
        dist.init_process_group()


def test_a_failing_backend_is_named(register):
    class Broken(FakeBackend):
        def new_group(self, rank, world_size, timeout):
            raise OSError("no network")
    register(Broken())
    with pytest.raises(dist.DistBackendError, match="backend 'fake' failed to start: "
                                                    "OSError: no network"):
        dist.init_process_group("fake")


def test_only_the_default_group(fake):
    with pytest.raises(ValueError, match="only the default process group"):
        dist.get_rank(object())
    with pytest.raises(ValueError, match="only the default process group"):
        dist.all_reduce(ember.ones(2), group=object())


def test_uncaught_exception_aborts_the_job_naming_the_rank(fake, capsys):
    assert sys.excepthook is group_mod._abort_on_uncaught
    try:
        raise KeyError("lost")
    except KeyError:
        sys.excepthook(*sys.exc_info())
    assert fake.aborted.startswith("ember.distributed: rank 0 of 2 raised KeyError: 'lost'")
    err = capsys.readouterr().err
    assert "Traceback" in err and "rank 0 of 2 raised KeyError" in err
    dist.destroy_process_group()
    assert sys.excepthook is not group_mod._abort_on_uncaught


def test_one_rank_keeps_the_excepthook(register):
    register(FakeBackend(size=1))
    hook = sys.excepthook
    dist.init_process_group("fake")
    assert sys.excepthook is hook


class _CountingRequest:
    """Completes on its ``n``-th test, as an engine that moves only inside its calls."""

    def __init__(self, n: int):
        self.n, self.tests = n, 0

    def test(self) -> bool:
        self.tests += 1
        return self.tests >= self.n


class _Clock:
    """``time`` for Work.wait: 1 ms passes at each reading; sleeps are recorded."""

    def __init__(self):
        self.now, self.slept = 0.0, []

    def monotonic(self) -> float:
        self.now += 1e-3
        return self.now

    def sleep(self, s: float) -> None:
        self.slept.append(s)


def test_wait_tests_back_to_back_then_backs_off(monkeypatch):
    from ember.distributed import types
    clock = _Clock()
    monkeypatch.setattr(types, "time", clock)
    req = _CountingRequest(200)  # 0.2 s of (simulated) waiting
    assert types.Work(req, "all_reduce", timeout=60.0).wait()
    assert req.tests == 200 and clock.slept == []  # a sleep would stall the transfer
    monkeypatch.setattr(types, "SPIN_S", 0.0)  # a long wait: sleeps, at most 1 ms each
    req = _CountingRequest(50)
    assert types.Work(req, "all_reduce", timeout=60.0).wait()
    assert len(clock.slept) == 49 and max(clock.slept) == 1e-3 and min(clock.slept) > 0
