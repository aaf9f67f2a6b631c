"""The IR: an immutable, typed, first-order program (a *jaxpr*).

``Jaxpr(constvars, invars, eqns, outvars)``; ``ClosedJaxpr`` pairs it with the constant
values. Variables are compared by identity; names (``a b c … ba bb``) are given only when
printing. :func:`typecheck` re-derives every equation's output types from the abstract
eval rules; every pass ends with it.
"""
from __future__ import annotations

import itertools
from typing import NamedTuple

import numpy as np

from .avals import AbstractValue, ShapedArray
from .primitive import Primitive, abstract_eval_rules

__all__ = ["Var", "Literal", "JaxprEqn", "Jaxpr", "ClosedJaxpr", "JaxprTypeError",
           "typecheck", "eval_jaxpr", "jaxpr_as_fun"]

_var_ids = itertools.count()


class Var:
    """A variable; identity is its name."""

    __slots__ = ("aval", "id")

    def __init__(self, aval: AbstractValue):
        self.aval = aval
        self.id = next(_var_ids)

    def __repr__(self):
        return f"Var(id={self.id}, {self.aval.str_short()})"


class Literal:
    """A scalar constant inlined in an equation (printed bare: ``log 2.0``)."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray):
        self.val = np.asarray(val, dtype=aval.dtype)
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.val!r})"

    def __str__(self):
        v = self.val[()]
        if isinstance(v, np.bool_):
            return str(bool(v))
        return str(v)

    def key(self):
        """Hashable identity of the value (dtype and bits)."""
        return (self.aval.dtype, self.aval.weak_type, self.val.tobytes())


class JaxprEqn(NamedTuple):
    primitive: Primitive
    invars: tuple
    outvars: tuple
    params: dict
    source_info: object = None


class Jaxpr:
    """An immutable program: ``{ lambda constvars ; invars . let eqns in outvars }``."""

    __slots__ = ("constvars", "invars", "eqns", "outvars")

    def __init__(self, constvars, invars, eqns, outvars):
        self.constvars = tuple(constvars)
        self.invars = tuple(invars)
        self.eqns = tuple(eqns)
        self.outvars = tuple(outvars)

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def __str__(self):
        from .pretty import pp_jaxpr
        return pp_jaxpr(self)

    __repr__ = __str__

    def pretty_print(self, width: int = 80) -> str:
        from .pretty import pp_jaxpr
        return pp_jaxpr(self, width=width)


class ClosedJaxpr:
    """A jaxpr with its constants bound."""

    __slots__ = ("jaxpr", "consts")

    def __init__(self, jaxpr: Jaxpr, consts):
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def in_avals(self):
        return self.jaxpr.in_avals

    @property
    def out_avals(self):
        return self.jaxpr.out_avals

    @property
    def eqns(self):
        return self.jaxpr.eqns

    @property
    def literals(self):
        """The constants' values (JAX 0.10's name for ``consts``)."""
        return self.consts

    def __str__(self):
        return str(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, width: int = 80) -> str:
        return self.jaxpr.pretty_print(width)


class JaxprTypeError(TypeError):
    """A jaxpr is ill-typed (a pass or a rule has a bug)."""


def _same_type(a, b) -> bool:
    return (tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype)


def typecheck(jaxpr: Jaxpr) -> Jaxpr:
    """Check scoping and types of every equation; returns ``jaxpr`` unchanged.

    Raises ``JaxprTypeError`` naming the equation that is wrong.
    """
    env = set()

    def read(x, where):
        if isinstance(x, Literal):
            return x.aval
        if x not in env:
            raise JaxprTypeError(f"variable {x} used before it is defined, in {where}")
        return x.aval

    def write(v, where):
        if v in env:
            raise JaxprTypeError(f"variable {v} defined twice, in {where}")
        env.add(v)

    for v in jaxpr.constvars:
        write(v, "constvars")
    for v in jaxpr.invars:
        write(v, "invars")
    for eqn in jaxpr.eqns:
        where = f"equation `{eqn.primitive.name}`"
        in_avals = [read(x, where) for x in eqn.invars]
        rule = abstract_eval_rules.get(eqn.primitive)
        if rule is not None:
            out_avals = rule(*in_avals, **eqn.params)
            if len(out_avals) != len(eqn.outvars):
                raise JaxprTypeError(f"{where}: rule gives {len(out_avals)} outputs, "
                                     f"equation has {len(eqn.outvars)}")
            for v, a in zip(eqn.outvars, out_avals):
                if not _same_type(v.aval, a):
                    raise JaxprTypeError(f"{where}: output typed {v.aval.str_short()}, "
                                         f"rule says {a.str_short()}")
        for v in eqn.outvars:
            write(v, where)
    for v in jaxpr.outvars:
        read(v, "outvars")
    return jaxpr


def eval_jaxpr(jaxpr: Jaxpr, consts, *args) -> list:
    """Evaluate ``jaxpr`` by binding each equation's primitive (so it works under any
    outer transformation: eager, staging, autodiff, batching)."""
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(x):
        return x.val if isinstance(x, Literal) else env[x]

    for eqn in jaxpr.eqns:
        outs = eqn.primitive.bind(*[read(x) for x in eqn.invars], **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, val in zip(eqn.outvars, outs):
            env[v] = val
    return [read(v) for v in jaxpr.outvars]


def jaxpr_as_fun(closed: ClosedJaxpr):
    """A Python function that evaluates ``closed`` on flat arguments."""
    def fun(*args):
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return fun
