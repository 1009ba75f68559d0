"""Point-to-point: ``send`` / ``recv`` (blocking) and ``isend`` / ``irecv`` (returning a
``Work``), as torch.distributed's. ``recv(src=None)`` takes a message from any rank and
returns the sender's rank. Messages match by (sender, ``tag``) in the order they were sent.
"""
from __future__ import annotations

from .buffers import array_of, check_rank, check_tensor, group_for, start


def _check_peer(what: str, name: str, peer, g) -> int:
    check_rank(what, name, peer, g)
    if peer == g.rank:
        raise ValueError(f"{what}: {name} = {peer} is this rank; a rank cannot send to or "
                         f"receive from itself")
    return peer


def _tag(what: str, tag) -> int:
    if isinstance(tag, bool) or not isinstance(tag, int) or tag < 0:
        raise ValueError(f"{what}: expected tag to be an int >= 0, got {tag!r}")
    return tag


def isend(tensor, dst: int, group=None, tag: int = 0):
    """Start sending ``tensor`` to rank ``dst``; returns a Work. Do not write ``tensor``
    before ``wait()``."""
    g = group_for("isend", group)
    check_tensor("isend", tensor, "tensor", g)
    _check_peer("isend", "dst", dst, g)
    arr, _ = array_of(tensor)
    return start("isend", g, g.send(arr, dst, _tag("isend", tag)), async_op=True)


def irecv(tensor, src: int | None = None, group=None, tag: int = 0):
    """Start receiving into ``tensor`` from rank ``src`` (None: any rank; ``recv`` returns
    the sender); returns a Work."""
    return _recv("irecv", tensor, src, group, tag)[0]


def _recv(what: str, tensor, src, group, tag):
    g = group_for(what, group)
    check_tensor(what, tensor, "tensor", g)
    if src is not None:
        _check_peer(what, "src", src, g)
    arr, back = array_of(tensor)
    request = g.recv(arr, src, _tag(what, tag))
    work = start(what, g, request, [back], [tensor], True, [tensor])
    return work, request


def send(tensor, dst: int, group=None, tag: int = 0) -> None:
    """Send ``tensor`` to rank ``dst``; returns once the buffer may be reused."""
    isend(tensor, dst, group, tag).wait()


def recv(tensor, src: int | None = None, group=None, tag: int = 0) -> int:
    """Receive into ``tensor`` from rank ``src`` (None: any rank); returns the sender."""
    work, request = _recv("recv", tensor, src, group, tag)
    work.wait()
    return request.source if src is None else src
