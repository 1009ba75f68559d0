"""docs/plugins.md stays in step with the code: a section per hook, and its table of the
minimal kernel set is ``REQUIRED_KERNELS`` (its code blocks run in tests/docs/)."""
import pathlib
import re

from ember.plugins import manager
from ember.plugins.validation import REQUIRED_KERNELS

GUIDE = pathlib.Path(__file__).resolve().parents[3] / "docs" / "plugins.md"


def test_every_hook_has_a_section():
    text = GUIDE.read_text()
    for hook in manager.HOOKS:
        assert f"\n### `{hook}`\n" in text, hook
        assert f"| `{hook}` |" in text, hook


def test_the_kernel_table_is_the_data():
    rows = re.findall(r"^\| (\w+) \| (`.*?`) \| (.*?) \|$", GUIDE.read_text(), re.M)
    table = {g: (needed_by, tuple(re.findall(r"`(\w+)`", ks))) for g, ks, needed_by in rows
             if g in REQUIRED_KERNELS}
    assert table == {g: tuple(grp) for g, grp in REQUIRED_KERNELS.items()}
