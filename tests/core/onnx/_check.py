"""Export a function or model, check it with onnx.checker, run it in onnxruntime and
compare with ember's own outputs: the reference every ONNX test uses.

``check_export(fn, inputs)`` returns the ModelProto. With ``dynamic_axes`` (by input
position: ``{0: [0]}``) the exported model is also run on ``more_inputs`` (different sizes
along those axes) and compared with ember on them. Tolerance: 1e-5 relative and absolute
in float32 (the issue's), 1e-12 in float64; integer and bool outputs must be equal.
"""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort

import ember as E
import ember.onnx as eo


def run_onnx(model: onnx.ModelProto, arrays: list) -> list:
    """Run ``model`` in onnxruntime (CPU) on numpy ``arrays``; returns its outputs."""
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    # the model as exported, not onnxruntime's rewrite of it (its fusions may keep
    # constants in float32 and blur float64 results)
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, dict(zip(names, arrays)))


def ember_outputs(fn, inputs) -> list:
    """``fn(*inputs)`` flattened to numpy arrays (Modules run in eval mode, then go back
    to their own)."""
    mode = fn.training if isinstance(fn, E.nn.Module) else None
    if mode is not None:
        fn.eval()
    try:
        with E.no_grad():
            out = fn(*inputs)
    finally:
        if mode is not None:
            fn.train(mode)
    return [o.detach().numpy() for o in _flat(out)]


def _flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def assert_close(got, want, what="output") -> None:
    """onnxruntime's ``got`` against ember's ``want``: dtype and shape equal, values
    within the tolerance of the module docstring."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != ember's {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != ember's {want.dtype}"
    if want.dtype.kind == "f":
        tol = 1e-12 if want.dtype == np.float64 else 1e-5
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def check_export(fn, inputs, opset_version: int = 17, dynamic_axes: dict | None = None,
                 more_inputs=None, **kwargs) -> onnx.ModelProto:
    """Export ``fn`` on ``inputs`` (a tuple of Tensors), check, run and compare.

    ``dynamic_axes``: ``{input position: [axes]}``; every output gets no declared dynamic
    axes (the exporter finds them). ``more_inputs``: a second tuple, sized differently
    along those axes, also run and compared. Extra ``kwargs`` go to ``ember.onnx.export``.
    """
    inputs = tuple(inputs)
    names = [f"in{i}" for i in range(len(inputs))]
    axes = None
    if dynamic_axes:
        axes = {names[i]: list(a) for i, a in dynamic_axes.items()}
    model = eo.export(fn, inputs, None, opset_version=opset_version, input_names=names,
                      dynamic_axes=axes, **kwargs)
    onnx.checker.check_model(model, full_check=True)
    for i, (got, want) in enumerate(zip(run_onnx(model, [t.numpy() for t in inputs]),
                                        ember_outputs(fn, inputs))):
        assert_close(got, want, f"output {i}")
    if more_inputs is not None:
        more_inputs = tuple(more_inputs)
        for i, (got, want) in enumerate(zip(run_onnx(model, [t.numpy() for t in more_inputs]),
                                            ember_outputs(fn, more_inputs))):
            assert_close(got, want, f"output {i} (resized inputs)")
    return model


def ops_in(model: onnx.ModelProto) -> list:
    """The op types of the model's nodes, in order (Identity of the outputs left out)."""
    return [n.op_type for n in model.graph.node if not n.name.startswith("/output")]
