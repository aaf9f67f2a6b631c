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

__all__ = ["size_of", "is_static", "IxVar", "IxConst", "IxAdd", "IxScale", "IxClamp",
           "ix_const", "ix_add", "ix_scale", "ix_vars", "is_ix"]


def is_static(shape) -> bool:
    """Every dimension of ``shape`` is a Python/NumPy integer."""
    return all(isinstance(d, int) or hasattr(d, "__index__") for d in shape)


def size_of(shape) -> int:
    """Number of elements of ``shape`` (1 for a scalar)."""
    return math.prod(int(d) for d in shape) if shape else 1


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


def ix_const(value: int) -> IxConst:
    return IxConst(int(value))


def ix_add(a, b):
    """``a + b`` with constants folded (either may be an int)."""
    a = ix_const(a) if isinstance(a, int) else a
    b = ix_const(b) if isinstance(b, int) else b
    if isinstance(a, IxConst) and isinstance(b, IxConst):
        return IxConst(a.value + b.value)
    if isinstance(a, IxConst):
        a, b = b, a
    if isinstance(b, IxConst):
        if b.value == 0:
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
