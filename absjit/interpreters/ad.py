"""Forward- and reverse-mode autodiff: rule tables and helpers for defining rules.

Rule signatures (every rule returns lists):

``jvp_rules[p](primals, tangents, **params) -> (primals_out, tangents_out)``
    ``primals``/``tangents`` are lists; tangents are materialised values (the JVP trace
    instantiates zeros) unless the rule has ``symbolic_zeros = True``, in which case a
    zero tangent is ``None`` (and a ``None`` tangent out is a zero). Integer/bool values
    carry zero tangents of their own dtype inside; the public API shows them as
    ``float0``.
``transpose_rules[p](cts, *args, **params) -> [ct_or_None per arg]``
    For linear primitives. ``cts`` is the list of output cotangents; an ``arg`` is an
    :class:`UndefinedPrimal` when it is the linear input, otherwise a value.

Helpers: :func:`defjvp` (one function per input), :func:`deflinear` (the primitive is
linear in all inputs), :func:`defjvp_zero` (derivative is zero, e.g. comparisons).

Machinery: :class:`JVPTrace` (forward mode; a tracer's aval is its primal's, a
``ConcreteArray`` for an eager primal, so Python may branch on it);
:func:`linearize_flat` traces the JVP into a jaxpr and evaluates its primal equations;
:func:`backward_pass` transposes the remaining, linear equations; :func:`jvp_jaxpr` and
:func:`transpose_jaxpr` do the same to sub-jaxprs for the control-flow rules.
"""
from __future__ import annotations

__all__ = ["jvp_rules", "transpose_rules", "UndefinedPrimal", "is_undefined_primal",
           "defjvp", "deflinear", "deflinear2", "defjvp_zero", "add_tangents",
           "zeros_like_aval", "JVPTrace", "JVPTracer", "jvp_flat", "instantiate_zeros",
           "Linearized", "linearize_flat", "apply_linear", "backward_pass",
           "partial_eval_nonlinear", "jvp_jaxpr", "transpose_jaxpr", "tangent_copy"]

import contextvars as _contextvars

import numpy as _np

from .. import dtypes
from ..core.avals import ConcreteArray, ShapedArray
from ..core.jaxpr import Literal, Var, eval_jaxpr
from ..core.trace import Trace, Tracer, get_aval, new_array, new_main, to_numpy
from . import array_ops
from .staging import trace_to_jaxpr

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


_ZERO_SCALARS: dict = {}


def zeros_like_aval(aval):
    """Zeros of ``aval``'s shape, dtype and weak type (a memoised rank-0 array,
    broadcast)."""
    key = (aval.dtype, aval.weak_type)
    zero = _ZERO_SCALARS.get(key)
    if zero is None:
        zero = _ZERO_SCALARS[key] = new_array(_np.asarray(0, dtype=aval.dtype),
                                              aval.weak_type)
    if aval.shape == ():
        return zero
    return array_ops.broadcast_in_dim(zero, aval.shape, ())


def add_tangents(x, y):
    return array_ops.add(x, y)


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
            total = zeros_like_aval(get_aval(out))
        return [out], [total]
    rule.__name__ = f"{primitive.name}_jvp"
    rule.symbolic_zeros = True  # accepts None tangents; the JVP trace skips instantiating
    jvp_rules[primitive] = rule
    return rule


def defjvp_zero(primitive):
    """The primitive's outputs have zero derivative (comparisons, integer ops)."""
    def rule(primals, tangents, **params):
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


# ---------------------------------------------------------------------------
# The JVP trace
# ---------------------------------------------------------------------------
class JVPInfo:
    """Payload of a JVP main trace: whether tracers expose their primal's value."""

    __slots__ = ("concrete",)

    def __init__(self, concrete: bool):
        self.concrete = concrete


class JVPTracer(Tracer):
    """A primal value with its tangent; ``tangent is None`` is a symbolic zero."""

    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        p = self.primal
        concrete = self._trace.main.payload.concrete
        if isinstance(p, Tracer):
            a = p.aval
            return a if concrete else a.to_shaped()
        a = get_aval(p)
        if concrete and type(a) is ShapedArray:
            # An eager primal knows its value: this is what lets `if x > 0:` work
            # inside grad(f) without jit.
            return ConcreteArray(to_numpy(p), weak_type=a.weak_type)
        return a

    def full_lower(self):
        if self.tangent is None:
            p = self.primal
            return p.full_lower() if isinstance(p, Tracer) else p
        return self


class JVPTrace(Trace):
    __slots__ = ()

    def pure(self, val):
        return JVPTracer(self, val, None)

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        primals = [t.primal for t in tracers]
        tangents = [t.tangent for t in tracers]
        if all(t is None for t in tangents):
            outs = primitive.bind(*primals, **params)
            outs = outs if primitive.multiple_results else [outs]
            return [JVPTracer(self, o, None) for o in outs]
        rule = jvp_rules.get(primitive)
        if rule is None:
            raise NotImplementedError(
                f"Differentiation rule for '{primitive.name}' not implemented")
        if not getattr(rule, "symbolic_zeros", False):
            tangents = [instantiate_zeros(t, p) for t, p in zip(tangents, primals)]
        primals_out, tangents_out = rule(primals, tangents, **params)
        return [JVPTracer(self, p, t) for p, t in zip(primals_out, tangents_out)]

    def describe_origin(self, tracer) -> str:
        p = tracer.primal
        describe = getattr(getattr(p, "_trace", None), "describe_origin", None)
        return describe(p) if describe is not None else ""


def instantiate_zeros(tangent, primal):
    """A materialised tangent: ``tangent`` itself, or zeros shaped like ``primal``."""
    if tangent is not None:
        return tangent
    return zeros_like_aval(get_aval(primal).to_shaped())


def jvp_flat(fun, primals, tangents, concrete: bool = True):
    """Push ``tangents`` (``None`` = zero) through ``fun`` (flat list -> flat list).

    Returns ``(primals_out, tangents_out)``; a ``None`` tangent out is a symbolic zero.
    """
    with new_main(JVPTrace, payload=JVPInfo(concrete)) as main:
        trace = JVPTrace(main)
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        outs = [trace.full_raise(o) for o in fun(*ins)]
        return [o.primal for o in outs], [o.tangent for o in outs]


# ---------------------------------------------------------------------------
# Linearization and transposition
#
# Reverse mode traces the JVP of the function into a jaxpr J(primals, tangents) (at
# the level of the primals: values propagate when they are ConcreteArrays, so Python
# may branch on them). Every equation of J that does not depend on a tangent input is
# "known": it is evaluated forward by binding it, which runs it eagerly or stages it
# into an enclosing jit. The remaining equations are linear in the tangents; the
# pullback walks them backwards with the transpose rules, again by binding, so under
# jit the backward pass is staged and compiled too.
# ---------------------------------------------------------------------------
class Linearized:
    """The result of :func:`linearize_flat`: known values and the linear equations."""

    __slots__ = ("env", "lin_eqns", "linear", "tangent_invars", "out_primals",
                 "tangent_outvars", "out_tangent_avals")

    def read(self, x):
        if isinstance(x, Literal):
            return _literal_value(x)
        return self.env[x]


def _literal_value(lit):
    """A literal's value as an operand: a weak literal stays weak (``2.0 * x``'s
    gradient is weak in JAX too)."""
    if lit.aval.weak_type:
        return new_array(_np.asarray(lit.val), True)
    return lit.val


def linearize_flat(fun, primal_vals, primal_avals, debug_info=None):
    """Trace ``fun``'s JVP at ``primal_avals`` and evaluate its primal part on
    ``primal_vals``. Tangent inputs exist only for inexact primals."""
    n = len(primal_vals)
    mask = [_is_differentiable(a) for a in primal_avals]
    tangent_avals = [a.to_shaped() for a, m in zip(primal_avals, mask) if m]
    out_box = []

    def jvp_fun(*args):
        primals, rest = list(args[:n]), iter(args[n:])
        tangents = [next(rest) if m else None for m in mask]
        p_out, t_out = jvp_flat(fun, primals, tangents)
        out_box.append([t is not None for t in t_out])
        return list(p_out) + [t for t in t_out if t is not None]

    closed, _ = trace_to_jaxpr(jvp_fun, list(primal_avals) + tangent_avals, debug_info,
                               transform=getattr(debug_info, "transform", "grad"))
    tmask = out_box[-1]
    n_out = len(tmask)
    jaxpr = closed.jaxpr
    lin = partial_eval_nonlinear(closed, primal_vals, [False] * n + [True] * len(tangent_avals))
    primal_outvars = jaxpr.outvars[:n_out]
    for v in primal_outvars:
        if type(v) is Var and v in lin.linear:
            eqn = next(e for e in lin.lin_eqns if v in e.outvars)
            raise NotImplementedError(
                f"the JVP rule of '{eqn.primitive.name}' mixes primal and tangent values "
                "in one equation, so it cannot be linearized; split it into a primal "
                "and a tangent equation")
    lin.out_primals = [lin.read(v) for v in primal_outvars]
    it = iter(jaxpr.outvars[n_out:])
    lin.tangent_outvars = [next(it) if m else None for m in tmask]
    return lin, mask


def partial_eval_nonlinear(closed, known_vals, linear_mask) -> Linearized:
    """Evaluate (by binding) every equation of ``closed`` that does not depend on an
    input marked linear; ``known_vals`` are the other inputs, in order. The rest of
    the equations are kept for :func:`apply_linear` / :func:`backward_pass`; all
    outputs are treated as tangent outputs."""
    jaxpr = closed.jaxpr
    env = {}
    for v, c in zip(jaxpr.constvars, closed.consts):
        env[v] = c
    known_it = iter(known_vals)
    tangent_invars = []
    for v, m in zip(jaxpr.invars, linear_mask):
        if m:
            tangent_invars.append(v)
        else:
            env[v] = next(known_it)
    linear = set(tangent_invars)
    lin_eqns = []
    for eqn in jaxpr.eqns:
        if any(type(x) is Var and x in linear for x in eqn.invars):
            linear.update(eqn.outvars)
            lin_eqns.append(eqn)
            continue
        if eqn.primitive.effectful and not eqn.outvars and tangent_copy.get():
            continue  # a print already made by the primal copy
        outs = eqn.primitive.bind(*[_literal_value(x) if isinstance(x, Literal) else env[x]
                                    for x in eqn.invars], **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    lin = Linearized()
    lin.env = env
    lin.lin_eqns = lin_eqns
    lin.linear = linear
    lin.tangent_invars = tangent_invars
    lin.tangent_outvars = list(jaxpr.outvars)
    lin.out_primals = []
    return lin


# Set while tracing the tangent or transposed copy of a sub-jaxpr: its effects (prints)
# already happen in the primal copy, so they are left out.
tangent_copy = _contextvars.ContextVar("absjit_tangent_copy", default=False)


def jvp_jaxpr(closed, nonzeros, instantiate=True):
    """A ClosedJaxpr ``(primals, nonzero tangents) -> tangents_out`` (tangents of
    non-differentiable outputs are zeros of their own dtype)."""
    n = len(closed.in_avals)
    in_avals = [a.to_shaped() for a in closed.in_avals]
    t_avals = [a for a, nz in zip(in_avals, nonzeros) if nz]

    def fun(*args):
        primals, rest = list(args[:n]), iter(args[n:])
        tangents = [next(rest) if nz else None for nz in nonzeros]
        p_out, t_out = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                primals, tangents)
        return [instantiate_zeros(t, p) for p, t in zip(p_out, t_out)]

    token = tangent_copy.set(True)
    try:
        new, _ = trace_to_jaxpr(fun, in_avals + t_avals, None, transform="jvp")
    finally:
        tangent_copy.reset(token)
    return new


def transpose_jaxpr(closed, linear_mask):
    """A ClosedJaxpr ``(non-linear inputs, output cotangents) -> cotangents of the
    linear inputs`` (zeros where no cotangent flows)."""
    in_avals = [a.to_shaped() for a in closed.in_avals]
    known_avals = [a for a, m in zip(in_avals, linear_mask) if not m]
    lin_avals = [a for a, m in zip(in_avals, linear_mask) if m]
    ct_avals = [a.to_shaped() for a in closed.out_avals]
    nk = len(known_avals)

    def fun(*args):
        lin = partial_eval_nonlinear(closed, list(args[:nk]), linear_mask)
        cts = backward_pass(lin, list(args[nk:]))
        return [zeros_like_aval(a) if c is None else c for c, a in zip(cts, lin_avals)]

    token = tangent_copy.set(True)
    try:
        new, _ = trace_to_jaxpr(fun, known_avals + ct_avals, None, transform="transpose")
    finally:
        tangent_copy.reset(token)
    return new


def _is_differentiable(aval) -> bool:
    """Only inexact values have tangents; integers and booleans get zero (float0)."""
    if not isinstance(aval, ShapedArray):
        return False
    return aval.dtype.kind in "fc" or _is_bf16(aval.dtype)


def _is_bf16(dt) -> bool:
    return dtypes.is_bfloat16(dt)


def apply_linear(lin: Linearized, tangents) -> list:
    """Evaluate the linear part of ``lin`` on ``tangents`` (one per tangent input)."""
    env = dict(lin.env)
    for v, t in zip(lin.tangent_invars, tangents):
        env[v] = t
    for eqn in lin.lin_eqns:
        outs = eqn.primitive.bind(*[_literal_value(x) if isinstance(x, Literal) else env[x]
                                    for x in eqn.invars], **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    return [None if v is None else (v.val if isinstance(v, Literal) else env[v])
            for v in lin.tangent_outvars]


def backward_pass(lin: Linearized, cts_out) -> list:
    """Transpose the linear equations of ``lin``: cotangents of the tangent outputs
    (``None`` = zero) to cotangents of the tangent inputs (``None`` = zero)."""
    ct_env: dict = {}

    def add_ct(v, ct):
        if ct is None or type(v) is not Var or v not in lin.linear:
            return
        prev = ct_env.get(v)
        ct_env[v] = ct if prev is None else add_tangents(prev, ct)

    for v, ct in zip(lin.tangent_outvars, cts_out):
        if v is not None:
            add_ct(v, ct)
    for eqn in reversed(lin.lin_eqns):
        cts = [ct_env.pop(v, None) for v in eqn.outvars]
        if all(c is None for c in cts):
            continue
        cts = [zeros_like_aval(v.aval) if c is None else c for v, c in zip(eqn.outvars, cts)]
        args = [UndefinedPrimal(x.aval) if type(x) is Var and x in lin.linear
                else lin.read(x) for x in eqn.invars]
        rule = transpose_rules.get(eqn.primitive)
        if rule is None:
            raise NotImplementedError(
                f"Transpose rule (for reverse-mode differentiation) for "
                f"'{eqn.primitive.name}' not implemented")
        cts_in = rule(cts, *args, **eqn.params)
        for x, ct in zip(eqn.invars, cts_in):
            add_ct(x, ct)
    return [ct_env.get(v) for v in lin.tangent_invars]
