"""Writing a file whole or not at all, with the mode ``open(path, "wb")`` would give it.

``write_atomically(path, data, caller)`` writes ``data`` to a temporary file beside
``path`` and renames it over ``path``, so a failure (a full disk, an interrupt) leaves the
old file or none, never half of one. The result looks as a plain ``open(path, "wb")``
write would: a new file gets ``0o666 & ~umask`` (``mkstemp`` alone makes 0600), a file
written over keeps its permission bits, and a symbolic link is written through (its
target is replaced, the link stays). ``ember.save`` and ``ember.onnx.export`` write
through it. This module imports nothing from ember (the bottom layer).
"""
from __future__ import annotations

import os
import stat
import tempfile

__all__ = ["write_atomically", "new_file_mode"]


def write_atomically(path, data: bytes, caller: str) -> None:
    """Write the bytes ``data`` to ``path`` (str or os.PathLike) atomically.

    ``caller`` names the public function in messages (``"ember.save"``). Raises
    FileNotFoundError naming a missing directory (and the way out); OSError from the file
    system. On any error the temporary file is removed and ``path`` is untouched.
    """
    path = os.path.realpath(os.fspath(path))  # through a symlink, as open(path, "wb") goes
    directory = os.path.dirname(path)
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{caller}: the directory '{directory}' does not exist; "
                                f"create it first (os.makedirs) or write elsewhere")
    try:  # a file written over keeps its mode
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = new_file_mode()
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(path)}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)  # mkstemp makes 0600
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def new_file_mode() -> int:
    """The permission bits ``open(path, "w")`` gives a new file: ``0o666 & ~umask``."""
    # NOTE: os.umask is the only portable way to read the umask; it is set back at once
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask
