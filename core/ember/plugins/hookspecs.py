"""The hooks a plugin implements. Each returns a list; the core validates every item and
refuses a plugin whose item takes a key another plugin holds (``validation.KEYS``), then
registers the plugin's items in the table of the hook's consumer with the plugin's name as
owner (``Registry.register(items, owner)``, ``ember/_base/registry.py``); ember's own
passes, ONNX symbolics and shared convolution kernels register through the same call with
the owner ``"ember"`` (``ember/_build.py``).

A plugin is a module named by an entry point in group ``ember`` (``cpu =
"ember_cpu.plugin"``) whose functions carry ``@ember.plugins.hookimpl``; a backend's name
is its entry point's name. The guide for plugin authors is ``docs/plugins.md``.
"""
import pluggy

hookspec = pluggy.HookspecMarker("ember")
hookimpl = pluggy.HookimplMarker("ember")


@hookspec
def ember_backends():
    """Return ``ember.types.Backend`` objects; called once, when plugins first load."""


@hookspec
def ember_convolution_algorithms():
    """Return convolution algorithms (``name``, ``priority``, ``device_type``,
    ``supports_groups``, ``supports(params)``, ``forward``, ``backward``; the protocol is in
    ``ember/backends/convolution.py``) that ``_convolution`` picks from by priority; called
    once at load."""


@hookspec
def ember_fusers():
    """Return fusers (``name``, ``device_type``, ``compile(subgraph)``, optionally
    ``can_fuse_node(node)``; the protocol is ``ember.jit.runtime.fuser.Fuser``) for the JIT's
    FuseGraph pass; called once at load."""


@hookspec
def ember_jit_passes():
    """Return ``(stage, pass_fn)`` pairs added to the GraphExecutor pipeline at ``stage``;
    called once at load."""


@hookspec
def ember_onnx_symbolics():
    """Return ONNX symbolic functions for ``ember.onnx.export``: ``ember.onnx.Symbolic``
    objects or ``(op, fn)`` / ``(op, fn, opset)`` tuples, ``fn(g, *inputs)`` building the
    op's ONNX nodes (the protocol is in ``ember/onnx/registry.py``); called once at load."""


@hookspec
def ember_process_group_backends():
    """Return process-group backends for ``ember.distributed`` (``name``,
    ``device_types``, ``new_group(rank, world_size, timeout)``; the protocol is
    ``ember.distributed.ProcessGroupBackend``); called once at load."""
