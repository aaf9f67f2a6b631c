"""What each primitive *is* to a loop compiler: its fusion kind, cost and index rules.

The table is owned by the frontend and filled beside each primitive's definition in
``absjit/ops`` (one place per primitive), so every backend's planner reads the same
facts and no backend decides what a primitive is. A primitive with no entry is
:class:`Opaque` (a whole-array operation a backend lowers as a unit, or not at all).

Kinds
-----
``Elementwise(cost)``
    One scalar result per output element from the operands at the same index (rank-0
    operands broadcast). ``cost`` is a rough count of cheap scalar operations; the
    planner recomputes cheap values inside each consumer's loop rather than storing them.
``IndexMap(rule, dynamic_operands=0)``
    Moves data without computing: ``rule(out_idx, in_aval, out_aval, read, **params)``
    returns the operand's index expressions (:mod:`absjit.core.shapes`) for the output
    index expressions ``out_idx``, or ``None`` when it cannot (a general reshape: the
    op is then opaque). ``read(k, idx)`` gives a handle to the scalar value of operand
    ``k + 1`` at ``idx`` (``gather`` indices, ``dynamic_slice`` starts).
``Value(rule)``
    A value computed from the output index alone (``iota``): ``rule(out_idx, out_aval,
    **params)`` returns an index expression whose value, cast to the output dtype, is the
    element.
``Reduction(rule)``
    ``rule(in_aval, out_aval, **params)`` returns a :class:`Monoid`: how to fold the
    reduced axes (``params["axes"]``) into an accumulator.
``Opaque()``
    A whole-array operation (``dot_general``, ``sort``, ``concatenate``, ``scatter``…):
    the planner materialises its operands and a backend renders it as a unit.
``ControlFlow(body_params)``
    Holds sub-jaxprs in the named params (``branches``, ``cond_jaxpr``…); the compiler
    lowers each into nested loop IR.
``Call(body_param, operands=None)``
    A call whose body is inlined before planning (``jit``, ``custom_jvp_call``). The body
    takes every operand of the equation, or with ``operands`` the ones at the positions
    ``operands(params, n)`` lists (``n``: the equation's operand count), as
    ``custom_linear_solve`` runs its ``solve`` on some of its operands only.
"""
from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["Elementwise", "IndexMap", "Value", "Reduction", "Opaque", "ControlFlow",
           "Call", "Monoid", "fusion_rules", "fusion_kind", "def_fusion", "COSTLY"]

# An elementwise op at least this costly is never recomputed in several loops.
COSTLY = 8


@dataclasses.dataclass(frozen=True)
class Elementwise:
    cost: int = 1


@dataclasses.dataclass(frozen=True)
class IndexMap:
    rule: object


@dataclasses.dataclass(frozen=True)
class Value:
    rule: object


@dataclasses.dataclass(frozen=True)
class Reduction:
    rule: object


@dataclasses.dataclass(frozen=True)
class Opaque:
    pass


@dataclasses.dataclass(frozen=True)
class ControlFlow:
    body_params: tuple = ()


@dataclasses.dataclass(frozen=True)
class Call:
    body_param: str
    operands: object = None


@dataclasses.dataclass(frozen=True)
class Monoid:
    """How a reduction folds values.

    ``combine`` names the elementwise primitive that folds a value into the accumulator
    (``"add"``, ``"mul"``, ``"max"``, ``"min"``, ``"and"``, ``"or"``); ``identity`` is the
    accumulator's first value and ``acc_dtype`` its dtype (float32 sums accumulate in
    float64). ``arg`` is ``"max"``/``"min"`` for ``argmax``/``argmin``: the accumulator
    then also tracks the position along the (single) reduced axis, the first extremum
    wins and NaN counts as the extremum; the result is the position in ``out_dtype``.
    """

    combine: str
    identity: object
    acc_dtype: np.dtype
    out_dtype: np.dtype
    arg: str | None = None


fusion_rules: dict = {}
_OPAQUE = Opaque()


def def_fusion(prim, kind) -> None:
    """Register ``prim``'s fusion kind (call it right under the primitive's definition)."""
    fusion_rules[prim] = kind


def fusion_kind(prim):
    """The registered kind of ``prim``, :class:`Opaque` when none is registered."""
    return fusion_rules.get(prim, _OPAQUE)
