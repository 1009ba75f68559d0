"""ember.distributed's collectives on the fake 2-rank group (conftest): results written in
place (strided tensors through a temporary), versions bumped, async handles, and the
argument, dtype and device checks. The collectives themselves run on MPI in
tests/plugins/mpi."""
import numpy as np
import pytest

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

from .conftest import FakeBackend

X = np.arange(6.0).reshape(2, 3)


def test_all_reduce_in_place_without_copies(fake):
    t = ember.from_numpy(X.copy())
    buf, v = t._data, t._version
    assert dist.all_reduce(t) is None
    np.testing.assert_array_equal(t.numpy(), 2 * X + 10)
    assert t._version == v + 1
    assert fake.calls[0][1].base is buf or fake.calls[0][1] is buf   # no copy went out


@pytest.mark.parametrize("op, want", [(ReduceOp.MAX, X + 10), (ReduceOp.MIN, X),
                                      (ReduceOp.AVG, X + 5), (ReduceOp.PRODUCT, X * (X + 10))])
def test_all_reduce_ops(fake, op, want):
    t = ember.from_numpy(X.copy())
    dist.all_reduce(t, op=op)
    np.testing.assert_array_equal(t.numpy(), want)


def test_a_strided_tensor_goes_through_a_temporary_and_back(fake):
    base = ember.from_numpy(X.copy())
    view = base.t()
    assert not view.is_contiguous()
    dist.all_reduce(view)
    np.testing.assert_array_equal(base.numpy(), 2 * X + 10)


def test_async_work_completes_on_progress(register):
    b = register(FakeBackend(delay=3))
    dist.init_process_group("fake")
    t = ember.from_numpy(X.copy())
    work = dist.all_reduce(t, async_op=True)
    assert isinstance(work, dist.Work) and not work.is_completed()
    np.testing.assert_array_equal(t.numpy(), X)      # nothing before completion
    assert work.wait() is True and work.is_completed() and work.wait()
    np.testing.assert_array_equal(t.numpy(), 2 * X + 10)
    assert work.result() == [t]
    assert b.group is not None


def test_wait_times_out_naming_the_call(register):
    register(FakeBackend(delay=None))
    dist.init_process_group("fake")
    work = dist.broadcast(ember.ones(2), src=1, async_op=True)
    with pytest.raises(dist.DistTimeoutError, match=r"broadcast did not complete within "
                                                    r"0.05 s: a rank is missing"):
        work.wait(timeout=0.05)
    assert isinstance(dist.DistTimeoutError("x"), (RuntimeError, TimeoutError))
    with pytest.raises(TypeError, match="timedelta or seconds"):
        work.wait(timeout="1s")


def test_broadcast_reduce_scatter_gather(fake):
    t = ember.from_numpy(X.copy())
    dist.broadcast(t, src=1)
    np.testing.assert_array_equal(t.numpy(), X + 10)
    t = ember.from_numpy(X.copy())
    dist.reduce(t, dst=0)
    np.testing.assert_array_equal(t.numpy(), 2 * X + 10)
    outs = [ember.zeros(2, 3, dtype=ember.float64) for _ in range(2)]
    dist.all_gather(outs, ember.from_numpy(X.copy()))
    np.testing.assert_array_equal(outs[1].numpy(), X + 10)
    for shape in [(4, 3), (2, 2, 3)]:
        out = ember.zeros(*shape, dtype=ember.float64)
        dist.all_gather_into_tensor(out, ember.from_numpy(X.copy()))
        np.testing.assert_array_equal(out.numpy().reshape(4, 3), np.concatenate([X, X + 10]))
    out = ember.zeros(1, 3, dtype=ember.float64)
    dist.reduce_scatter_tensor(out, ember.from_numpy(X.copy()))
    np.testing.assert_array_equal(out.numpy(), (2 * X + 10)[:1])
    gl = [ember.zeros(2, 3, dtype=ember.float64) for _ in range(2)]
    dist.gather(ember.from_numpy(X.copy()), gl, dst=0)
    np.testing.assert_array_equal(gl[0].numpy(), X)
    t = ember.zeros(2, 3, dtype=ember.float64)
    dist.scatter(t, [ember.from_numpy(X), ember.from_numpy(-X)], src=0)
    np.testing.assert_array_equal(t.numpy(), X)


def test_point_to_point(fake):
    dist.send(ember.ones(2), dst=1, tag=4)
    assert fake.calls[-1] == ("send", 1, 4)
    t = ember.zeros(3)
    assert dist.recv(t) == 1 and t.tolist() == [7.0] * 3
    assert dist.irecv(ember.zeros(1), src=1).wait()
    with pytest.raises(ValueError, match="dst = 0 is this rank"):
        dist.send(ember.ones(2), dst=0)
    with pytest.raises(ValueError, match="tag to be an int >= 0"):
        dist.isend(ember.ones(2), dst=1, tag=-1)


def test_avg_on_integers_is_refused(fake):
    with pytest.raises(TypeError, match="ReduceOp.AVG takes floating-point tensors, got int64"):
        dist.all_reduce(ember.ones(2, dtype=ember.int64), op=ReduceOp.AVG)


def test_dtypes_the_backend_lacks_are_named(fake):
    with pytest.raises(TypeError, match=r"the 'fake' backend reduces float32, float64, int32, "
                                        r"int64; got tensor of dtype float16"):
        dist.all_reduce(ember.ones(2, dtype=ember.float16))
    dist.broadcast(ember.ones(2, dtype=ember.float16), src=0)   # moves take any dtype


def test_devices_the_backend_lacks_are_named(fake, alt):
    t = ember.ones(2).to("alt")
    with pytest.raises(TypeError, match=r"moves tensors on cpu, got tensor on alt; move it "
                                        r"with .to\('cpu'\)"):
        dist.all_reduce(t)


@pytest.mark.parametrize("call, err, match", [
    (lambda: dist.all_reduce(np.ones(2)), TypeError, "expected tensor to be an ember Tensor, "
                                                     "got ndarray"),
    (lambda: dist.all_reduce(ember.ones(2), op="sum"), TypeError, "ReduceOp"),
    (lambda: dist.broadcast(ember.ones(2), src=2), ValueError, r"src to be a rank in \[0, 2\)"),
    (lambda: dist.reduce(ember.ones(2), dst=True), ValueError, "dst to be a rank"),
    (lambda: dist.all_gather([ember.ones(2)], ember.ones(2)), ValueError,
     "list of world_size = 2 tensors, got 1 items"),
    (lambda: dist.all_gather([ember.ones(2), ember.ones(3)], ember.ones(2)), ValueError,
     r"input's shape \(2,\)"),
    (lambda: dist.all_gather_into_tensor(ember.ones(5), ember.ones(2)), ValueError,
     r"output_tensor of shape \(4,\) .* or \(2, 2\) \(stacked\), got \(5,\)"),
    (lambda: dist.all_gather_into_tensor(ember.ones(4, dtype=ember.float64), ember.ones(2)),
     TypeError, "dtype float32"),
    (lambda: dist.reduce_scatter_tensor(ember.ones(2), ember.ones(3)), ValueError,
     r"input of shape \(4,\)"),
    (lambda: dist.scatter(ember.ones(2), None, src=0), ValueError, "scatter_list"),
])
def test_argument_checks(fake, call, err, match):
    with pytest.raises(err, match=match):
        call()


def test_gather_list_only_on_dst(register):
    register(FakeBackend(rank=1))
    dist.init_process_group("fake")
    with pytest.raises(ValueError, match="gather_list is for rank dst = 0; pass None on rank 1"):
        dist.gather(ember.ones(2), [ember.ones(2)] * 2, dst=0)
    dist.gather(ember.ones(2), None, dst=0)


def test_reduce_op():
    assert [op.name for op in dist.ReduceOp] == ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]
    assert repr(dist.ReduceOp.SUM) == "ReduceOp.SUM"


def test_object_collectives_on_one_rank(register):
    register(FakeBackend(size=1))
    dist.init_process_group("fake")
    got = [None]
    dist.all_gather_object(got, {"a": (1, 2)})
    assert got == [{"a": (1, 2)}]
    lst = ["x", 3]
    dist.broadcast_object_list(lst, src=0)
    assert lst == ["x", 3]
    with pytest.raises(ValueError, match="list of world_size = 1 items, got 2 items"):
        dist.all_gather_object([None, None], 1)
    dist.barrier()
