"""ember-cuda: the ``cuda`` backend (CuPy arrays) and cuDNN convolution for ember.

Install with a CUDA extra: ``pip install "ember-cuda[cuda13,cudnn]"`` (or ``cuda12`` and
``cudnn12``). Without CuPy or without a GPU the plugin registers nothing and
``ember plugins`` says why; ``ember.cuda.is_available()`` is then False. See
``docs/cuda.md``.
"""
