"""Reductions as accumulator loops fused with the producer of their operand.

A reduction is described by a small spec rather than by source: the generator owns the
loop nest (it decides whether the accumulator is a scalar local — reduced axes
innermost — or an array indexed by the kept axes) and asks the spec for the pieces.

``reduction_rules[p](in_aval, out_aval, **params) -> ReduceSpec``.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ...ops import reductions as red
from .lower_elementwise import dtype_ctor, literal_expr, lower_max, lower_min

__all__ = ["ReduceSpec", "reduction_rules"]

reduction_rules: dict = {}


@dataclasses.dataclass
class ReduceSpec:
    """How to accumulate one reduction.

    ``init`` is the accumulator's first value, ``update(acc, v, pos)`` the statements
    (lines) that fold value ``v`` (found at position ``pos`` of the reduced axis) into
    accumulator ``acc``; ``final(acc)`` the result. ``acc_dtype`` is the accumulator's
    dtype; ``with_index`` adds a second accumulator ``acc + "_i"`` (argmax/argmin).
    """

    init: str
    acc_dtype: np.dtype
    update: object
    final: object
    with_index: bool = False


def _acc_dtype_sum(dt):
    # float32 sums accumulate in float64: as accurate as NumPy's pairwise sum or better.
    return np.dtype(np.float64) if np.dtype(dt) == np.float32 else np.dtype(dt)


def _simple(name, combine, acc_dtype=None):
    def rule(in_aval, out_aval, *, axes):
        dt = np.dtype(in_aval.dtype)
        adt = np.dtype(acc_dtype(dt)) if acc_dtype else dt
        init = literal_expr(red.reduction_identity(name, dt), adt)
        ctor = dtype_ctor(adt)

        def update(acc, v, pos):
            return [f"{acc} = {ctor}({combine(acc, v, dt, adt)})"]

        def final(acc):
            return acc if adt == dt else f"{dtype_ctor(dt)}({acc})"
        return ReduceSpec(init, adt, update, final)
    rule.__name__ = f"lower_reduce_{name}"
    return rule


def _sum(acc, v, dt, adt):
    return f"{acc} + {v}"


def _prod(acc, v, dt, adt):
    return f"{acc} * {v}"


def _max(acc, v, dt, adt):
    return lower_max([acc, v], [_A(dt)] * 2, None)


def _min(acc, v, dt, adt):
    return lower_min([acc, v], [_A(dt)] * 2, None)


def _and(acc, v, dt, adt):
    return f"{acc} and {v}" if dt == np.bool_ else f"{acc} & {v}"


def _or(acc, v, dt, adt):
    return f"{acc} or {v}" if dt == np.bool_ else f"{acc} | {v}"


class _A:
    """The one field the scalar rules read from an aval."""

    def __init__(self, dt):
        self.dtype = dt


def _arg(kind):
    better = ">" if kind == "max" else "<"

    def rule(in_aval, out_aval, *, axes, index_dtype):
        dt = np.dtype(in_aval.dtype)

        def update(acc, v, pos):
            # The first extremum wins; the first NaN counts as the extremum.
            cond = f"{acc}_i < 0 or ({v} {better} {acc})"
            if dt.kind == "f":
                cond = f"{acc}_i < 0 or ({acc} == {acc} and ({v} {better} {acc} or {v} != {v}))"
            return [f"if {cond}:", f"    {acc} = {v}", f"    {acc}_i = {pos}"]

        def final(acc):
            return f"{dtype_ctor(index_dtype)}({acc}_i)"
        return ReduceSpec(literal_expr(0, dt), dt, update, final, with_index=True)
    rule.__name__ = f"lower_arg{kind}"
    return rule


reduction_rules[red.reduce_sum_p] = _simple("sum", _sum, _acc_dtype_sum)
reduction_rules[red.reduce_prod_p] = _simple("prod", _prod)
reduction_rules[red.reduce_max_p] = _simple("max", _max)
reduction_rules[red.reduce_min_p] = _simple("min", _min)
reduction_rules[red.reduce_and_p] = _simple("and", _and)
reduction_rules[red.reduce_or_p] = _simple("or", _or)
reduction_rules[red.argmax_p] = _arg("max")
reduction_rules[red.argmin_p] = _arg("min")
