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

Examples
--------
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
import re

import numpy as np

from ..errors import InconclusiveDimensionError

__all__ = ["Dim", "DimEnv", "is_dim", "is_symbolic", "dim_max", "atoms_of", "unify",
           "unify_sizes", "unify_shapes", "same_shape", "dim_min",
           "unifying", "evaluate", "slice_indices", "assume_at_least", "entry_checks",
           "first_atom"]


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
    return any(isinstance(x, Dim) and x.atom() is not None and not isinstance(y, Dim)
               and int(y) == 1 for x, y in ((a, b), (b, a)))


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
    if isinstance(x, Dim):
        return dict(x._terms)
    x = int(x)
    return {(): x} if x else {}


def _add(p, q, sign=1) -> dict:
    out = dict(p)
    for m, c in q.items():
        v = out.get(m, 0) + sign * c
        if v:
            out[m] = v
        else:
            out.pop(m, None)
    return out


def _mul(p, q) -> dict:
    out: dict = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            m = tuple(sorted(m1 + m2, key=_fkey))
            v = out.get(m, 0) + c1 * c2
            if v:
                out[m] = v
            else:
                out.pop(m, None)
    return out


def _fkey(f):
    return f.key()


def _make(poly):
    """An ``int`` when ``poly`` is constant, else a :class:`Dim`."""
    if not poly:
        return 0
    if len(poly) == 1 and () in poly:
        return poly[()]
    d = Dim.__new__(Dim)
    d._terms = poly
    return d


def _env_of(poly):
    for m in poly:
        for f in m:
            if isinstance(f, _Atom):
                return f.env
            for x in (f.a, f.b):
                if isinstance(x, Dim):
                    env = _env_of(x._terms)
                    if env is not None:
                        return env
    return None


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
    if not isinstance(x, Dim):
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


class Dim:
    """A symbolic size (see the module docstring). Immutable; arithmetic returns
    ``int`` when the result is constant."""

    __slots__ = ("_terms",)

    # -- structure ---------------------------------------------------------------------
    def _norm(self):
        """A hashable canonical form, with atoms resolved to their roots."""
        items = []
        for m, c in self._terms.items():
            items.append((tuple(sorted(_fkey(f) for f in m)), c))
        merged: dict = {}
        for m, c in items:
            merged[m] = merged.get(m, 0) + c
        return tuple(sorted((m, c) for m, c in merged.items() if c))

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
        from .. import dtypes
        from .dim_value import dim_value_p
        return dim_value_p.bind(size=self, dtype=dtypes.canonicalize_dtype(np.int64))

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


def _is_open(a, b) -> bool:
    for x in (a, b):
        if isinstance(x, Dim):
            env = _env_of(x._terms)
            if env is not None and env.open:
                return True
    return False


def _is_monomial(d) -> bool:
    r = d.resolved()
    if not isinstance(r, Dim) or len(r._terms) != 1:
        return False
    ((m, c),) = r._terms.items()
    return c > 0 and all(isinstance(f, _Atom) for f in m)


def assume_at_least(d, k: int, why: str) -> bool:
    """Record that size ``d`` is at least ``k`` (checked when the compiled program is
    entered) unless that is already certain; True. For an ``int``, whether it holds."""
    if not isinstance(d, Dim):
        return int(d) >= k
    poly = _poly_of(d.resolved())
    lb = _recorded_bound(poly, _lower_bound(poly))  # certain, or assumed before
    if lb is not None and lb >= k:
        return True
    env = _env_of(d._terms)
    if env is None or not env.open:
        raise InconclusiveDimensionError(d, f"{d} >= {k}")
    env.lower_bounds.append((d, k, why))
    atom = d.atom()
    if atom is not None:
        env.atom_lb[atom.name] = max(env.atom_lb.get(atom.name, 0), k)
    return True


def assume_ordered(sizes, why: str) -> bool:
    """Whether ``sizes[0] <= sizes[1] <= ...``: decided for ints, and for symbolic sizes
    assumed where it is not certain (checked at entry, like :func:`assume_at_least`)."""
    return all(assume_at_least(b - a, 0, why) if isinstance(b - a, Dim) else a <= b
               for a, b in zip(sizes, sizes[1:]))


def slice_indices(start, stop, step, n) -> tuple:
    """``slice(start, stop, step).indices(n)`` plus the length, for a symbolic size
    ``n`` and int, :class:`Dim` (or None) bounds: ``(start, stop, step, length)``. The
    bounds are assumed within ``n`` (``x[1:]`` assumes ``n >= 1``, ``x[2:4]`` assumes
    ``n >= 4``, ``x[: n // 2]`` assumes ``n - n // 2 >= 0``);
    the compiled program checks that at entry."""
    step = 1 if step is None else int(step)
    why = f"slice({start}, {stop}, {step}) needs it"

    def pos(b, default):
        if b is None:
            return default
        if type(b) is Dim:  # a bound computed from sizes (``x[: n // 2]``): in range
            assume_at_least(b, 0, why)
            assume_at_least(n - b, 0 if step > 0 else 1, why)
            return b
        b = int(b)
        if b >= 0:
            assume_at_least(n, b if step > 0 else b + 1, why)
            return b
        assume_at_least(n, -b, why)
        return n + b

    if step > 0:
        first, last = pos(start, 0), pos(stop, n)
        length = last - first
        if isinstance(length, int):
            length = max(0, -(-length // step))
        else:
            assume_at_least(length, 1 if step > 1 else 0, why)
            length = (length + step - 1) // step
        return first, last, step, length
    first = pos(start, n - 1)
    last = -1 if stop is None else pos(stop, None)
    length = first - last
    if isinstance(length, int):
        length = max(0, -(-length // -step))
    else:
        assume_at_least(length, 1 if step < -1 else 0, why)
        length = (length - step - 1) // -step
    return first, last, step, length


def entry_checks(atoms) -> list:
    """``(size, k, why)`` for every lower bound the traces of ``atoms`` assumed."""
    out, seen = [], set()
    for a in atoms:
        env = a.env
        if id(env) in seen:
            continue
        seen.add(id(env))
        out.extend(env.lower_bounds)
    return out


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


def _is_value(x) -> bool:
    """A number or array a size may combine with as a value (not a size itself)."""
    return isinstance(x, (float, complex, bool, np.bool_, np.floating, np.complexfloating,
                          np.ndarray)) or hasattr(x, "aval") or hasattr(x, "_value")


def _is_size(x) -> bool:
    return isinstance(x, (Dim, int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _resolved(x):
    return x.resolved() if isinstance(x, Dim) else int(x)


def _resolve_factor(f):
    if isinstance(f, _Atom):
        r = f.root()
        k = r.env.constants.get(r.name)
        return k if k is not None else _make({(r,): 1})
    a, b = _resolved(f.a), _resolved(f.b)
    return {"floordiv": _floordiv, "max": dim_max, "min": dim_min}[f.op](a, b)


def _atom_name(a) -> str:
    return a.name


def code_name(a) -> str:
    """The local name generated code gives a root atom's value."""
    return f"_n_{a.name}"


def _format(x, name, code=False) -> str:
    if isinstance(x, int):
        return str(x)
    parts = []
    consts = []
    for m, c in sorted(x._terms.items(), key=lambda mc: (len(mc[0]) == 0, mc[1] < 0,
                                                        str(mc[0]))):
        if m == ():
            consts.append(c)
            continue
        factors = [_format_factor(f, name, code) for f in m]
        body = "*".join(factors) if not code else " * ".join(factors)
        if c == 1:
            parts.append(("+", body))
        elif c == -1:
            parts.append(("-", body))
        else:
            joiner = "*" if not code else " * "
            parts.append(("+" if c > 0 else "-", f"{abs(c)}{joiner}{body}"))
    for c in consts:
        parts.append(("+" if c > 0 else "-", str(abs(c))))
    text = ""
    for k, (sign, body) in enumerate(parts):
        if k == 0:
            text = body if sign == "+" else f"-{body}"
        else:
            text += f" {sign} {body}"
    if code and len(parts) > 1:
        text = f"({text})"
    return text


def _format_factor(f, name, code):
    if isinstance(f, _Atom):
        return name(f)
    a = _format(f.a, name, code) if isinstance(f.a, Dim) else str(f.a)
    b = _format(f.b, name, code) if isinstance(f.b, Dim) else str(f.b)
    if f.op == "floordiv":  # (as source, each operand bracketed: ``a // (x0*x1)``)
        return f"(({a}) // ({b}))" if code else f"floordiv({a}, {b})"
    return f"{f.op}({a}, {b})"


def _collect(x, out):
    if not isinstance(x, Dim):
        return
    for m in x._terms:
        for f in m:
            if isinstance(f, _Atom):
                r = f.root()
                out.setdefault(r.name, r)
            else:
                _collect(f.a, out)
                _collect(f.b, out)


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


class DimEnv:
    """The atoms of one trace and the equalities it assumed (a union-find)."""

    def __init__(self):
        self.parent: dict = {}
        self.atoms: dict = {}
        self.open = True
        self.equalities: list = []  # (atom, atom) pairs, in the order assumed
        self.lower_bounds: list = []  # (size, k, why): the trace assumed size >= k
        self.atom_lb: dict = {}  # root name -> the largest k assumed for it alone
        self.constants: dict = {}  # root name -> the value an operation required

    def atom(self, arg: str, axis: int) -> Dim:
        """A fresh atom for ``arg.shape[axis]``, named ``<arg><axis>``."""
        base = re.sub(r"\W+", "_", arg).strip("_") or "d"
        if base[0].isdigit():
            base = "d" + base
        if base[-1].isdigit():
            base += "_"
        name = f"{base}{axis}"
        while name in self.atoms:
            name += "_"
        a = _Atom(name, self, arg, axis, len(self.atoms))
        self.atoms[name] = a
        self.parent[name] = name
        return _make({(a,): 1})

    def find(self, atom: _Atom) -> _Atom:
        name = atom.name
        parent = self.parent
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return self.atoms[name]

    def union(self, a: _Atom, b: _Atom) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is rb:
            return
        if rb.order < ra.order:
            ra, rb = rb, ra
        self.parent[rb.name] = ra.name
        self.equalities.append((a, b))
        if rb.name in self.constants:
            self.constants.setdefault(ra.name, self.constants.pop(rb.name))
        if rb.name in self.atom_lb:
            self.atom_lb[ra.name] = max(self.atom_lb.get(ra.name, 0),
                                        self.atom_lb.pop(rb.name))

    def set_constant(self, atom: "_Atom", value: int) -> None:
        """Assume ``atom == value`` (checked at entry, like an equality of atoms)."""
        self.constants[self.find(atom).name] = int(value)
        self.equalities.append((atom, int(value)))

    def close(self) -> None:
        """No more unification: comparisons become structural."""
        self.open = False


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
