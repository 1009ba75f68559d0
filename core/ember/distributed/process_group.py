"""The default process group: ``init_process_group``, ``destroy_process_group``,
``is_initialized``, ``get_rank``, ``get_world_size``, ``get_backend``.

Rank and world size come from the arguments, else from the launcher's environment:
``RANK`` / ``WORLD_SIZE`` (torchrun's), ``PMI_RANK`` / ``PMI_SIZE`` (MPICH's hydra, which
``ember run`` starts), ``OMPI_COMM_WORLD_RANK`` / ``OMPI_COMM_WORLD_SIZE`` (Open MPI's);
-1 when none says, and the backend finds them (the ``mpi`` backend always takes
``MPI.COMM_WORLD``'s, refusing arguments that contradict it).

While a group with more than one rank exists, an exception that no code catches prints its
traceback and then aborts the job through the backend (``ProcessGroup.abort``, with a
message naming the rank): the other ranks end at once instead of waiting in a collective
for a rank that will not come. ``destroy_process_group`` restores ``sys.excepthook``.
Reference: ``torch.distributed.init_process_group`` and friends.
"""
from __future__ import annotations

import os
import sys
import time
from datetime import timedelta

from .._base.registry import table
from .types import DistBackendError, ProcessGroup

HOOK = "ember_process_group_backends"
# the hook's table: the plugin manager registers each plugin's backends here, by owner
BACKENDS = table(HOOK)
DEFAULT_TIMEOUT = timedelta(minutes=30)   # torch's default for non-NCCL backends
ENV = (("RANK", "WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE"),
       ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"))
NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                   "init_process_group.")


class _State:
    group: ProcessGroup | None = None
    init_method: str | None = None    # for backends that need one (nccl: file://)
    backend: str | None = None
    device_types: tuple = ()
    timeout: float = DEFAULT_TIMEOUT.total_seconds()
    excepthook = None


state = _State()


def backends() -> dict:
    """Registered process-group backends by name (loads plugins on first use)."""
    return {b.name: b for b in BACKENDS.items()}


def is_available() -> bool:
    """True when a process-group backend plugin (``ember-mpi``, ``ember-cuda``) is loaded."""
    return bool(backends())


def is_initialized() -> bool:
    """True between ``init_process_group`` and ``destroy_process_group``."""
    return state.group is not None


def default_group() -> ProcessGroup:
    """The default group; ``RuntimeError`` with torch's words before ``init_process_group``."""
    if state.group is None:
        raise RuntimeError(f"{NOT_INITIALIZED} Call ember.distributed.init_process_group("
                           f"backend='mpi') first, in a script started by `ember run -n N "
                           f"script.py` (or mpiexec)")
    return state.group


def _from_env(value: int, index: int) -> int:
    if value != -1:
        return value
    for names in ENV:
        raw = os.environ.get(names[index])
        if raw is not None and raw.strip().lstrip("-").isdigit():
            return int(raw)
    return -1


def _pick(backend: str | None) -> object:
    found = backends()
    if backend is None:
        for name in ("mpi", *found):
            if name in found and "cpu" in found[name].device_types:
                return found[name]
        raise RuntimeError("init_process_group: no process-group backend is installed; "
                           "`pip install ember-mpi` (mpi4py + mpich) for CPUs")
    if not isinstance(backend, str):
        raise TypeError(f"init_process_group: expected backend as a str such as 'mpi', got "
                        f"{type(backend).__name__}")
    name = backend.lower()
    if name not in found:
        have = ", ".join(sorted(found)) or "none"
        raise ValueError(f"init_process_group: unknown backend {backend!r}; registered: "
                         f"{have}; `pip install ember-mpi` brings 'mpi', `ember-cuda` with "
                         f"CuPy brings 'nccl'")
    return found[name]


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store=None, group_name: str = "",
                       pg_options=None, device_id=None) -> None:
    """Start the default process group.

    Args:
        backend: a registered backend name (``"mpi"``, ``"nccl"``); None: ``mpi``, else the
            first backend that moves CPU tensors.
        init_method: ``None``, ``"env://"`` or ``"file:///path"`` (a file on a file system
            every rank sees; the ``nccl`` backend exchanges its unique id there when it
            cannot use MPI). Backends read it from ``state.init_method``.
        timeout: how long blocking collectives and ``Work.wait()`` wait (default 30 min).
        world_size, rank: -1 (default): from the launcher's environment (module docstring).
        store, group_name, pg_options, device_id: accepted for torch's signature; a
            non-None ``store`` is refused (ember has no stores).

    Raises ``RuntimeError`` when already initialized or no backend is installed,
    ``ValueError`` for an unknown backend or a rank outside ``[0, world_size)``,
    ``DistBackendError`` when the backend cannot start.
    """
    if state.group is not None:
        raise RuntimeError("trying to initialize the default process group twice; call "
                           "ember.distributed.destroy_process_group() first")
    if store is not None:
        raise ValueError("init_process_group: ember has no stores; leave store=None and "
                         "start the ranks with `ember run -n N` (mpiexec)")
    if init_method not in (None, "env://") and not str(init_method).startswith("file://"):
        raise ValueError(f"init_process_group: init_method {init_method!r} is not supported; "
                         f"use None or 'env://' (rank and size from the launcher)")
    seconds = _timeout(timeout)
    chosen = _pick(backend)
    rank, world_size = _from_env(int(rank), 0), _from_env(int(world_size), 1)
    if world_size != -1 and not (world_size >= 1 and -1 <= rank < world_size):
        raise ValueError(f"init_process_group: expected 0 <= rank < world_size, got rank "
                         f"{rank}, world_size {world_size}")
    state.init_method = init_method
    try:
        group = chosen.new_group(rank, world_size, timedelta(seconds=seconds))
    except (ValueError, TypeError, DistBackendError):
        raise
    except Exception as e:  # the engine failed to start: keep its message, say which
        raise DistBackendError(f"init_process_group: backend {chosen.name!r} failed to "
                               f"start: {type(e).__name__}: {e}") from e
    state.group, state.backend, state.timeout = group, chosen.name, seconds
    state.device_types = tuple(chosen.device_types)
    if group.size > 1:
        state.excepthook = sys.excepthook
        sys.excepthook = _abort_on_uncaught


def _timeout(timeout) -> float:
    if timeout is None:
        return DEFAULT_TIMEOUT.total_seconds()
    if not isinstance(timeout, timedelta) or timeout.total_seconds() <= 0:
        raise TypeError(f"init_process_group: expected timeout as a positive "
                        f"datetime.timedelta, got {timeout!r}")
    return timeout.total_seconds()


def _abort_on_uncaught(kind, value, tb) -> None:
    hook = state.excepthook or sys.__excepthook__
    hook(kind, value, tb)
    group = state.group
    if group is not None and not issubclass(kind, KeyboardInterrupt):
        msg = (f"ember.distributed: rank {group.rank} of {group.size} raised "
               f"{kind.__name__}: {value}; aborting the job so the other ranks do not wait "
               f"for it")
        print(msg, file=sys.stderr, flush=True)
        # NOTE: the launcher forwards output asynchronously and drops what is in flight
        # when it tears the job down: give it a moment to pass the message on.
        time.sleep(0.2)
        group.abort(msg)


def destroy_process_group(group=None) -> None:
    """End the default group (``group`` must be None or it); a no-op refusal before init."""
    g = default_group()
    if group is not None and group is not g:
        raise ValueError("destroy_process_group: ember has only the default group; pass "
                         "None")
    state.group = None
    if state.excepthook is not None:
        sys.excepthook, state.excepthook = state.excepthook, None
    g.close()


def get_rank(group=None) -> int:
    """This process's rank in the default group (torch returns -1 for a group it is not in;
    ember has only the default group)."""
    return _group(group, "get_rank").rank


def get_world_size(group=None) -> int:
    """The number of ranks in the default group."""
    return _group(group, "get_world_size").size


def get_backend(group=None) -> str:
    """The default group's backend name (``"mpi"``, ``"nccl"``)."""
    _group(group, "get_backend")
    return state.backend


def _group(group, what: str) -> ProcessGroup:
    g = default_group()
    if group is not None and group is not g and group is not WORLD:
        raise ValueError(f"{what}: ember has only the default process group; pass group=None "
                         f"(or ember.distributed.group.WORLD), got {group!r}")
    return g


class _World:
    """``ember.distributed.group.WORLD``: a name for the default group (torch's spelling)."""

    def __repr__(self) -> str:
        return "<ember.distributed.group.WORLD>"


WORLD = _World()
