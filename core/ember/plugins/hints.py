"""Install hints for ember's own plugins: the published name, and the source-checkout
form when ember runs from a checkout (where the published name may not resolve).

``install_hint("cpu")`` -> "pip install ember-cpu", or, when ember is imported from a
source tree that holds ``plugins/cpu/pyproject.toml`` next to ``core/``, "pip install
ember-cpu, or from this source checkout: pip install -e plugins/cpu". The checkout is
found from where the ``ember`` package itself lives (``core/ember/__init__.py``), so it
holds for an editable install, for ``PYTHONPATH=core`` and never for a wheel in
site-packages; the plugin's own ``pyproject.toml`` must be there, so the command given
works as written.
"""
from __future__ import annotations

import pathlib

# ember's own plugins (plugins/*/pyproject.toml) and their distributions. The manager loads
# them first and lets them own their entry-point names, so a third-party plugin that sorts
# or sits on sys.path before them cannot take a name or a registry key from them; the
# install hints name their distributions. (Here, below the manager, so that dispatch's
# missing-kernel message reads it without importing the plugin loader.)
FIRST_PARTY = {"cpu": "ember-cpu", "cuda": "ember-cuda", "nnpack_compat": "ember-nnpack-compat",
               "triton_fuser": "ember-triton-fuser", "mpi": "ember-mpi"}

# Extras a plugin cannot install without (CuPy is in an extra, per CUDA major version):
# (extra, when to pick it) pairs, the first the default.
EXTRAS = {"cuda": (("cuda13", "CUDA 13 driver"), ("cuda12", "CUDA 12 driver"))}


def checkout_root() -> pathlib.Path | None:
    """The source checkout ember is imported from (the folder holding ``core/ember``
    and ``plugins/``), or None for an installed wheel."""
    root = pathlib.Path(__file__).resolve().parents[3]
    if (root / "core" / "ember" / "__init__.py").is_file() and (root / "plugins").is_dir():
        return root
    return None


def _checkout_dir(name: str) -> pathlib.Path | None:
    root = checkout_root()
    if root is None or not (root / "plugins" / name / "pyproject.toml").is_file():
        return None
    here = pathlib.Path.cwd().resolve()
    return pathlib.Path("plugins", name) if here == root else root / "plugins" / name


def distribution(name: str) -> str | None:
    """The published distribution of ember's plugin ``name`` (``"cpu"`` ->
    ``"ember-cpu"``), or None for a name that is not ember's."""
    dist = FIRST_PARTY.get(name)
    if dist is None and _checkout_dir(name) is not None:
        dist = "ember-" + name.replace("_", "-")
    return dist


def install_hint(name: str, extras: str | None = None, *, upgrade: bool = False) -> str:
    """How to install ember's plugin ``name`` (its entry-point name), as a phrase to end
    a message with: the ``pip install`` of the published distribution, then the editable
    install of ``plugins/<name>`` when ember runs from a source checkout::

        pip install ember-cpu, or from this source checkout: pip install -e plugins/cpu

    ``extras`` (``"cuda13,cudnn"``) replaces the plugin's choice of extras (``EXTRAS``);
    ``upgrade`` adds ``-U``. For a name that is not one of ember's plugins, a phrase
    saying to install the plugin that provides it."""
    dist = distribution(name)
    if dist is None:
        return f"install the plugin that provides '{name}'"
    pip = "pip install -U" if upgrade else "pip install"
    choices = EXTRAS.get(name, ()) if extras is None else ((extras, None),)
    if choices:
        published = f"{pip} " + " or ".join(
            f"'{dist}[{e}]'" + (f" ({why})" if why else "") for e, why in choices)
    else:
        published = f"{pip} {dist}"
    local = _checkout_dir(name)
    if local is None:
        return published
    target = f"'{local}[{choices[0][0]}]'" if choices else str(local)
    return f"{published}, or from this source checkout: {pip} -e {target}"
