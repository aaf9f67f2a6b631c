"""Abstraction levels: a registry of named strategies for abstracting arguments.

A level is a class with one job, ``abstractify(value) -> AbstractValue``. The aval it
returns is hashable and is the cache key for the argument. Built in, from the most
specific to the most abstract (the *lattice*):

========== ================= ====================================================
name       aval              compiled code is reused for
========== ================= ====================================================
static     ``StaticArg``     the same value (``==`` and ``hash``)
concrete   ``ConcreteArray`` the same value
shaped     ``ShapedArray``   any value of that shape and dtype (jit's default)
ranked     ``RankedArray``   any shape of that rank and dtype (same axes of size 1)
========== ================= ====================================================

The protocol (see ``docs/abstraction-levels.md``):

* ``name`` — set by :func:`register_level`; shown in error messages.
* ``abstractify(value) -> aval`` — ``value`` is an ``Array``, a NumPy array or
  scalar, a Python scalar, or (for a call nested in another transformation) a tracer.
* the aval — a :class:`ShapedArray` or a subclass: ``shape``, ``dtype``,
  ``weak_type``, ``__hash__``/``__eq__`` (the cache key), ``str_short()`` (printing
  and the explain-cache-misses log), and the hooks that decide what Python may do with
  a tracer carrying it (``_bool``, ``_int``, ``_index``, ``_float``, ``_array``;
  ``ShapedArray`` refuses, ``ConcreteArray`` answers).
* ``aval_class`` (optional) — the class ``abstractify`` returns; checked for
  hashability at registration. Every aval is checked again when first used.
* ``strictness`` (higher is more abstract) and ``knows_values``.

Examples
--------
>>> class StrongLevel(ShapedLevel):
...     '''Shaped, with weak types made strong.'''
...     def abstractify(self, value):
...         return super().abstractify(value).strip_weak_type()
>>> register_level("strong_example", StrongLevel).name
'strong_example'
>>> get_level("strong_example").abstractify(2.0)
ShapedArray(float32[])
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .avals import AbstractValue, ConcreteArray, RankedArray, ShapedArray, StaticArg
from .dims import is_symbolic

__all__ = ["Level", "StaticLevel", "ConcreteLevel", "ShapedLevel", "RankedLevel",
           "register_level", "get_level", "registered_levels", "strictness",
           "check_aval"]


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
    #: The class ``abstractify`` returns, when there is one (checked at registration).
    aval_class = None

    def abstractify(self, value) -> AbstractValue:
        raise NotImplementedError

    def __repr__(self):
        return f"<level {self.name!r}>"


class StaticLevel(Level):
    """The value itself; it must be hashable."""

    name = "static"
    strictness = 0
    knows_values = True
    aval_class = StaticArg

    def abstractify(self, value) -> AbstractValue:
        return StaticArg(value)


class ConcreteLevel(Level):
    """Dtype, shape and value: ``ConcreteArray``."""

    name = "concrete"
    strictness = 1
    knows_values = True
    aval_class = ConcreteArray

    def abstractify(self, value) -> AbstractValue:
        dt, weak = value_dtype_and_weak(value)
        raw = value._value if hasattr(value, "_value") else value
        return ConcreteArray(np.asarray(raw, dtype=dt), weak_type=weak)


class ShapedLevel(Level):
    """Dtype, shape and weak type: ``ShapedArray``."""

    name = "shaped"
    strictness = 2
    aval_class = ShapedArray

    def abstractify(self, value) -> AbstractValue:
        dt, weak = value_dtype_and_weak(value)
        return ShapedArray(np.shape(value), dt, weak)


class RankedLevel(Level):
    """Dtype, rank and the axes of size 1: ``RankedArray``. One compiled program serves
    every size; the sizes are read from the arguments when it runs.

    A tracer of an enclosing transformation keeps its symbolic sizes; one with concrete
    sizes (``jit(f, abstraction="ranked")`` called under an eager ``grad`` or ``vmap``)
    is traced at those sizes.
    """

    name = "ranked"
    strictness = 3
    aval_class = RankedArray

    def abstractify(self, value) -> AbstractValue:
        aval = getattr(value, "aval", None)
        if isinstance(aval, ShapedArray) and hasattr(value, "_trace"):  # a tracer
            if is_symbolic(aval.shape):
                return RankedArray.from_shaped(aval)
            return aval.to_shaped()
        dt, weak = value_dtype_and_weak(value)
        shape = np.shape(value)
        return RankedArray(len(shape), dt, weak, tuple(d for d, n in enumerate(shape)
                                                       if n == 1))


_REGISTRY: dict[str, Level] = {}


def register_level(name: str, cls) -> Level:
    """Register an abstraction level under ``name``; returns its instance.

    Parameters
    ----------
    name : str
        What ``jit(..., abstraction=name)`` and ``make_jaxpr`` accept.
    cls : type
        A :class:`Level` subclass implementing ``abstractify(value) -> aval`` (the aval
        a hashable :class:`ShapedArray` or subclass; see the module docstring).

    Raises
    ------
    TypeError
        ``cls`` is not a ``Level`` subclass, or its ``aval_class`` is unhashable.

    Examples
    --------
    >>> import absjit
    >>> class Strong(absjit.core.ShapedLevel):
    ...     def abstractify(self, value):
    ...         return super().abstractify(value).strip_weak_type()
    >>> absjit.register_level("strong", Strong)
    <level 'strong'>
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_level: the name must be a non-empty string, got {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, Level)):
        raise TypeError(f"register_level expects a Level subclass, got {cls!r}")
    aval_cls = getattr(cls, "aval_class", None)
    if aval_cls is not None and getattr(aval_cls, "__hash__", None) is None:
        raise TypeError(
            f"register_level({name!r}): {cls.__name__}.aval_class {aval_cls.__name__} is "
            "unhashable; avals are cache keys and must define __hash__ and __eq__.")
    inst = cls()
    inst.name = name
    _REGISTRY[name] = inst
    return inst


def check_aval(level, aval):
    """``aval`` when it can serve as a cache key, else a ``TypeError`` naming the
    level (run on a level's avals before they are used)."""
    if not isinstance(aval, AbstractValue):
        raise TypeError(
            f"abstraction level {level.name!r}: abstractify returned {aval!r}, which is "
            "not an AbstractValue (return a ShapedArray or a subclass).")
    try:
        hash(aval)
    except TypeError as e:
        raise TypeError(
            f"abstraction level {level.name!r}: its aval {type(aval).__name__} is "
            f"unhashable ({e}); avals are cache keys and must define __hash__ and "
            "__eq__.") from None
    return aval


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
register_level("ranked", RankedLevel)
