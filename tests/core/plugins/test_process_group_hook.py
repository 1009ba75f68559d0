"""The ``ember_process_group_backends`` hook (issue 37): items are validated like every
hook's, keyed by their name, and reach ``manager.registered`` and ``ember plugins``."""
import pytest

from ember import cli
from ember.errors import PluginError
from ember.plugins import manager
from ember.plugins.validation import VALIDATORS

PLUGIN = """
    from ember.plugins import hookimpl

    class PG:
        def __init__(self, name, device_types=("cpu",)):
            self.name, self.device_types = name, device_types
        def new_group(self, rank, world_size, timeout):
            return (rank, world_size, timeout)

    @hookimpl
    def ember_process_group_backends():
        return [{body}]
"""


class PG:
    def __init__(self, name="loop", device_types=("cpu",), new_group=lambda r, w, t: None):
        self.name, self.device_types, self.new_group = name, device_types, new_group


def test_a_valid_process_group_backend_is_described():
    assert VALIDATORS["ember_process_group_backends"](PG(device_types=["cpu", "cuda"])) == \
        "process group backend loop (cpu, cuda)"


@pytest.mark.parametrize("bad, why", [
    (PG(name=""), "non-empty str name"), (PG(name=3), "non-empty str name"),
    (PG(device_types=()), "device_types"), (PG(device_types="cpu"), "device_types"),
    (PG(device_types=("cpu", 1)), "device_types"), (PG(new_group=None), "new_group"),
    (object(), "name"),
])
def test_an_invalid_process_group_backend_is_refused(bad, why):
    with pytest.raises(PluginError, match=why):
        VALIDATORS["ember_process_group_backends"](bad)


def test_a_plugin_process_group_backend_is_registered_and_listed(fake_dists, capsys):
    fake_dists(pgplug=PLUGIN.format(body="PG('loopback')"))
    (pg,) = [b for b in manager.registered["ember_process_group_backends"]
             if b.name == "loopback"]
    assert pg.new_group(0, 2, 5.0) == (0, 2, 5.0)
    assert cli.main(["plugins"]) == 0
    assert "process_group_backends: process group backend loopback (cpu)" in \
        capsys.readouterr().out


def test_a_malformed_process_group_backend_skips_the_plugin(fake_dists):
    with pytest.warns(UserWarning, match=r"skipping plugin 'pgbad'.*device_types"):
        fake_dists(pgbad=PLUGIN.format(body="PG('bad', device_types=[])"))
        manager.plugins()
    assert not [b for b in manager.registered["ember_process_group_backends"]
                if b.name == "bad"]


def test_two_plugins_with_one_process_group_name_collide(fake_dists):
    with pytest.warns(UserWarning, match=r"refusing plugin 'pgb'.*process-group backend "
                                         r"'same' is already registered by plugin 'pga'"):
        fake_dists(pga=PLUGIN.format(body="PG('same')"), pgb=PLUGIN.format(body="PG('same')"))
        manager.plugins()
    assert [b.name for b in manager.registered["ember_process_group_backends"]].count(
        "same") == 1
