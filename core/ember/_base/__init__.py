"""The bottom layer: per-thread state and small rules that every other layer reads.

Nothing here imports from ember, so any layer may import it without running another
(importing the grad-mode flag does not run the autograd package):

* ``grad_mode``: whether ops record autograd history in this thread, and the context
  managers ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``
  (re-exported by ``ember.autograd.grad_mode`` and ``ember``).
* ``tracing_state``: whether this thread is tracing (re-exported by
  ``ember.jit.frontend.tracing_state``).
* ``wrap_dim``: normalizing negative dims (re-exported by ``ember.dispatch``).
* ``hooks``: the tables through which ``Tensor`` and the hand-written ops call autograd
  and the tracer above them (``AUTOGRAD``, ``TRACER``), filled by the composition root.
* ``registry``: the table of one plugin hook (``Registry``, ``table(hook)``), owned by the
  registry module that reads it.

Reference: PyTorch keeps the same facts in its bottom library, c10
(``c10/core/GradMode.h``, ``c10/core/WrapDimMinimal.h``).
"""
