"""Abstraction levels: a registry of named strategies for abstracting arguments.

A level is a class with one job, ``abstractify(value) -> AbstractValue``. The aval it
returns is hashable and is the cache key for the argument. Built in:

========== ================= ====================================================
name       aval              compiled code is reused for
========== ================= ====================================================
static     ``StaticArg``     the same value (``==`` and ``hash``)
concrete   ``ConcreteArray`` the same value
shaped     ``ShapedArray``   any value of that shape and dtype (jit's default)
========== ================= ====================================================

Users add their own with :func:`register_level`.

Examples
--------
>>> class PowerOfTwoLevel(ShapedLevel):
...     '''Round every dimension up to a power of two.'''
>>> register_level("pow2", PowerOfTwoLevel)
<level 'pow2'>
>>> get_level("pow2").name
'pow2'
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .avals import AbstractValue, ConcreteArray, ShapedArray, StaticArg

__all__ = ["Level", "StaticLevel", "ConcreteLevel", "ShapedLevel", "register_level",
           "get_level", "registered_levels", "strictness"]


def value_dtype_and_weak(value):
    """Canonical dtype and weak flag of a user leaf (Array, NumPy value or scalar)."""
    return dtypes.dtype_of(value), dtypes.is_weakly_typed(value)


class Level:
    """Base class of abstraction levels.

    Subclasses set ``name`` and ``strictness`` (higher is more abstract; composing
    transforms keeps the strictest level) and implement :meth:`abstractify`.
    """

    name = "level"
    strictness = 0
    #: True when tracers at this level know values (Python may branch on them).
    knows_values = False

    def abstractify(self, value) -> AbstractValue:
        raise NotImplementedError

    def __repr__(self):
        return f"<level {self.name!r}>"


class StaticLevel(Level):
    """The value itself; it must be hashable."""

    name = "static"
    strictness = 0
    knows_values = True

    def abstractify(self, value) -> AbstractValue:
        return StaticArg(value)


class ConcreteLevel(Level):
    """Dtype, shape and value: ``ConcreteArray``."""

    name = "concrete"
    strictness = 1
    knows_values = True

    def abstractify(self, value) -> AbstractValue:
        dt, weak = value_dtype_and_weak(value)
        raw = value._value if hasattr(value, "_value") else value
        return ConcreteArray(np.asarray(raw, dtype=dt), weak_type=weak)


class ShapedLevel(Level):
    """Dtype, shape and weak type: ``ShapedArray``."""

    name = "shaped"
    strictness = 2

    def abstractify(self, value) -> AbstractValue:
        dt, weak = value_dtype_and_weak(value)
        return ShapedArray(np.shape(value), dt, weak)


_REGISTRY: dict[str, Level] = {}


def register_level(name: str, cls) -> Level:
    """Register ``cls`` (a :class:`Level` subclass) under ``name`` and return its instance."""
    if not (isinstance(cls, type) and issubclass(cls, Level)):
        raise TypeError(f"register_level expects a Level subclass, got {cls!r}")
    inst = cls()
    inst.name = name
    _REGISTRY[name] = inst
    return inst


def get_level(spec) -> Level:
    """A level from a name, a Level subclass or a Level instance."""
    if isinstance(spec, Level):
        return spec
    if isinstance(spec, type) and issubclass(spec, Level):
        for inst in _REGISTRY.values():
            if type(inst) is spec:
                return inst
        return spec()
    if isinstance(spec, str):
        try:
            return _REGISTRY[spec]
        except KeyError:
            raise ValueError(
                f"unknown abstraction level {spec!r}; registered levels: "
                f"{', '.join(sorted(_REGISTRY))}") from None
    raise TypeError(f"an abstraction level must be a name or a Level, got {spec!r}")


def registered_levels() -> list:
    return sorted(_REGISTRY)


def strictness(level) -> int:
    return get_level(level).strictness


register_level("static", StaticLevel)
register_level("concrete", ConcreteLevel)
register_level("shaped", ShapedLevel)
