"""Type annotations for absjit code (``jax.typing``).

``ArrayLike``
    What absjit functions accept as an array: an :class:`absjit.Array` (or a tracer),
    a NumPy array or scalar, or a Python ``bool``/``int``/``float``/``complex``.
``DTypeLike``
    What absjit accepts as a dtype: a NumPy dtype, a scalar type (``jnp.float32``,
    ``np.int8``, ``float``), a dtype name (``"float32"``), or anything with a ``dtype``
    attribute.

These are for static type checkers and documentation; at run time use
``isinstance(x, absjit.Array)`` to test for an array.

Examples
--------
>>> from absjit.typing import ArrayLike, DTypeLike
>>> import absjit.numpy as jnp
>>> def scale(x: ArrayLike, dtype: DTypeLike = jnp.float32):
...     return jnp.asarray(x, dtype) * 2
>>> scale(3)
Array(6., dtype=float32)
"""
from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from .array import Array

__all__ = ["ArrayLike", "DTypeLike"]


class _SupportsDType(Protocol):
    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, _SupportsDType]
