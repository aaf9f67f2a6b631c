"""Polynomials over size atoms: what a symbolic size (:class:`~absjit.core.dims.Dim`) is.

A size is a polynomial with int coefficients, ``{monomial: coefficient}``; a monomial is
a tuple of factors sorted by key, each an :class:`_Atom` (``x.shape[0]``, resolved to its
root once a trace unified it with another) or an :class:`_OpFactor` (``floordiv``,
``max`` or ``min`` of sizes that did not simplify). This module holds that
representation and the arithmetic on it; :class:`SizePolynomial` is the base class of
``Dim``, so that the modules below ``absjit.core.dims`` (``dim_bounds``, ``dim_format``,
``dim_assumptions``) recognise a size without importing it.
"""
from __future__ import annotations

__all__ = ["SizePolynomial"]


class SizePolynomial:
    """A polynomial over atoms and opaque factors (``_terms``): the structure of a
    :class:`~absjit.core.dims.Dim`, its only subclass, which adds the operators."""

    __slots__ = ("_terms",)

    def _norm(self):
        """A hashable canonical form, with atoms resolved to their roots."""
        items = []
        for m, c in self._terms.items():
            items.append((tuple(sorted(_fkey(f) for f in m)), c))
        merged: dict = {}
        for m, c in items:
            merged[m] = merged.get(m, 0) + c
        return tuple(sorted((m, c) for m, c in merged.items() if c))


class _Atom:
    """``arg.shape[axis]``: a size read from an argument at run time."""

    __slots__ = ("name", "env", "arg", "axis", "order")

    def __init__(self, name, env, arg, axis, order):
        self.name, self.env, self.arg, self.axis, self.order = name, env, arg, axis, order

    def root(self) -> "_Atom":
        return self.env.find(self)

    def key(self):
        return ("a", self.root().name)

    def origin(self) -> str:
        return f"{self.arg}.shape[{self.axis}]"

    def __repr__(self):
        return self.name


class _OpFactor:
    """An opaque factor: ``floordiv(a, b)``, ``max(a, b)`` or ``min(a, b)`` of sizes."""

    __slots__ = ("op", "a", "b")

    def __init__(self, op, a, b):
        self.op, self.a, self.b = op, a, b

    def key(self):
        return (self.op, _key_of(self.a), _key_of(self.b))

    # Equal when they compute the same thing, so that polynomials merge their terms.
    def __eq__(self, other):
        return isinstance(other, _OpFactor) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())


def _key_of(x):
    return ("i", x) if isinstance(x, int) else ("d", x._norm())


# A polynomial is a dict {monomial: coefficient}; a monomial is a tuple of factors sorted
# by key (an atom or an opaque factor may repeat: x0*x0). The constant's monomial is ().
def _poly_of(x) -> dict:
    if isinstance(x, SizePolynomial):
        return dict(x._terms)
    x = int(x)
    return {(): x} if x else {}


def _accumulate(out: dict, m, c) -> None:
    """Add ``c`` to the coefficient of monomial ``m`` in ``out``, dropping it at zero."""
    v = out.get(m, 0) + c
    if v:
        out[m] = v
    else:
        out.pop(m, None)


def _add(p, q, sign=1) -> dict:
    out = dict(p)
    for m, c in q.items():
        _accumulate(out, m, sign * c)
    return out


def _mul(p, q) -> dict:
    out: dict = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            _accumulate(out, tuple(sorted(m1 + m2, key=_fkey)), c1 * c2)
    return out


def _fkey(f):
    return f.key()


def _resolved(x):
    return x.resolved() if isinstance(x, SizePolynomial) else int(x)


def _env_of(poly):
    for m in poly:
        for f in m:
            if isinstance(f, _Atom):
                return f.env
            for x in (f.a, f.b):
                if isinstance(x, SizePolynomial):
                    env = _env_of(x._terms)
                    if env is not None:
                        return env
    return None


def _is_open(a, b) -> bool:
    for x in (a, b):
        if isinstance(x, SizePolynomial):
            env = _env_of(x._terms)
            if env is not None and env.open:
                return True
    return False


def _collect(x, out):
    if not isinstance(x, SizePolynomial):
        return
    for m in x._terms:
        for f in m:
            if isinstance(f, _Atom):
                r = f.root()
                out.setdefault(r.name, r)
            else:
                _collect(f.a, out)
                _collect(f.b, out)


def _atom_pair(diff):
    """``(a, b)`` when ``diff`` is ``a - b`` for two distinct atoms, else ``(None, None)``."""
    if len(diff) != 2 or () in diff:
        return None, None
    (m1, c1), (m2, c2) = diff.items()
    if len(m1) == 1 and len(m2) == 1 and isinstance(m1[0], _Atom) \
            and isinstance(m2[0], _Atom) and {c1, c2} == {1, -1}:
        return m1[0], m2[0]
    return None, None


def _linear_atom(diff):
    """``(atom, num, den)`` when ``diff`` is ``den*atom - num`` for one atom and a
    constant (``diff == 0`` means ``atom == num / den``), else None."""
    terms = [(m, c) for m, c in diff.items() if m != ()]
    if len(terms) != 1:
        return None
    (m, c), = terms
    if len(m) != 1 or not isinstance(m[0], _Atom) or not isinstance(c, int):
        return None
    num, den = -diff.get((), 0), c
    if den < 0:
        num, den = -num, -den
    return m[0], num, den
