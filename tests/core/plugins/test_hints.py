"""Install hints (``ember.plugins.hints``): the published name always, the editable
install of ``plugins/<name>`` only when ember runs from a source checkout that holds it;
and the messages that use them."""
import pathlib

import pytest

import ember as E
from ember.plugins import hints


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A fake source checkout with plugins/cpu and plugins/cuda, made ember's."""
    for name in ("cpu", "cuda", "extra_thing"):
        (tmp_path / "plugins" / name).mkdir(parents=True)
        (tmp_path / "plugins" / name / "pyproject.toml").write_text("[project]\n")
    (tmp_path / "plugins" / "nopyproject").mkdir()
    monkeypatch.setattr(hints, "checkout_root", lambda: tmp_path)
    return tmp_path


def test_the_real_checkout_is_found_from_where_ember_lives():
    core = pathlib.Path(E.__file__).resolve().parents[2]
    expected = core if (core / "plugins").is_dir() else None   # None: a wheel install
    assert hints.checkout_root() == expected


def test_from_a_wheel_only_the_published_name(monkeypatch):
    monkeypatch.setattr(hints, "checkout_root", lambda: None)
    assert hints.install_hint("cpu") == "pip install ember-cpu"
    assert hints.install_hint("nnpack_compat") == "pip install ember-nnpack-compat"
    assert hints.install_hint("cuda") == ("pip install 'ember-cuda[cuda13]' (CUDA 13 "
                                          "driver) or 'ember-cuda[cuda12]' (CUDA 12 driver)")
    assert hints.install_hint("cuda", "cuda13,cudnn", upgrade=True) == \
        "pip install -U 'ember-cuda[cuda13,cudnn]'"
    assert hints.install_hint("mine") == "install the plugin that provides 'mine'"


def test_from_a_checkout_both_forms_relative_at_its_root(checkout, monkeypatch):
    monkeypatch.chdir(checkout)
    assert hints.install_hint("cpu") == ("pip install ember-cpu, or from this source "
                                         "checkout: pip install -e plugins/cpu")
    assert hints.install_hint("cuda").endswith(
        "(CUDA 12 driver), or from this source checkout: pip install -e "
        "'plugins/cuda[cuda13]'")
    # a plugin of the checkout that is not (yet) in FIRST_PARTY: named ember-<name>
    assert hints.install_hint("extra_thing") == (
        "pip install ember-extra-thing, or from this source checkout: pip install -e "
        "plugins/extra_thing")
    # no pyproject there: the editable form would not work, so it is not offered
    assert hints.install_hint("nopyproject") == \
        "install the plugin that provides 'nopyproject'"
    assert hints.install_hint("nnpack_compat") == "pip install ember-nnpack-compat"


def test_from_a_checkout_elsewhere_the_path_is_absolute(checkout, tmp_path_factory,
                                                        monkeypatch):
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert hints.install_hint("cpu", upgrade=True) == (
        f"pip install -U ember-cpu, or from this source checkout: pip install -U -e "
        f"{checkout / 'plugins' / 'cpu'}")


def test_messages_carry_the_hint(checkout, monkeypatch):
    monkeypatch.chdir(checkout)
    from ember_cuda.kernels import no_bfloat16_message
    assert "upgrade with pip install -U 'ember-cuda[cuda13]' (CUDA 13 driver) or " \
        "'ember-cuda[cuda12]' (CUDA 12 driver), or from this source checkout: pip install " \
        "-U -e 'plugins/cuda[cuda13]'; or use float16" in no_bfloat16_message("13.6.0")
    with pytest.raises(NotImplementedError, match=r"a newer version of its plugin may have "
                                                  r"it: pip install -U ember-cpu, or from "
                                                  r"this source checkout: pip install -U -e "
                                                  r"plugins/cpu\.$"):
        E.ones(2).type().kernels["no_such_op"]
