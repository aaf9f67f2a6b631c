"""Sizes and index expressions: the arithmetic the compiler does on shapes, as data.

A *size* is a Python ``int`` today; everything that computes with sizes goes through
:func:`size_of` / :func:`is_static` so that symbolic dimensions (the ``ranked`` level) can
be added here without touching the planner or the renderers.

An *index expression* says where a loop nest reads an operand. Primitives that move data
without computing (``broadcast_in_dim``, ``transpose``, ``slice``, ``rev`` …) register an
index-map rule (see :mod:`absjit.core.fusion`) that maps the output's index expressions to
the operand's. The algebra is tiny and affine:

``IxVar(name)``            a loop index
``IxConst(value)``         an integer
``IxAdd(a, b)``            ``a + b``
``IxScale(a, k)``          ``a * k`` for an integer constant ``k``
``IxClamp(value, lo, hi)`` ``min(max(int(value), lo), hi)`` where ``value`` is a scalar
                           computed at run time (a ``gather`` index, a ``dynamic_slice``
                           start): the handle is opaque here, the compiler gives it.

Use :func:`ix_add`, :func:`ix_scale` and :func:`ix_const` to build them: they fold
constants, so ``rev`` of a ``slice`` stays a single offset.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from .dims import Dim, is_symbolic, unify_sizes

__all__ = ["size_of", "is_static", "size_code", "shape_code", "as_size", "known_at_least",
           "maybe_more_than", "broadcast_shapes", "IxVar", "IxConst", "IxAdd", "IxScale",
           "IxClamp", "ix_const", "ix_add", "ix_scale", "ix_vars", "is_ix"]


def is_static(shape) -> bool:
    """Every dimension of ``shape`` is a Python/NumPy integer (none is a symbolic
    :class:`~absjit.core.dims.Dim`)."""
    return all(type(d) is not Dim and (isinstance(d, int) or hasattr(d, "__index__"))
               for d in shape)


def size_of(shape):
    """Number of elements of ``shape`` (1 for a scalar): an ``int``, or a symbolic
    size when some dimension is a :class:`~absjit.core.dims.Dim`."""
    if not shape:
        return 1
    if is_symbolic(shape):
        return math.prod(shape)
    return math.prod(int(d) for d in shape)


def size_code(d) -> str:
    """A size as Python source for generated code: a literal, or (``ranked`` level) an
    expression over the sizes a function binds at entry (``_n_x0 = arg0.shape[0]``)."""
    return d.code() if type(d) is Dim else str(int(d))


def shape_code(shape) -> str:
    """A shape as a Python tuple expression (see :func:`size_code`)."""
    return "(" + "".join(f"{size_code(d)}, " for d in shape) + ")"


def as_size(d):
    """``int(d)``, except that a symbolic size stays symbolic."""
    return d if type(d) is Dim else int(d)


def known_at_least(size, n: int) -> bool:
    """``size >= n`` is certain (false when a symbolic size might be smaller)."""
    if type(size) is Dim:
        try:
            return bool(size >= n)
        except TypeError:
            return False
    return size >= n


def maybe_more_than(size, n: int) -> bool:
    """``size > n`` is possible (true when a symbolic size might be larger)."""
    if type(size) is Dim:
        try:
            return bool(size > n)
        except TypeError:
            return True
    return size > n


def broadcast_shapes(*shapes) -> tuple:
    """NumPy's broadcast of ``shapes`` (entries may be symbolic); ``ValueError`` when
    they do not broadcast."""
    if not any(is_symbolic(s) for s in shapes):
        import numpy as np
        return tuple(np.broadcast_shapes(*shapes))
    ndim = max(len(s) for s in shapes)
    out = []
    for k in range(ndim):
        size = 1
        for s in shapes:
            j = k - (ndim - len(s))
            if j < 0:
                continue
            d = s[j]
            if type(d) is int and d == 1:
                continue
            if type(size) is int and size == 1:
                size = d
            elif not unify_sizes(d, size, f"broadcasting shapes {shapes}"):
                raise ValueError(f"shapes {shapes} do not broadcast")
        out.append(size)
    return tuple(out)


class IxVar(NamedTuple):
    name: str


class IxConst(NamedTuple):
    value: int


class IxAdd(NamedTuple):
    a: object
    b: object


class IxScale(NamedTuple):
    a: object
    k: int


class IxClamp(NamedTuple):
    value: object  # a scalar value of the compiler's IR (opaque here)
    lo: int
    hi: int


_IX = (IxVar, IxConst, IxAdd, IxScale, IxClamp)


def is_ix(x) -> bool:
    return isinstance(x, _IX)


def ix_const(value) -> IxConst:
    """A constant index; ``value`` may be a symbolic size (``n - 1`` in ``rev``)."""
    return IxConst(value if type(value) is Dim else int(value))


def ix_add(a, b):
    """``a + b`` with constants folded (either may be an int)."""
    a = ix_const(a) if isinstance(a, (int, Dim)) else a
    b = ix_const(b) if isinstance(b, (int, Dim)) else b
    if isinstance(a, IxConst) and isinstance(b, IxConst):
        return IxConst(a.value + b.value)
    if isinstance(a, IxConst):
        a, b = b, a
    if isinstance(b, IxConst):
        if type(b.value) is int and b.value == 0:
            return a
        if isinstance(a, IxAdd) and isinstance(a.b, IxConst):
            return ix_add(a.a, a.b.value + b.value)
    return IxAdd(a, b)


def ix_scale(a, k: int):
    """``a * k`` for an integer ``k``, folded."""
    k = int(k)
    if isinstance(a, int):
        a = ix_const(a)
    if k == 1:
        return a
    if isinstance(a, IxConst):
        return IxConst(a.value * k)
    if k == 0:
        return IxConst(0)
    return IxScale(a, k)


def ix_vars(ix) -> set:
    """Names of the loop indices an index expression reads."""
    if isinstance(ix, IxVar):
        return {ix.name}
    if isinstance(ix, IxAdd):
        return ix_vars(ix.a) | ix_vars(ix.b)
    if isinstance(ix, IxScale):
        return ix_vars(ix.a)
    return set()
