"""``ember.onnx.export``: trace a model, map each IR node to ONNX, check, write.

    model.eval()
    ember.onnx.export(model, (x,), "model.onnx", input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "batch"},
                                                             "logits": {0: "batch"}})

Steps:

1. **Trace** the model (in eval mode: dropout off, batch norm on its running statistics;
   the model's own mode is restored afterwards) with ``ember.jit``'s tracer. Parameters
   and buffers become ONNX initializers under their qualified names (``features.0.weight``).
2. **Passes that help export** (``passes.py``): in-place ops become their out-of-place
   twins where no view shares the memory, then dead code elimination and constant
   propagation, so ops on constants (``ember.zeros(4)`` inside ``forward``) arrive as one
   constant.
3. **Dynamic axes**: with ``dynamic_axes``, trace again with those axes twice as long
   and compare (``ember/onnx/dynamic.py``), so symbolics know which sizes follow them.
4. **Symbolics**: each node goes through its symbolic function (``registry.py``); an op
   without one raises :class:`UnsupportedOperatorError` naming it and its source line.
5. **Check** the model with ``onnx.checker.check_model(full_check=True)`` (types and
   shapes inferred through every node); a failure raises OnnxExportError.
6. **Write** to a temporary file beside ``path`` and rename it into place, so a failed
   export leaves nothing, not a half-written file; the file gets the mode a plain
   ``open(path, "wb")`` would give it (``ember/_files.py``). Initializers no node reads
   (a BatchNorm's ``num_batches_tracked``) are left out, as ``torch.onnx.export`` does.

Reference: ``torch.onnx.export`` (the TorchScript-based exporter of PyTorch 1.x-2.x).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .._files import write_atomically
from ..jit.ir.ir_types import TensorType
from ..jit.ir.kinds import prim
from .context import GraphContext, OnnxValue, SizeValue, has_size_value, traced_value
from .dtypes import to_onnx
from .errors import OnnxExportError, UnsupportedOperatorError
from .registry import MIN_OPSET, lookup

__all__ = ["export", "export_graph"]


def export(model_or_fn, example_inputs, path, opset_version: int = 17,
           input_names: Optional[list] = None, output_names: Optional[list] = None,
           dynamic_axes: Optional[dict] = None):
    """Export ``model_or_fn`` traced on ``example_inputs`` as an ONNX model at ``path``.

    Args:
        model_or_fn: an ``ember.nn.Module`` (traced in eval mode, then put back in its
            own mode) or a function of Tensors.
        example_inputs: a Tensor or a tuple of Tensors (nested tuples/lists allowed; they
            are flattened in order).
        path: a file path (str or os.PathLike), a writable binary file object, or None to
            only return the model.
        opset_version: the ONNX opset of the default domain, from 13 to the newest the
            installed ``onnx`` knows.
        input_names, output_names: names of the flattened inputs/outputs (default
            ``input_0``..., ``output_0``...).
        dynamic_axes: ``{name: [axis, ...]}`` or ``{name: {axis: "dim_name"}}`` for
            inputs and outputs whose sizes vary (``{"x": {0: "batch"}}``).
    Returns the ``onnx.ModelProto`` (also written to ``path``).
    Raises:
        UnsupportedOperatorError: an op without a symbolic at this opset.
        OnnxExportError: bad arguments, a size that would be baked in although it follows
            a dynamic axis, or a model the ONNX checker rejects. Nothing is written.
    Reference: ``torch.onnx.export``.
    """
    import onnx

    model = _export_model(model_or_fn, example_inputs, opset_version, input_names,
                          output_names, dynamic_axes)
    if path is not None:
        _write(onnx, model, path)
    return model


def _export_model(model_or_fn, example_inputs, opset, input_names, output_names,
                  dynamic_axes):
    import onnx
    from ..jit.frontend.traced import _flatten, _module_state
    from ..nn.modules.module import Module

    newest = onnx.defs.onnx_opset_version()
    if not isinstance(opset, int) or isinstance(opset, bool) or not MIN_OPSET <= opset <= newest:
        raise OnnxExportError(f"opset_version must be an int from {MIN_OPSET} to {newest} "
                              f"(the newest the installed onnx {onnx.__version__} knows), got "
                              f"{opset!r}")
    args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    flat, _ = _flatten(args, "example inputs")
    is_module = isinstance(model_or_fn, Module)
    if not is_module and not callable(model_or_fn):
        raise OnnxExportError(f"model_or_fn must be an ember.nn.Module or a function, got "
                              f"{type(model_or_fn).__name__}")
    refs = _module_state(model_or_fn) if is_module else []
    in_names = _names(input_names, len(flat), "input", "input_names", "inputs")
    in_axes = _axes_by_position(dynamic_axes, in_names, flat)

    graph, variation = _trace(model_or_fn, args, flat, refs, is_module, in_axes)
    out_count = len(graph.outputs)
    out_names = _names(output_names, out_count, "output", "output_names", "outputs")
    unknown = set(dynamic_axes or {}) - set(in_names) - set(out_names)
    if unknown:
        raise OnnxExportError(f"dynamic_axes names {sorted(unknown)}, which are neither inputs "
                              f"{in_names} nor outputs {out_names}; name them with "
                              f"input_names/output_names")
    out_axes = {i: _axis_map(dynamic_axes[n], n) for i, n in enumerate(out_names)
                if dynamic_axes and n in dynamic_axes}
    return export_graph(graph, opset, in_names, out_names, in_axes, out_axes,
                        [getattr(m, name) for _, m, name, _ in refs],
                        [q for q, _, _, _ in refs], variation)


def _trace(fn, args, flat, refs, is_module, in_axes):
    """The traced graph, after the export passes, and the variation map (see dynamic.py)."""
    from ..jit.frontend.traced import _flatten, _run_trace, _unflatten
    from .dynamic import grown_inputs, variation
    from .passes import prepare

    def traced(call_args):
        mode = fn.training if is_module else None
        if is_module:
            fn.eval()
        try:
            g, _, _ = _run_trace(fn, call_args, fn if is_module else None, refs)
        finally:
            if is_module:
                fn.train(mode)
        prepare(g)
        return g

    graph = traced(args)
    if not in_axes:
        return graph, {}
    _, spec = _flatten(args, "example inputs")
    grown, _ = _unflatten(grown_inputs(flat, in_axes), spec)   # spec is of the args tuple
    try:
        other = traced(tuple(grown))
    except Exception as e:  # noqa: BLE001 - reported as the export's error
        raise OnnxExportError(f"the model fails when its dynamic axes double "
                              f"({type(e).__name__}: {e}); export without those "
                              f"dynamic_axes") from e
    return graph, variation(graph, other)


def export_graph(graph, opset: int, input_names: list, output_names: list,
                 input_axes: dict, output_axes: dict, state: list, state_names: list,
                 variation: Optional[dict] = None):
    """Map an IR graph (user inputs, then ``state`` inputs) to a checked
    ``onnx.ModelProto``. ``input_axes``/``output_axes``: position -> {axis: name}."""
    import onnx
    from onnx import helper, numpy_helper

    variation = variation or {}
    g = GraphContext(opset)
    env: dict = {}
    inputs = graph.inputs
    n_user = len(inputs) - len(state)
    graph_inputs = []
    for i, v in enumerate(inputs[:n_user]):
        t = v.type
        name = g.claim(input_names[i])
        env[v] = OnnxValue(name, t.dtype, t.concrete_sizes(), variation.get(v))
        graph_inputs.append(_value_info(name, t, input_axes.get(i, {})))
    for v, tensor, qual in zip(inputs[n_user:], state, state_names):
        name = g.claim(qual)
        arr = tensor.detach().numpy()
        g.initializers[name] = numpy_helper.from_array(np.require(arr, requirements="C"), name)
        env[v] = OnnxValue(name, v.type.dtype, arr.shape, (False,) * arr.ndim)

    for node in graph.nodes():
        _export_node(g, node, env, variation)

    outputs, graph_outputs = [], []
    for i, v in enumerate(graph.outputs):
        val = env.get(v)
        if not isinstance(val, OnnxValue):
            raise OnnxExportError(f"graph output {i} is not a tensor ({v.type}); ONNX "
                                  f"outputs must be tensors")
        name = g.claim(output_names[i])
        # an Identity gives every output its own name, even when it is an input, an
        # initializer or another output; runtimes fold it away
        g.nodes.append(helper.make_node("Identity", [val.name], [name],
                                        name=g.fresh_name("/output")))
        axes = dict(output_axes.get(i, {}))
        for d, dyn in enumerate(variation.get(v, ())):
            if dyn and d not in axes:
                axes[d] = f"{name}_dynamic_axes_{d + 1}"
        graph_outputs.append(_value_info(name, v.type, axes))
        outputs.append(name)

    _prune(g, outputs)
    onnx_graph = helper.make_graph(g.nodes, "ember_graph", graph_inputs, graph_outputs,
                                   initializer=list(g.initializers.values()))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v)
                                                 for d, v in sorted(g.domains.items())]
    import ember
    model = helper.make_model(onnx_graph, opset_imports=opsets, producer_name="ember",
                              producer_version=getattr(ember, "__version__", "0"))
    model.ir_version = min(model.ir_version, _ir_version_for(opset))
    try:
        onnx.checker.check_model(model, full_check=not g.domains)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        raise OnnxExportError(f"the ONNX checker rejects the exported model: {e}") from e
    return model


def _prune(g: GraphContext, outputs: list) -> None:
    """Drop the ONNX nodes nothing reads: a run-time size (``Shape`` + ``Gather``) that the
    op taking it wrote another way (0 in a Reshape target, 1 in an Expand shape); then the
    initializers no kept node reads (a BatchNorm's ``num_batches_tracked``, a parameter
    the forward never uses), as ``torch.onnx.export`` leaves them out."""
    used = set(outputs)
    read = {i for n in g.nodes for i in n.input}
    keep = []
    for n in reversed(g.nodes):
        # NOTE: a Constant nothing ever read stays, as it always has (type_as's other)
        if any(o in used for o in n.output) or \
                (n.op_type == "Constant" and not read.intersection(n.output)):
            used.update(n.input)
            keep.append(n)
    g.nodes[:] = keep[::-1]
    read = _names_read(g.nodes)
    for name in [k for k in g.initializers if k not in read]:
        del g.initializers[name]


def _names_read(nodes) -> set:
    """The value names ``nodes`` read, also inside their subgraphs (a custom symbolic's
    ``If``/``Loop`` bodies may read an outer initializer)."""
    names = set()
    for n in nodes:
        names.update(n.input)
        for a in n.attribute:
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                names |= _names_read(sub.node)
    return names


def _export_node(g: GraphContext, node, env: dict, variation: dict) -> None:
    kind = node.kind
    if kind == prim.Constant:
        v = node.output()
        val = v.to_ivalue()
        if hasattr(val, "shape") and hasattr(val, "numpy"):   # a tensor constant
            if v in variation:
                g.node = node
                g.fail("a tensor made inside the model has a size that follows a dynamic "
                       "axis; ONNX would store it with the traced size. Build it from an "
                       "input instead (ember.zeros_like(x), x.new_zeros)")
            env[v] = g.constant(val)
        else:
            env[v] = val
        return
    if kind == prim.SliceConstruct:       # a slice bound that is a size (x[:n // 2])
        env[node.output()] = slice(*(env[v] for v in node.inputs))
        if has_size_value(env[node.output()]):
            variation[node.output()] = True
        return
    if kind in (prim.ListConstruct, prim.TupleConstruct):
        env[node.output()] = [env[v] for v in node.inputs]
        # a size item follows a dynamic axis when it is a run-time size, or a constant
        # that changed in the second trace
        varying = tuple(has_size_value(env[v]) or
                        (bool(variation.get(v)) and not isinstance(env[v], OnnxValue))
                        for v in node.inputs)
        if any(varying):                  # a size list built from traced sizes
            variation[node.output()] = varying
        return
    if kind in (prim.ListUnpack, prim.TupleUnpack):
        items = env[node.input()]
        for o, item in zip(node.outputs, items):
            if isinstance(item, OnnxValue):
                item = _annotated(item, OnnxValue("", *_type_parts(o.type), variation.get(o)))
            env[o] = item
        return
    ins = [env[v] for v in node.inputs]
    if kind == prim.PythonOp:
        fn_cls = node.attr("fn")
        symbolic = getattr(fn_cls, "symbolic", None)
        if symbolic is None:
            raise UnsupportedOperatorError(
                kind, f"the custom Function {getattr(fn_cls, '__name__', fn_cls)} has no "
                f"ONNX symbolic; give it a static method symbolic(g, *inputs) that builds "
                f"its ONNX nodes with g.op", node)
        scalars = iter(node.attr("scalar_args"))
        tensors = iter(ins)
        ins = [next(tensors) if c == "v" else next(scalars) for c in node.attr("cconv")]
        fn = symbolic
    else:
        entry = lookup(kind, g.opset)
        if entry is None:
            any_opset = lookup(kind, 10 ** 6)
            hint = (f"it needs opset_version >= {any_opset.opset}" if any_opset is not None
                    else "register one with ember.onnx.register_symbolic")
            raise UnsupportedOperatorError(
                kind, f"ONNX export: no symbolic for {kind} at opset {g.opset}; {hint}",
                node)
        fn = entry.fn
    sized = getattr(fn, "takes_size_values", False)
    if not sized:
        ins = [_sizes_for(node, i, a, variation) for i, a in enumerate(ins)]
    templates = tuple(OnnxValue("", *_type_parts(o.type), variation.get(o))
                      for o in node.outputs)
    g._bind(node, templates, tuple(variation.get(v) for v in node.inputs))
    try:
        result = fn(g, *ins)
    except (OnnxExportError, TypeError, ValueError) as e:
        if isinstance(e, OnnxExportError):
            raise
        raise OnnxExportError(f"the symbolic of {kind} failed: {type(e).__name__}: {e}",
                              node) from e
    for i, v in enumerate(node.inputs):
        if v in variation and i not in g.acknowledged and not isinstance(ins[i], OnnxValue) \
                and not (sized and has_size_value(ins[i])):
            g.fail(f"argument {i} ({ins[i]!r}) follows a dynamic axis, but the symbolic would "
                   f"bake it in; compute it from a tensor inside the model, or export "
                   f"without that dynamic axis")
    outs = _results(node, result)
    for i, dims in g._data_dependent.items():    # nonzero's K: dynamic from here on
        o = node.outputs[i]
        flags = [d in dims or bool(f) for d, f in
                 enumerate(variation.get(o) or (False,) * len(templates[i].sizes))]
        variation[o] = tuple(flags)
        templates = templates[:i] + (OnnxValue("", *_type_parts(o.type), variation[o]),) + \
            templates[i + 1:]
    for o, val, tmpl in zip(node.outputs, outs, templates):
        if isinstance(val, OnnxValue) and not isinstance(val, SizeValue):
            if tmpl.dtype is not None and val.dtype is not None and val.dtype is not tmpl.dtype:
                val = g.cast(val, tmpl.dtype)
            val = _annotated(val, tmpl)
        env[o] = val


def _sizes_for(node, i: int, arg, variation: dict):
    """Input ``i`` as a symbolic not marked ``takes_size_values`` takes it: a run-time size
    passed where the schema takes a Tensor or Scalar stays a graph value (``x / x.size(1)``);
    elsewhere it is the traced number, marked as following a dynamic axis (so the symbolic
    handles it through ``g.dynamic(i)``, or the export stops rather than bake it in)."""
    if not has_size_value(arg):
        return arg
    if isinstance(arg, SizeValue) and _formal(node.kind, i) in ("Tensor", "Scalar"):
        return arg
    v = node.inputs[i]
    if v not in variation:
        variation[v] = True if not isinstance(arg, (list, tuple)) else \
            tuple(has_size_value(a) for a in arg)
    return traced_value(arg)


def _formal(kind: str, i: int):
    """The schema type (``"Tensor"``, ``"int"``, ...) of input ``i`` of ``kind``, or None."""
    from ..jit.runtime.op_registry import is_op_kind, op_info
    if not is_op_kind(kind) or op_info(kind).schema is None:
        return None
    args = op_info(kind).schema.arguments
    return args[i].type.base if i < len(args) and not args[i].type.is_list else None


def _results(node, result) -> list:
    n = len(node.outputs)
    if n == 1 and not isinstance(node.output().type, TensorType) and \
            isinstance(result, (list, tuple)):
        return [list(result)]            # one list output (chunk, split, unbind)
    outs = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(outs) != n:
        raise OnnxExportError(f"the symbolic of {node.kind} returned {len(outs)} values for "
                              f"{n} outputs", node)
    return outs


def _annotated(val: OnnxValue, tmpl: OnnxValue) -> OnnxValue:
    """``val`` with the IR's dtype/sizes/dynamic dims filled in where it has none."""
    return OnnxValue(val.name, val.dtype or tmpl.dtype,
                     val.sizes if tmpl.sizes is None else tmpl.sizes,
                     val.dynamic if tmpl.dynamic is None and tmpl.sizes is None
                     else (tmpl.dynamic or (False,) * len(tmpl.sizes)))


def _type_parts(t) -> tuple:
    if isinstance(t, TensorType):
        return t.dtype, t.concrete_sizes()
    return None, None


def _value_info(name: str, t, axes: dict):
    from onnx import helper
    if not isinstance(t, TensorType) or t.dtype is None:
        raise OnnxExportError(f"ONNX inputs and outputs must be tensors of a known dtype; "
                              f"{name!r} is {t}")
    sizes = t.concrete_sizes()
    shape = None if sizes is None else [axes.get(d, s) for d, s in enumerate(sizes)]
    return helper.make_tensor_value_info(name, to_onnx(t.dtype), shape)


def _ir_version_for(opset: int) -> int:
    """The newest IR version whose runtimes know ``opset`` (onnx's own version table), so
    older onnxruntime builds load the file."""
    from onnx import helper
    # rows: (onnx release, IR version, default-domain opset, ml opset, training opset)
    table = [row for row in helper.VERSION_TABLE if row[2] >= opset]
    return table[0][1] if table else helper.VERSION_TABLE[-1][1]


def _names(given, count: int, prefix: str, arg: str, what: str) -> list:
    if given is None:
        return [f"{prefix}_{i}" for i in range(count)] if count > 1 else [prefix]
    given = list(given)
    if len(given) != count or not all(isinstance(n, str) and n for n in given):
        raise OnnxExportError(f"{arg} must be {count} non-empty strings (the model has "
                              f"{count} {what}), got {given!r}")
    if len(set(given)) != len(given):
        raise OnnxExportError(f"{arg} has duplicates: {given!r}")
    return given


def _axis_map(spec: Any, name: str) -> dict:
    if isinstance(spec, dict):
        items = spec.items()
    elif isinstance(spec, (list, tuple)):
        items = ((a, f"{name}_dynamic_axes_{j + 1}") for j, a in enumerate(spec))
    else:
        raise OnnxExportError(f"dynamic_axes[{name!r}] must be a list of axes or a dict "
                              f"{{axis: name}}, got {spec!r}")
    out = {}
    for a, n in items:
        if not isinstance(a, int) or isinstance(a, bool) or not isinstance(n, str):
            raise OnnxExportError(f"dynamic_axes[{name!r}]: axes are ints and names are "
                                  f"strings, got {a!r}: {n!r}")
        out[a] = n
    return out


def _axes_by_position(dynamic_axes, names: list, flat: list) -> dict:
    if dynamic_axes is None:
        return {}
    if not isinstance(dynamic_axes, dict):
        raise OnnxExportError(f"dynamic_axes must be a dict {{name: axes}}, got "
                              f"{type(dynamic_axes).__name__}")
    out = {}
    for i, name in enumerate(names):
        if name not in dynamic_axes:
            continue
        axes = _axis_map(dynamic_axes[name], name)
        nd = flat[i].ndim
        fixed = {}
        for a, n in axes.items():
            if not -nd <= a < nd:
                raise OnnxExportError(f"dynamic_axes[{name!r}] names axis {a}, but the input "
                                      f"has {nd} dims")
            fixed[a % nd] = n
        out[i] = fixed
    return out


def _write(onnx, model, path) -> None:
    """Write ``model`` whole or not at all, with the mode ``open(path, "wb")`` gives."""
    data = model.SerializeToString()
    if hasattr(path, "write"):
        path.write(data)
        return
    write_atomically(path, data, "ember.onnx.export")
