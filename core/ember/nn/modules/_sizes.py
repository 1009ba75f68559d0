"""Integer constructor arguments of the layers (sizes, channels, kernel sizes, dims).

PyTorch's layers take any integer a script hands them: a Python int, a numpy integer
(``nn.Linear(np.int64(3), 4)``, common when sizes come from ``array.shape`` or a config
read with numpy), anything with ``__index__``; bool is refused (``True`` is not a size).
``as_int`` converts such a value to a Python int, so the layer stores, prints and saves
plain ints.
"""
from __future__ import annotations

import operator


def as_int(v) -> int | None:
    """``v`` as a Python int when it is an integer other than a bool (an int, a numpy
    integer, any object with ``__index__``), else None."""
    if isinstance(v, bool):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None
