"""What is known of a size's range: lower and upper bounds of size polynomials.

Sizes are non-negative, and a trace may have assumed more (``x0 >= 2``, recorded by
:func:`~absjit.core.dim_assumptions.assume_at_least`): these bounds decide the order
comparisons of :class:`~absjit.core.dims.Dim`, simplify ``max``/``min`` and prove two
sizes different.
"""
from __future__ import annotations

from .dim_poly import (SizePolynomial, _Atom, _OpFactor, _add, _env_of, _linear_atom,
                       _poly_of, _resolved)

__all__: list = []


def _lower_bound(poly):
    """A lower bound of ``poly`` (sizes are >= 0, or >= what the trace assumed), or None
    when unbounded below."""
    lb = 0
    for m, c in poly.items():
        if m == ():
            lb += c
        elif c < 0:
            ub = _factor_ub(m[0]) if len(m) == 1 else None
            if ub is None:
                return None
            lb += c * ub  # ``-floordiv(1 - 2*n, 2)`` is at least 0
        else:
            term = c
            for f in m:
                flb = _factor_lb(f)
                if flb is None or (flb < 0 and len(m) > 1):
                    return None  # (a product's bound needs non-negative factors)
                term *= flb
            lb += term
    return lb


def _recorded_bound(poly, lb):
    """``lb`` improved by the bounds the trace assumed: ``poly >= k + c`` when it is a
    recorded ``size >= k`` plus a constant ``c``."""
    env = _env_of(poly)
    if env is None:
        return lb
    for d, k, _ in env.lower_bounds:
        rest = _add(poly, _poly_of(d.resolved()), -1)
        if not rest or (len(rest) == 1 and () in rest):
            c = rest.get((), 0)
            lb = k + c if lb is None else max(lb, k + c)
    return lb


def _ub_of(x):
    """An upper bound of size ``x``, or None."""
    if not isinstance(x, SizePolynomial):
        return int(x)
    nlb = _lower_bound({m: -c for m, c in _poly_of(_resolved(x)).items()})
    return None if nlb is None else -nlb


def _factor_ub(f):
    """An upper bound of the factor ``f`` (a floordiv by a positive int of something
    bounded above), or None."""
    if isinstance(f, _OpFactor) and f.op == "min":  # below either operand's bound
        ubs = [u for u in (_ub_of(f.a), _ub_of(f.b)) if u is not None]
        return min(ubs) if ubs else None
    if isinstance(f, _OpFactor) and f.op == "floordiv" and isinstance(f.b, int) \
            and f.b > 0:
        neg = {m: -c for m, c in _poly_of(_resolved(f.a)).items()}
        nlb = _lower_bound(neg)
        return None if nlb is None else (-nlb) // f.b
    return None


def _factor_lb(f):
    """A lower bound of the factor ``f``, or None when it is unbounded below (a
    floordiv of something that may be negative can be negative)."""
    if isinstance(f, _Atom):
        return f.env.atom_lb.get(f.root().name, 0)
    a = _lower_bound(_poly_of(_resolved(f.a)))
    if f.op in ("max", "min"):
        b = _lower_bound(_poly_of(_resolved(f.b)))
        if f.op == "min":
            return None if a is None or b is None else min(a, b)
        return a if b is None else b if a is None else max(a, b)
    if a is None:
        return None
    if isinstance(f.b, int) and f.b > 0:
        return a // f.b
    return 0 if a >= 0 else None  # by a symbolic (non-negative) size


def _provably_unequal(a, b) -> bool:
    """Whether sizes ``a`` and ``b`` differ for every value of their atoms (and of
    the bounds the trace assumed): a constant difference, a difference bounded away
    from 0, or a non-unit size against 1."""
    diff = _add(_poly_of(_resolved(a)), _poly_of(_resolved(b)), -1)
    if not diff:
        return False
    if len(diff) == 1 and () in diff:
        return True
    lb = _recorded_bound(diff, _lower_bound(diff))
    neg = {m: -c for m, c in diff.items()}
    nlb = _recorded_bound(neg, _lower_bound(neg))
    if (lb is not None and lb > 0) or (nlb is not None and nlb > 0):
        return True
    solved = _linear_atom(diff)  # ``den*atom == num``: no size when not a whole number
    if solved is not None and (solved[1] % solved[2] or solved[1] // solved[2] in (-1, 1)
                               or solved[1] < 0):
        return True
    return any(isinstance(x, SizePolynomial) and x.atom() is not None
               and not isinstance(y, SizePolynomial) and int(y) == 1
               for x, y in ((a, b), (b, a)))
