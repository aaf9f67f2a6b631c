"""Symbolic dimensions: the sizes of the ``ranked`` level.

A :class:`Dim` is a size that is not known while tracing. Each one starts as an *atom*
named after the argument and axis it measures (``x0`` is ``x.shape[0]``); arithmetic
builds polynomials over atoms (``x0 * 3``, ``x0 + y1 - 1``), and ``//``, ``%`` and
:func:`dim_max` build opaque factors when they cannot be simplified.

Atoms of one trace share a :class:`DimEnv`, a union-find. While the trace is open, an
operation that requires two sizes to be equal (``x + y``, a ``dot`` contraction, a
broadcast) *unifies* their atoms — the program has said they are equal — and the
equality is recorded; the compiled program checks it against the real arrays before
anything runs. Elsewhere comparisons are structural: ``x0 == y0`` is False until an
operation unified them, and never adds an assumption (compiler passes compare shapes
freely).

Everything Python would need a concrete number for — ``int(d)``, ``range(d)``,
``d > 3``, ``bool(d)`` — raises :class:`absjit.errors.InconclusiveDimensionError`,
naming the argument and axis and suggesting the ``shaped`` level. Order comparisons
whose answer follows from what is known (sizes are non-negative, the bounds the trace
assumed) answer. ``==`` is True when the sizes are provably equal and False otherwise
(``x0 == 3`` is False); ``x0 == 0`` also records the assumption that the array is not
empty, checked at entry like every other assumption.

This module holds the :class:`Dim` class and its operators, and the operations on sizes
the tracing rules use (:func:`unify`, :func:`unify_sizes`, :func:`dim_max` …). Its
parts are modules of their own: the polynomial representation (``dim_poly``), bounds
(``dim_bounds``), text and code (``dim_format``), the bounds a trace assumes
(``dim_assumptions``) and the atoms of a trace (``dim_env``, which imports this module).

Examples
--------
>>> from absjit.core.dim_env import DimEnv
>>> env = DimEnv()
>>> n, m = env.atom("x", 0), env.atom("y", 0)
>>> str(n * 3 + 1), str((n * 3) // 3)
('3*x0 + 1', 'x0')
>>> n == m, unify(n, m)   # unify: the trace now assumes x.shape[0] == y.shape[0]
(False, True)
>>> env.close(); str(m)
'x0'
"""
from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from .. import dtypes
from ..errors import InconclusiveDimensionError
from .dim_assumptions import assume_at_least
from .dim_bounds import _lower_bound, _provably_unequal, _recorded_bound
from .dim_format import _atom_name, _format, code_name
from .dim_poly import (SizePolynomial, _Atom, _OpFactor, _add, _atom_pair, _collect, _is_open,
                       _linear_atom, _mul, _poly_of, _resolved)

__all__ = ["Dim", "is_dim", "is_symbolic", "dim_max", "atoms_of", "unify", "unify_sizes",
           "unify_shapes", "same_shape", "dim_min", "unifying", "evaluate", "first_atom",
           "register_dim_value"]


# True while a primitive's abstract evaluation rule runs (``unifying()``): a rule that
# compares two sizes requires them equal, so there ``x0 == y0`` unifies. Elsewhere
# (the numpy wrappers deciding whether to broadcast, user code) distinct atoms compare
# unequal until an operation has unified them.
_UNIFYING: contextvars.ContextVar = contextvars.ContextVar("absjit_dims_unifying",
                                                            default=False)


@contextlib.contextmanager
def unifying():
    """Let ``==`` between two atoms of an open trace unify them (see ``_UNIFYING``)."""
    token = _UNIFYING.set(True)
    try:
        yield
    finally:
        _UNIFYING.reset(token)


def unify(a, b) -> bool:
    """``a == b`` for sizes, unifying two atoms of an open trace (an operation that
    requires equal sizes calls it); False when they cannot be equal."""
    with unifying():
        try:
            return bool(a == b)
        except TypeError:
            return False


def unify_shapes(s, t, what: str) -> bool:
    """Whether two shapes an operation requires to be equal can be (``jnp.stack``, a
    square matrix, a tangent's shape): every pair of sizes as :func:`unify_sizes`
    decides it."""
    return len(s) == len(t) and all(unify_sizes(a, b, what) for a, b in zip(s, t))


def same_shape(s, t) -> bool:
    """Whether two shapes are provably equal, without side effects: unlike ``s == t``
    it never unifies and never records an assumption (``x0 == 0`` assumes ``x``
    non-empty), so library code can compare shapes freely."""
    if len(s) != len(t):
        return False
    for a, b in zip(s, t):
        if isinstance(a, Dim) or isinstance(b, Dim):
            if _add(_poly_of(_resolved(a)), _poly_of(_resolved(b)), -1):
                return False
        elif a != b:
            return False
    return True


def unify_sizes(a, b, what: str) -> bool:
    """Whether two sizes an operation requires to be equal can be (a broadcast of
    non-unit sizes, ``x + y``, ``jnp.full((5,), x)``): :func:`unify`, and also

    - a bare size against 0 makes the size 0 (``x + jnp.ones(0)``: ``x`` is empty, as
      NumPy requires of a non-unit size; checked at entry), unless the trace already
      assumed that array non-empty;
    - sizes that are neither provably equal nor provably different and have no atom
      to fix (``x0 * x1`` against 12, ``ceil(x0 / 2)`` against 3) have many answers:
      :class:`~absjit.errors.InconclusiveDimensionError` naming ``what``.

    Examples
    --------
    >>> from absjit.core.dim_env import DimEnv
    >>> env = DimEnv(); n = env.atom("x", 0)
    >>> unify_sizes(n, 0, "x + zeros(0)"), str(n.resolved())
    (True, '0')
    """
    if not (isinstance(a, Dim) or isinstance(b, Dim)):
        return a == b
    for d, t in ((a, b), (b, a)):
        if isinstance(d, Dim) and not isinstance(t, Dim):
            r = d.resolved()
            if not isinstance(r, Dim):
                return r == int(t)
            if int(t) == 0:
                # Checked before ``==``, which would assume the array non-empty.
                atom = d.atom()
                if atom is None or not atom.env.open:
                    if len(d.atoms()) > 1 and _is_open(d, t):
                        raise InconclusiveDimensionError(d, f"{what}: {d} == 0")
                    return False
                if atom.env.atom_lb.get(atom.name, 0) >= 1:
                    return False
                atom.env.set_constant(atom, 0)
                return True
    if unify(a, b):
        return True
    if _provably_unequal(a, b):
        return False
    # Neither equal nor provably different, and no atom to fix: ``x0 * x1 == 12``,
    # ``ceil(x0 / 2) == 3`` or ``ceil(x0 / 2) == ceil(y0 / 2)`` have many answers.
    raise InconclusiveDimensionError(a if isinstance(a, Dim) else b, f"{what}: {a} == {b}")


def _make(poly):
    """An ``int`` when ``poly`` is constant, else a :class:`Dim`."""
    if not poly:
        return 0
    if len(poly) == 1 and () in poly:
        return poly[()]
    d = Dim.__new__(Dim)
    d._terms = poly
    return d


# ``Dim.value`` binds ``dim_value``, a primitive defined (with its rules) in
# ``absjit.core.dim_value``, which imports this module: it registers the primitive
# here when it loads (``absjit.core`` imports it).
_dim_value_p = None


def register_dim_value(primitive) -> None:
    """Set the primitive :meth:`Dim.value` binds (``absjit.core.dim_value`` does)."""
    global _dim_value_p
    _dim_value_p = primitive


class Dim(SizePolynomial):
    """A symbolic size (see the module docstring). Immutable; arithmetic returns
    ``int`` when the result is constant."""

    __slots__ = ()

    # -- structure ---------------------------------------------------------------------
    def resolved(self):
        """This size with every atom replaced by its root (after unification)."""
        out: dict = {}
        for m, c in self._terms.items():
            term = {(): c}
            for f in m:
                term = _mul(term, _poly_of(_resolve_factor(f)))
            out = _add(out, term)
        return _make(out)

    def atom(self):
        """The root atom when this size is a single atom, else None."""
        r = self.resolved()
        if isinstance(r, Dim) and len(r._terms) == 1:
            ((m, c),) = r._terms.items()
            if c == 1 and len(m) == 1 and isinstance(m[0], _Atom):
                return m[0]
        return None

    # -- arithmetic --------------------------------------------------------------------
    # -- arithmetic with a float or an array: the size as a value ----------------------
    def value(self):
        """This size as a weakly typed int scalar (JAX's ``dimension_as_value``): a
        ``dim_value`` equation in traced code. Arithmetic with a float or an array
        (``x.shape[0] * 0.5``, ``x.shape[0] / 2``) goes through it."""
        return _dim_value_p.bind(size=self, dtype=dtypes.canonicalize_dtype(np.int64))

    def __add__(self, other):
        if not _is_size(other):
            return self.value() + other if _is_value(other) else NotImplemented
        return _make(_add(self._terms, _poly_of(other)))

    def __radd__(self, other):
        if not _is_size(other):
            return other + self.value() if _is_value(other) else NotImplemented
        return _make(_add(self._terms, _poly_of(other)))

    def __sub__(self, other):
        if not _is_size(other):
            return self.value() - other if _is_value(other) else NotImplemented
        return _make(_add(self._terms, _poly_of(other), -1))

    def __rsub__(self, other):
        if not _is_size(other):
            return other - self.value() if _is_value(other) else NotImplemented
        return _make(_add(_poly_of(other), self._terms, -1))

    def __neg__(self):
        return _make({m: -c for m, c in self._terms.items()})

    def __mul__(self, other):
        if not _is_size(other):
            return self.value() * other if _is_value(other) else NotImplemented
        return _make(_mul(self._terms, _poly_of(other)))

    def __rmul__(self, other):
        if not _is_size(other):
            return other * self.value() if _is_value(other) else NotImplemented
        return _make(_mul(self._terms, _poly_of(other)))

    def __truediv__(self, other):  # a Python int's ``/`` gives a float: so does a size's
        return self.value() / other if _is_size(other) or _is_value(other) \
            else NotImplemented

    def __rtruediv__(self, other):
        return other / self.value() if _is_size(other) or _is_value(other) \
            else NotImplemented

    def __floordiv__(self, other):
        if not _is_size(other):
            return NotImplemented
        return _floordiv(self, other)

    def __rfloordiv__(self, other):
        if not _is_size(other):
            return NotImplemented
        return _floordiv(other, self)

    def __mod__(self, other):
        if not _is_size(other):
            return NotImplemented
        return self - (self // other) * other

    def __rmod__(self, other):
        if not _is_size(other):
            return NotImplemented
        return other - (other // self) * self

    def __divmod__(self, other):
        if not _is_size(other):
            return NotImplemented
        return self // other, self % other

    def __rdivmod__(self, other):
        if not _is_size(other):
            return NotImplemented
        return other // self, other % self

    # -- comparisons -------------------------------------------------------------------
    def __eq__(self, other):
        if not _is_size(other):
            return NotImplemented
        diff = _add(_poly_of(self.resolved()), _poly_of(_resolved(other)), -1)
        if not diff:
            return True
        if len(diff) == 1 and () in diff:
            return False  # they differ by a constant
        a, b = _atom_pair(diff)
        if a is not None and a.env is b.env and a.env.open and _UNIFYING.get():
            a.env.union(a, b)  # the program says they are equal: assume it, check later
            return True
        solved = _linear_atom(diff)
        if solved is not None and solved[0].env.open and _UNIFYING.get():
            # ``2*x0 + 1 == 7`` or ``x0 + 1 == 4`` in an operation: x0 is 3 (checked
            # at entry). No size solves it when the division leaves a remainder; a
            # non-unit dim is never 1, and answers of 0 or 1 are left to the rules
            # below (a bare ``x0 == 0``).
            atom, num, den = solved
            if num % den == 0 and num // den >= 2:
                atom.env.set_constant(atom, num // den)
                return True
            if den > 1:
                return False
        if isinstance(other, Dim):
            other = other.resolved()  # a size an operation fixed counts as its number
            if isinstance(other, Dim):
                return False  # not provably equal (``x0 * x1`` and ``x0``)
        other = int(other)
        if other < 0 or (other == 1 and self.atom() is not None):
            return False  # no size is negative, and a non-unit dim is never 1
        if other == 0:
            if _is_open(self, other) and _is_monomial(self):
                # ``if x.shape[0] == 0`` (an empty-array check): assume non-empty, and
                # check that at entry.
                assume_at_least(self, 1, "an empty array was not expected")
            return False
        atom = self.atom()
        if atom is not None and atom.env.open and _UNIFYING.get():
            # An operation requires ``x1 == 3`` (``x @ w`` with a shaped ``w``): the
            # size is 3 from now on, checked at entry.
            atom.env.set_constant(atom, other)
            return True
        # Otherwise not provably equal: ``x0 == 3`` is False, as ``x0 == y0`` is until
        # an operation unifies them. (What needs the number itself — ``int``,
        # ``range``, ``x0 > 3`` — raises.)
        return False

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(("Dim", self._norm()))

    def _compare(self, other, op):
        if not _is_size(other):
            return NotImplemented
        diff = _add(_poly_of(self.resolved()), _poly_of(_resolved(other)), -1)
        lb = _recorded_bound(diff, _lower_bound(diff))
        ub = None
        neg = {m: -c for m, c in diff.items()}
        nlb = _recorded_bound(neg, _lower_bound(neg))
        if nlb is not None:
            ub = -nlb
        if op == ">=":
            if lb is not None and lb >= 0:
                return True
            if ub is not None and ub < 0:
                return False
        elif op == ">":
            if lb is not None and lb > 0:
                return True
            if ub is not None and ub <= 0:
                return False
        elif op == "<":
            return _flip(self._compare(other, ">="), self, other, op)
        elif op == "<=":
            return _flip(self._compare(other, ">"), self, other, op)
        raise InconclusiveDimensionError(self, f"{self} {op} {other}")

    def __ge__(self, other):
        return self._compare(other, ">=")

    def __gt__(self, other):
        return self._compare(other, ">")

    def __lt__(self, other):
        return self._compare(other, "<")

    def __le__(self, other):
        return self._compare(other, "<=")

    # -- what needs a number -----------------------------------------------------------
    def __bool__(self):
        raise InconclusiveDimensionError(self, f"bool({self})")

    def __index__(self):
        raise InconclusiveDimensionError(self, f"int({self}) (an index or a Python size)")

    def __int__(self):
        raise InconclusiveDimensionError(self, f"int({self})")

    def __float__(self):
        raise InconclusiveDimensionError(self, f"float({self})")

    # -- text ----------------------------------------------------------------------------
    def __str__(self):
        return _format(self.resolved(), _atom_name)

    def __repr__(self):
        return str(self)  # jaxpr params print sizes bare: new_sizes=(x0*x1,)

    def __format__(self, spec):
        return format(str(self), spec)

    def code(self, name=None) -> str:
        """This size as a Python expression; ``name(atom)`` spells a root atom (default
        ``_n_<name>``)."""
        return _format(self.resolved(), name or code_name, code=True)

    def atoms(self) -> list:
        """The root atoms this size depends on."""
        out: dict = {}
        _collect(self.resolved(), out)
        return list(out.values())

    def origins(self) -> list:
        return [a.origin() for a in self.atoms()]


def _flip(result, self, other, op):
    if result is NotImplemented:
        return result
    return not result


def _is_monomial(d) -> bool:
    r = d.resolved()
    if not isinstance(r, Dim) or len(r._terms) != 1:
        return False
    ((m, c),) = r._terms.items()
    return c > 0 and all(isinstance(f, _Atom) for f in m)


def _is_value(x) -> bool:
    """A number or array a size may combine with as a value (not a size itself)."""
    return isinstance(x, (float, complex, bool, np.bool_, np.floating, np.complexfloating,
                          np.ndarray)) or hasattr(x, "aval") or hasattr(x, "_value")


def _is_size(x) -> bool:
    return isinstance(x, (Dim, int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _resolve_factor(f):
    if isinstance(f, _Atom):
        r = f.root()
        k = r.env.constants.get(r.name)
        return k if k is not None else _make({(r,): 1})
    a, b = _resolved(f.a), _resolved(f.b)
    return {"floordiv": _floordiv, "max": dim_max, "min": dim_min}[f.op](a, b)


def _floordiv(a, b):
    if isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError("integer division of a size by zero")
        if isinstance(a, int):
            return a // b
        if b == 1:
            return a
        if b > 0 and all(c % b == 0 for c in a._terms.values()):
            return _make({m: c // b for m, c in a._terms.items()})
    elif isinstance(a, Dim) and isinstance(b, Dim):
        q = _exact_monomial_quotient(a.resolved(), b.resolved())
        if q is not None:
            return q
    elif isinstance(a, int) and a == 0:
        return 0
    return _make({(_OpFactor("floordiv", a, b),): 1})


def _exact_monomial_quotient(a, b):
    """``a / b`` when ``b`` is a single monomial (coefficient 1) dividing every term of
    ``a``; else None."""
    if not isinstance(a, Dim) or not isinstance(b, Dim) or len(b._terms) != 1:
        return None
    ((mb, cb),) = b._terms.items()
    if cb != 1 or not mb:
        return None
    out = {}
    for m, c in a._terms.items():
        rest = list(m)
        for f in mb:
            for i, g in enumerate(rest):
                if g.key() == f.key():
                    del rest[i]
                    break
            else:
                return None
        out[tuple(rest)] = out.get(tuple(rest), 0) + c
    return _make({m: c for m, c in out.items() if c})


def dim_max(a, b):
    """``max(a, b)`` of sizes (ints or :class:`Dim`): simplified when one is known to be
    at least the other, else a symbolic ``max``.

    Examples
    --------
    >>> from absjit.core.dim_env import DimEnv
    >>> env = DimEnv(); n = env.atom("x", 0)
    >>> dim_max(n, 0) is n, str(dim_max(n, 3))
    (True, 'max(x0, 3)')
    """
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    diff = _add(_poly_of(_resolved(a)), _poly_of(_resolved(b)), -1)
    lb = _lower_bound(diff)
    if lb is not None and lb >= 0:
        return a
    nlb = _lower_bound({m: -c for m, c in diff.items()})
    if nlb is not None and nlb >= 0:
        return b
    return _make({(_OpFactor("max", a, b),): 1})


def dim_min(a, b):
    """``min(a, b)`` of sizes: the smaller one when that is known, else a symbolic
    ``min``.

    Examples
    --------
    >>> from absjit.core.dim_env import DimEnv
    >>> env = DimEnv(); n, m = env.atom("x", 0), env.atom("x", 1)
    >>> dim_min(n, n + 2) is n, str(dim_min(n, m))
    (True, 'min(x0, x1)')
    """
    if not (isinstance(a, Dim) or isinstance(b, Dim)):
        return min(a, b)
    top = dim_max(a, b)
    if top is a:
        return b
    if top is b:
        return a
    return _make({(_OpFactor("min", a, b),): 1})


def is_dim(x) -> bool:
    return isinstance(x, Dim)


def is_symbolic(shape) -> bool:
    """Some entry of ``shape`` is a :class:`Dim`."""
    return any(type(d) is Dim for d in shape)


def atoms_of(shape) -> list:
    out: dict = {}
    for d in shape:
        _collect(d.resolved() if isinstance(d, Dim) else d, out)
    return list(out.values())


def evaluate(d, sizes: dict) -> int:
    """The value of size ``d`` given ``sizes`` (root atom name -> int)."""
    r = d.resolved() if isinstance(d, Dim) else int(d)
    if isinstance(r, int):
        return r
    total = 0
    for m, c in r._terms.items():
        v = c
        for f in m:
            if isinstance(f, _Atom):
                v *= sizes[f.root().name]
            elif f.op == "floordiv":
                v *= evaluate(f.a, sizes) // evaluate(f.b, sizes)
            else:
                v *= (max if f.op == "max" else min)(evaluate(f.a, sizes),
                                                     evaluate(f.b, sizes))
        total += v
    return total


def first_atom(d):
    """The atom ``d`` was made from (before unification), or None."""
    for m in d._terms:
        for f in m:
            if isinstance(f, _Atom):
                return f
    return None
