"""Shared helpers for defining primitives: dtype checks and shape rules."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core.avals import ShapedArray

__all__ = ["check_dtype_kind", "binop_shape", "same_dtypes", "ACCEPT", "kind_names",
           "canonical_axes", "standard_naryop_abstract", "standard_unop_abstract"]

# Accepted dtype families, by name used in error messages.
ACCEPT = {
    "float": lambda dt: dtypes.is_float(dt),
    "inexact": lambda dt: dtypes.is_inexact(dt),
    "int": lambda dt: dtypes.is_integer(dt),
    "int_or_bool": lambda dt: dtypes.is_integer(dt) or dtypes.is_bool(dt),
    "signed_num": lambda dt: dt.kind in "ifc" or dtypes.is_bfloat16(dt),
    "number": lambda dt: dt.kind in "iufc" or dtypes.is_bfloat16(dt),
    "any": lambda dt: True,
}
kind_names = {
    "float": "floating", "inexact": "floating, complexfloating", "int": "integer",
    "int_or_bool": "integer, bool", "signed_num": "signedinteger, floating, complexfloating",
    "number": "integer, floating, complexfloating", "any": "any",
}


def check_dtype_kind(name: str, dtype, kind: str) -> None:
    if not ACCEPT[kind](dtype):
        raise TypeError(f"lax.{name} does not accept dtype {np.dtype(dtype).name}. "
                        f"Accepted dtypes are subtypes of {kind_names[kind]}.")


def same_dtypes(name: str, *avals) -> np.dtype:
    dts = [a.dtype for a in avals]
    if any(d != dts[0] for d in dts[1:]):
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(d.name for d in dts)}. (absjit.lax does no implicit "
                        "promotion: convert explicitly, or use absjit.numpy.)")
    return dts[0]


def binop_shape(name: str, *avals) -> tuple:
    """Operands of an n-ary elementwise op: rank-0 ones broadcast, the rest must agree."""
    shapes = [a.shape for a in avals if a.shape != ()]
    if not shapes:
        return ()
    first = shapes[0]
    for s in shapes[1:]:
        if s != first:
            raise TypeError(f"lax.{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(tuple(a.shape)) for a in avals)}.")
    return first


def standard_naryop_abstract(name: str, kind: str, out_dtype=None):
    """Abstract rule of an elementwise op whose operands share one dtype."""
    def rule(*avals, **params):
        dt = same_dtypes(name, *avals)
        check_dtype_kind(name, dt, kind)
        shape = binop_shape(name, *avals)
        weak = all(a.weak_type for a in avals)
        return [ShapedArray(shape, dt if out_dtype is None else out_dtype(dt), weak)]
    rule.__name__ = f"{name}_abstract_eval"
    return rule


def standard_unop_abstract(name: str, kind: str, out_dtype=None):
    return standard_naryop_abstract(name, kind, out_dtype)


def canonical_axes(name: str, axes, ndim: int) -> tuple:
    """Normalise ``axes`` (int, tuple, negative) for an array of rank ``ndim``."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    out = []
    for ax in axes:
        ax = int(ax)
        if not -ndim <= ax < ndim:
            raise ValueError(f"{name}: axis {ax} is out of bounds for array of dimension {ndim}")
        ax %= ndim if ndim else 1
        if ax in out:
            raise ValueError(f"{name}: repeated axis {ax}")
        out.append(ax)
    return tuple(out)
