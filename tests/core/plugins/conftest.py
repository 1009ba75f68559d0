"""Fixtures that install throwaway plugin distributions through real entry points.

``fake_dists(**modules)`` writes, for each plugin name, a module ``ember_fake_<name>`` and a
``<name>-0.1.dist-info`` with an ``entry_points.txt`` in group ``ember`` into a temporary
directory on ``sys.path``; ``importlib.metadata`` then finds them like installed packages.
The plugin manager is reloaded before and after, so other tests see the real plugins.
"""
import sys
import textwrap

import pytest

from ember.plugins import manager


@pytest.fixture
def fake_dists(tmp_path, monkeypatch):
    def install(**plugins: str):
        for name, source in plugins.items():
            mod = f"ember_fake_{name}"
            (tmp_path / f"{mod}.py").write_text(textwrap.dedent(source))
            info = tmp_path / f"ember_fake_{name}-0.1.dist-info"
            info.mkdir()
            (info / "METADATA").write_text(
                f"Metadata-Version: 2.1\nName: ember-fake-{name}\nVersion: 0.1\n")
            (info / "entry_points.txt").write_text(f"[ember]\n{name} = {mod}\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        manager.reload()
    yield install
    monkeypatch.undo()
    for name in [m for m in sys.modules if m.startswith("ember_fake_")]:
        del sys.modules[name]
    manager.reload()


@pytest.fixture
def reload_plugins(monkeypatch):
    """Reload plugins under env vars set by the test; restore the real set afterwards."""
    yield manager.reload
    monkeypatch.undo()
    manager.reload()
