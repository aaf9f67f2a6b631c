"""Jaxprs with symbolic sizes (the ``ranked`` level), made concrete for one call.

A backend that compiles for every size at once (``cpu``) reads sizes at run time. One
that needs concrete shapes — the NumPy interpreter, a backend specialising per call —
binds the sizes from the arguments (:func:`bind_arguments`, which also checks every
equality the trace assumed) and evaluates :func:`specialize`'s concrete copy.
"""
from __future__ import annotations

from .avals import ShapedArray
from .dim_assumptions import entry_checks
from .dims import Dim, evaluate, first_atom, is_symbolic
from .jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var

__all__ = ["is_symbolic_jaxpr", "bind_arguments", "bind_sizes", "specialize", "substitute"]


def _symbolic_aval(aval) -> bool:
    return isinstance(aval, ShapedArray) and is_symbolic(aval.shape)


def is_symbolic_jaxpr(jaxpr: Jaxpr) -> bool:
    """Some parameter of ``jaxpr`` has a symbolic size (sizes inside come from them)."""
    return any(_symbolic_aval(v.aval) for v in jaxpr.constvars + jaxpr.invars)


def bind_arguments(jaxpr: Jaxpr, buffers) -> dict:
    """Root size name -> int for one call on ``buffers`` (constants, then arguments);
    ``ValueError`` naming both arguments and sizes where the trace assumed two sizes
    equal and the arrays disagree."""
    params = jaxpr.constvars + jaxpr.invars
    for v, b in zip(params, buffers):
        shape = getattr(b, "shape", ())
        if len(shape) != len(v.aval.shape):
            raise ValueError(f"expected an array of rank {len(v.aval.shape)}, got shape "
                             f"{tuple(shape)}")
    return bind_sizes([v.aval for v in params], [getattr(b, "shape", ()) for b in buffers])


def specialize(jaxpr: Jaxpr, sizes: dict) -> Jaxpr:
    """A copy of ``jaxpr`` with every symbolic size replaced by its value in ``sizes``
    (avals, equation parameters and nested jaxprs)."""
    return _Specializer(sizes).jaxpr(jaxpr)


class _Specializer:
    def __init__(self, sizes):
        self.sizes = sizes
        self.vars: dict = {}

    def aval(self, aval):
        if _symbolic_aval(aval):
            return ShapedArray(substitute(tuple(aval.shape), self.sizes), aval.dtype,
                               aval.weak_type)
        return aval

    def var(self, v):
        if isinstance(v, Literal):
            return v
        got = self.vars.get(v)
        if got is None:
            got = self.vars[v] = Var(self.aval(v.aval))
        return got

    def param(self, x):
        if isinstance(x, Jaxpr):
            return _Specializer(self.sizes).jaxpr(x)
        if isinstance(x, ClosedJaxpr):
            return ClosedJaxpr(_Specializer(self.sizes).jaxpr(x.jaxpr), x.consts)
        if isinstance(x, Dim):
            return substitute(x, self.sizes)
        if type(x) is tuple or type(x) is list:
            return type(x)(self.param(e) for e in x)
        if type(x) is dict:
            return {k: self.param(e) for k, e in x.items()}
        if isinstance(x, ShapedArray):
            return self.aval(x)
        return x

    def jaxpr(self, jaxpr: Jaxpr) -> Jaxpr:
        constvars = [self.var(v) for v in jaxpr.constvars]
        invars = [self.var(v) for v in jaxpr.invars]
        eqns = []
        for e in jaxpr.eqns:
            eqns.append(JaxprEqn(e.primitive, tuple(self.var(x) for x in e.invars),
                                 tuple(self.var(v) for v in e.outvars),
                                 {k: self.param(p) for k, p in e.params.items()},
                                 e.source_info))
        return Jaxpr(constvars, invars, eqns, [self.var(v) for v in jaxpr.outvars])


def bind_sizes(avals, shapes, names=None) -> dict:
    """Root atom name -> size, read from the arrays' ``shapes`` where ``avals`` (the
    jaxpr's parameters) have atoms; raises ``ValueError`` naming both arguments and
    their sizes where two axes the trace assumed equal differ."""
    sizes: dict = {}
    where: dict = {}
    for aval, shape in zip(avals, shapes):
        ashape = getattr(aval, "shape", ())
        if not is_symbolic(ashape):
            continue
        for axis, (d, n) in enumerate(zip(ashape, shape)):
            if not isinstance(d, Dim):
                continue
            orig = first_atom(d)
            r = d.resolved()
            if isinstance(r, int):  # an operation required this size (``x1 == 3``)
                if n != r:
                    raise ValueError(
                        f"{orig.origin()} = {n}, but the function was traced at the "
                        f"'ranked' level assuming it is {r} (an operation combined it "
                        "with a fixed size); pass an array of that size.")
                continue
            atom = d.atom()
            if atom is None:
                continue
            got = sizes.get(atom.name)
            if got is None:
                sizes[atom.name] = int(n)
                where[atom.name] = orig
            elif got != n:
                raise mismatch_error(where[atom.name], got, orig, n, atom)
    atoms = [first_atom(d) for aval in avals for d in getattr(aval, "shape", ())
             if isinstance(d, Dim)]
    for d, k, why in entry_checks(atoms):
        if all(a.name in sizes for a in d.atoms()) and evaluate(d, sizes) < k:
            raise ValueError(
                f"{' * '.join(d.origins())}: the function was traced at the 'ranked' "
                f"level assuming {d} >= {k} ({why}), but it is {evaluate(d, sizes)}.")
    return sizes


def mismatch_error(first, n_first, other, n_other, root) -> ValueError:
    return ValueError(
        f"{other.origin()} = {n_other} but {first.origin()} = {n_first}: the function "
        f"was traced at the 'ranked' level assuming they are equal (dimension "
        f"{root.name}); pass arrays whose sizes agree.")


def substitute(x, sizes: dict):
    """``x`` with every :class:`Dim` replaced by its value (in tuples, lists, dicts)."""
    if isinstance(x, Dim):
        return evaluate(x, sizes)
    t = type(x)
    if t is tuple or t is list:
        if not any(isinstance(e, (Dim, tuple, list)) for e in x):
            return x
        return t(substitute(e, sizes) for e in x)
    return x
