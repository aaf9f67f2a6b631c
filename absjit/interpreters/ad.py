"""Forward- and reverse-mode autodiff: rule tables and helpers for defining rules.

Rule signatures (every rule returns lists):

``jvp_rules[p](primals, tangents, **params) -> (primals_out, tangents_out)``
    ``primals``/``tangents`` are lists; tangents are always materialised values (the
    machinery instantiates zeros). Integer/bool outputs get ``float0``-free zero
    tangents of the output's dtype family; the machinery handles that.
``transpose_rules[p](cts, *args, **params) -> [ct_or_None per arg]``
    For linear primitives. ``cts`` is the list of output cotangents; an ``arg`` is an
    :class:`UndefinedPrimal` when it is the linear input, otherwise a value.

Helpers: :func:`defjvp` (one function per input), :func:`deflinear` (the primitive is
linear in all inputs), :func:`defjvp_zero` (derivative is zero, e.g. comparisons).
"""
from __future__ import annotations

__all__ = ["jvp_rules", "transpose_rules", "UndefinedPrimal", "is_undefined_primal",
           "defjvp", "deflinear", "deflinear2", "defjvp_zero", "add_tangents",
           "zeros_like_aval"]

jvp_rules: dict = {}
transpose_rules: dict = {}


class UndefinedPrimal:
    """Stands for the linear input of a primitive being transposed."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def is_undefined_primal(x) -> bool:
    return isinstance(x, UndefinedPrimal)


def zeros_like_aval(aval):
    from ..ops import structural
    from ..numpy._promote import asarray_weak
    zero = asarray_weak(0, aval.dtype, aval.weak_type)
    if aval.shape == ():
        return zero
    return structural.broadcast_in_dim(zero, aval.shape, ())


def add_tangents(x, y):
    from ..ops import elementwise
    return elementwise.add(x, y)


def defjvp(primitive, *jvp_fns):
    """Define ``primitive``'s JVP from one function per input.

    ``jvp_fns[i](tangent_i, *primals, **params)`` gives input ``i``'s contribution to the
    output tangent; ``None`` means the output does not depend differentiably on it.
    """
    def rule(primals, tangents, **params):
        out = primitive.bind(*primals, **params)
        total = None
        for fn, t in zip(jvp_fns, tangents):
            if fn is None or t is None:
                continue
            contrib = fn(t, *primals, **params)
            total = contrib if total is None else add_tangents(total, contrib)
        if total is None:
            from ..core.trace import get_aval
            total = zeros_like_aval(get_aval(out))
        return [out], [total]
    rule.__name__ = f"{primitive.name}_jvp"
    jvp_rules[primitive] = rule
    return rule


def defjvp_zero(primitive):
    """The primitive's outputs have zero derivative (comparisons, integer ops)."""
    def rule(primals, tangents, **params):
        from ..core.trace import get_aval
        outs = primitive.bind(*primals, **params)
        outs = outs if primitive.multiple_results else [outs]
        return outs, [zeros_like_aval(get_aval(o)) for o in outs]
    rule.__name__ = f"{primitive.name}_jvp_zero"
    jvp_rules[primitive] = rule
    return rule


def deflinear(primitive, transpose_fn):
    """``primitive`` is linear in its single input: the JVP applies it to the tangent;
    ``transpose_fn(ct, **params) -> [ct_in]`` (or with ``aval_in`` keyword if needed)."""
    def jvp(primals, tangents, **params):
        return [primitive.bind(*primals, **params)], [primitive.bind(*tangents, **params)]
    jvp.__name__ = f"{primitive.name}_jvp"
    jvp_rules[primitive] = jvp

    def transpose(cts, *args, **params):
        return transpose_fn(cts[0], *args, **params)
    transpose.__name__ = f"{primitive.name}_transpose"
    transpose_rules[primitive] = transpose


def deflinear2(primitive, transpose_fn):
    """``primitive`` is linear in each input separately (like ``mul`` with one constant)
    or jointly (``add``); ``transpose_fn(cts, *args, **params) -> [ct per arg]``."""
    transpose_rules[primitive] = transpose_fn
