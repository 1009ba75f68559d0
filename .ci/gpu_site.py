"""Install without pip, for ``.ci/gpu`` on a Python that has no pip (or no setuptools).

``python .ci/gpu_site.py wheels SITE WHEEL...`` unpacks each wheel into ``SITE`` as
``pip install --no-deps --target SITE`` would for a pure or platform-library wheel: the
archive's files, and the contents of its ``<name>.data/purelib`` and ``platlib`` folders
moved to the top (scripts, headers and data are left out: the run needs none).

``python .ci/gpu_site.py sources SITE PROJECT...`` makes each source project (a folder with
a ``pyproject.toml``: the checkout's root and ``plugins/<name>``) importable in place:
it writes ``SITE/<name>-<version>.dist-info`` with ``METADATA`` and ``entry_points.txt``
from the project's ``[project]`` table, so ``importlib.metadata`` finds ember's plugins
(entry-point group ``ember``) and their versions, and prints the folders to put on
``PYTHONPATH`` (``[tool.setuptools.packages.find] where``, else the project folder), one
per line.

Needs Python 3.11 (``tomllib``). Raises SystemExit with the usage on bad arguments; a
missing ``pyproject.toml`` or ``[project]`` table raises ValueError naming the folder.
Reference: the wheel format (PEP 427: ``.data`` folders), the ``dist-info`` layout
(PEP 376, entry points as ``importlib.metadata`` reads them).
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import tomllib
import zipfile

USAGE = ("usage: python .ci/gpu_site.py wheels SITE WHEEL... | "
         "python .ci/gpu_site.py sources SITE PROJECT...")


def unpack_wheel(path: str, site: str) -> str:
    """Unpack the wheel at ``path`` into ``site``; returns the distribution's name."""
    name, version = os.path.basename(path).split("-")[:2]
    with zipfile.ZipFile(path) as archive:
        archive.extractall(site)
    data = os.path.join(site, f"{name}-{version}.data")
    for scheme in ("purelib", "platlib"):
        folder = os.path.join(data, scheme)
        if os.path.isdir(folder):
            shutil.copytree(folder, site, dirs_exist_ok=True)
    shutil.rmtree(data, ignore_errors=True)
    return name


def dist_info(project: str, site: str) -> list[str]:
    """Write ``project``'s dist-info into ``site``; returns its import roots."""
    toml = os.path.join(project, "pyproject.toml")
    if not os.path.exists(toml):
        raise ValueError(f"expected a pyproject.toml in {project!r}, found none")
    with open(toml, "rb") as f:
        config = tomllib.load(f)
    meta = config.get("project")
    if meta is None:
        raise ValueError(f"{toml}: expected a [project] table, found none")
    name, version = meta["name"], meta.get("version", "0")
    folder = os.path.join(site, f"{re.sub(r'[-.]+', '_', name)}-{version}.dist-info")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "METADATA"), "w") as f:
        f.write(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    groups = dict(meta.get("entry-points", {}))
    if meta.get("scripts"):
        groups["console_scripts"] = meta["scripts"]
    with open(os.path.join(folder, "entry_points.txt"), "w") as f:
        for group, points in groups.items():
            f.write(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()))
    find = config.get("tool", {}).get("setuptools", {}).get("packages", {}).get("find", {})
    where = find.get("where", ["."])
    return [os.path.abspath(os.path.join(project, w)) for w in where]


def main(argv: list[str]) -> int:
    """The command line (see the module docstring)."""
    if len(argv) < 3 or argv[0] not in ("wheels", "sources"):
        raise SystemExit(USAGE)
    command, site, paths = argv[0], argv[1], argv[2:]
    os.makedirs(site, exist_ok=True)
    for path in paths:
        if command == "wheels":
            print(f"unpacked {unpack_wheel(path, site)}", file=sys.stderr)
        else:
            print("\n".join(dist_info(path, site)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
