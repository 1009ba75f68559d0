"""EMBER_DISTRIBUTED_DEBUG=DETAIL: the fingerprint check and its message (the all-gather
across real ranks runs in tests/plugins/mpi)."""
import pytest

import ember
import ember.distributed as dist
from ember.distributed import debug


def test_mismatch_names_every_rank(fake, monkeypatch):
    monkeypatch.setenv("EMBER_DISTRIBUTED_DEBUG", "detail")
    seen = []

    def gather(g, fp):
        seen.append(fp)
        return [fp, ("all_reduce", (2, 4), "float32", None, "SUM")]
    monkeypatch.setattr(debug, "host_all_gather_object", gather)
    with pytest.raises(dist.CollectiveMismatchError) as e:
        dist.all_reduce(ember.ones(2, 3))
    assert str(e.value) == (
        "all_reduce: detected a mismatch between ranks (EMBER_DISTRIBUTED_DEBUG=DETAIL): "
        "rank 0: all_reduce(shape=(2, 3), dtype=float32, op=SUM); rank 1: all_reduce("
        "shape=(2, 4), dtype=float32, op=SUM). Ranks [1] differ from rank 0; every rank must "
        "call the same collective with tensors of the same shape and dtype (and the same "
        "root and op)")
    assert isinstance(e.value, (RuntimeError, ValueError))
    monkeypatch.setattr(debug, "host_all_gather_object", lambda g, fp: [fp, fp])
    dist.broadcast(ember.ones(2), src=1)          # agreeing ranks pass


def test_off_by_default_and_bad_modes_refused(fake, monkeypatch):
    monkeypatch.setattr(debug, "host_all_gather_object", lambda g, fp: pytest.fail("checked"))
    dist.all_reduce(ember.ones(2))
    monkeypatch.setenv("EMBER_DISTRIBUTED_DEBUG", "INFO")
    dist.all_reduce(ember.ones(2))
    monkeypatch.setenv("EMBER_DISTRIBUTED_DEBUG", "LOUD")
    with pytest.raises(ValueError, match="OFF, INFO, DETAIL, got 'LOUD'"):
        dist.all_reduce(ember.ones(2))
