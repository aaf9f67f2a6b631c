"""``jax.experimental``'s small pieces that absjit offers: :func:`io_callback` and the
:mod:`absjit.experimental.checkify` module.

Examples
--------
>>> import numpy as np
>>> import absjit
>>> from absjit.experimental import io_callback
>>> spec = absjit.ShapeDtypeStruct((), np.float32)
>>> absjit.jit(lambda x: io_callback(lambda v: np.float32(v * 2), spec, x))(1.5)
Array(3., dtype=float32)
"""
from __future__ import annotations

from .. import _callbacks

__all__ = ["io_callback", "checkify"]


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False,
                **kwargs):
    """Call the Python function ``callback`` (which may have side effects) on concrete
    values from traced code and return its results, shaped as ``result_shape_dtypes``.

    It is an effect: it runs on every call of a jitted function, in program order, even
    when its results are unused. ``vmap`` calls it once per element (an ``ordered=True``
    one raises ``ValueError``, as in JAX), and it cannot be differentiated (neither can
    JAX's: ``ValueError``).

    Examples
    --------
    >>> import numpy as np
    >>> import absjit
    >>> log = []
    >>> def record(v):
    ...     log.append(float(v))
    ...     return np.int32(len(log))
    >>> spec = absjit.ShapeDtypeStruct((), np.int32)
    >>> int(io_callback(record, spec, 2.0))
    1
    """
    if not isinstance(ordered, bool):
        raise TypeError(f"io_callback: ordered must be a bool, got {ordered!r}")
    if sharding is not None:
        raise ValueError("io_callback: absjit runs on one device; sharding must be None")
    return _callbacks.io_callback(callback, result_shape_dtypes, *args, ordered=ordered,
                                  **kwargs)


from . import checkify  # noqa: E402
