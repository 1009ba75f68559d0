"""The vocabulary of ``ember.distributed``: ``ReduceOp``, the ``Work`` handle, the errors,
and the protocols a process-group plugin implements (``ProcessGroupBackend``,
``ProcessGroup``, ``Request``).

A plugin registers ``ProcessGroupBackend`` objects through the ``ember_process_group_backends``
hook (``plugins/mpi``: ``mpi``; ``plugins/cuda``: ``nccl``). ``init_process_group`` calls
the chosen backend's ``new_group(rank, world_size, timeout)`` once and keeps the returned
``ProcessGroup`` as the default group. The core checks arguments, dtypes, devices and
(``EMBER_DISTRIBUTED_DEBUG=DETAIL``) the agreement of ranks, hands the group contiguous
backend arrays (``tensor._data``, numpy or CuPy) and gets back a ``Request`` that it polls
through ``Work``. Reference: PyTorch's ``torch.distributed`` (c10d) API and its ``Work``.
"""
from __future__ import annotations

import enum
import os
import time
from datetime import timedelta
from typing import Any, Callable, Protocol, runtime_checkable


class DistError(RuntimeError):
    """A distributed operation failed (torch's ``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """The process-group backend failed or refused an operation."""


class DistTimeoutError(DistError, TimeoutError):
    """An operation did not complete within the process group's (or ``wait``'s) timeout:
    another rank is missing, slow, or called a different collective."""


class ReduceOp(enum.Enum):
    """How ``all_reduce``, ``reduce`` and ``reduce_scatter_tensor`` combine the ranks'
    tensors, elementwise (``torch.distributed.ReduceOp``). ``AVG`` is the sum divided by
    the world size and takes floating-point tensors only."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"

    def __repr__(self) -> str:
        return f"ReduceOp.{self.name}"


@runtime_checkable
class Request(Protocol):
    """A started operation of a backend: ``test()`` progresses it and returns True once it
    completed (and stays True). Blocking backends return an already-completed request."""

    def test(self) -> bool: ...


class Done:
    """A Request that completed when it was made (blocking backends, world size 1)."""

    def test(self) -> bool:
        return True


@runtime_checkable
class ProcessGroup(Protocol):
    """One communicator, as ``ProcessGroupBackend.new_group`` returns it.

    Arrays are the backend's (numpy for ``cpu``, CuPy for ``cuda``), C-contiguous, and of a
    dtype the core checked against ``reduce_dtypes`` / ``dtypes``. Every method starts the
    operation and returns a ``Request``; results are written in place, into ``out``. Ranks
    are ints in ``range(size)``. ``op`` is a ``ReduceOp``.
    """

    rank: int
    size: int
    dtypes: frozenset | None        # ember dtype names it can move (None: any)
    reduce_dtypes: frozenset        # ember dtype names it can reduce

    def allreduce(self, arr, op: ReduceOp) -> Request: ...
    def broadcast(self, arr, src: int) -> Request: ...
    def reduce(self, arr, dst: int, op: ReduceOp) -> Request: ...
    def allgather(self, out, inp) -> Request: ...          # out: (size * inp.size,)
    def reduce_scatter(self, out, inp, op: ReduceOp) -> Request: ...  # inp: size * out
    def gather(self, out, inp, dst: int) -> Request: ...   # out None off dst
    def scatter(self, out, inp, src: int) -> Request: ...  # inp None off src
    def send(self, arr, dst: int, tag: int) -> Request: ...
    def recv(self, arr, src: int | None, tag: int) -> Request: ...  # .source once done
    def barrier(self) -> Request: ...
    def to_device(self, host_array) -> Any: ...            # numpy -> the group's arrays
    def to_host(self, arr) -> Any: ...                     # the group's arrays -> numpy
    def abort(self, message: str) -> None: ...             # end every rank's process
    def close(self) -> None: ...


@runtime_checkable
class ProcessGroupBackend(Protocol):
    """What a plugin registers: ``name`` (``init_process_group(backend=name)``),
    ``device_types`` (ember device types whose tensors it moves, ``("cpu",)``) and
    ``new_group(rank, world_size, timeout)`` -> ``ProcessGroup``, where ``rank`` and
    ``world_size`` are the launcher's (-1: unknown, the backend finds them) and ``timeout``
    is a ``datetime.timedelta``. ``new_group`` raises ``ValueError`` when the given rank or
    size contradicts the engine's and ``DistBackendError`` when it cannot start."""

    name: str
    device_types: tuple

    def new_group(self, rank: int, world_size: int, timeout: timedelta) -> ProcessGroup: ...


SPIN_S = 0.5  # Work.wait tests back to back this long, then sleeps between tests
_yield = getattr(os, "sched_yield", None) or (lambda: time.sleep(0))


class Work:
    """The handle of an operation started with ``async_op=True`` (torch's ``Work``).

    ``wait(timeout=None)`` blocks until the operation completed (``timeout``: seconds or a
    timedelta; None: the process group's timeout) and raises ``DistTimeoutError`` past it;
    ``is_completed()`` progresses it without blocking. Completion runs the core's finishing
    step once (copying a contiguous temporary back into a strided tensor). ``result()``
    returns the output tensors.
    """

    __slots__ = ("_request", "_finish", "_done", "_what", "_timeout", "_outputs")

    def __init__(self, request: Request, what: str, timeout: float,
                 finish: Callable[[], None] | None = None, outputs: list | None = None):
        self._request, self._finish, self._what = request, finish, what
        self._timeout, self._outputs, self._done = timeout, outputs or [], False

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()

    def is_completed(self) -> bool:
        """True once the operation completed (progresses it; never blocks)."""
        if not self._done and self._request.test():
            self._complete()
        return self._done

    def wait(self, timeout=None) -> bool:
        """Block until completed; returns True. Raises ``DistTimeoutError`` after
        ``timeout`` (seconds or a timedelta; None: the process group's timeout)."""
        if self._done:
            return True
        limit = self._timeout if timeout is None else _seconds(timeout)
        start = time.monotonic()
        pause = 0.0
        while not self._request.test():
            waited = time.monotonic() - start
            if waited > limit:
                raise DistTimeoutError(
                    f"{self._what} did not complete within {limit:g} s: a rank is missing, "
                    f"slow, or called a different collective; every rank must make the same "
                    f"collective calls in the same order (EMBER_DISTRIBUTED_DEBUG=DETAIL "
                    f"checks that); raise the limit with init_process_group(timeout=...)")
            # NOTE: an engine without a progress thread (MPICH) moves an operation on only
            # inside its calls, so a sleep between tests stops the transfer: a 4 MB
            # all-reduce took 9 ms with a 1 ms back-off against 3 ms tested back to back.
            # Spin as the engine's own wait does, yielding the core to any other runnable
            # process (more ranks than cores); back off only once the wait is long (a
            # rank busy elsewhere or gone), to at most 1 ms a sleep.
            if waited < SPIN_S:
                _yield()
            else:
                pause = min(1e-3, pause * 2 or 1e-5)
                time.sleep(pause)
        self._complete()
        return True

    def result(self) -> list:
        """The output tensors (after ``wait``)."""
        return list(self._outputs)

    def __repr__(self) -> str:
        return f"<Work {self._what} {'completed' if self._done else 'pending'}>"


def _seconds(timeout) -> float:
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout >= 0:
        return float(timeout)
    raise TypeError(f"expected a timeout as a datetime.timedelta or seconds >= 0, got "
                    f"{timeout!r}")
