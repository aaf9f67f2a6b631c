"""Assumptions about sizes: bounds a trace records, checked when the program is entered.

Where a symbolic size must be at least some number for the program to make sense
(``x[1:]`` needs ``x0 >= 1``, ``x.shape[0] == 0`` in Python code expects a non-empty
array), the trace assumes it: the bound is recorded in the atoms'
:class:`~absjit.core.dim_env.DimEnv` and :func:`entry_checks` lists it for the compiled
program to check before anything runs. Equalities are assumed by unification
(:func:`absjit.core.dims.unify`).
"""
from __future__ import annotations

from ..errors import InconclusiveDimensionError
from .dim_bounds import _lower_bound, _recorded_bound
from .dim_poly import SizePolynomial, _env_of, _poly_of

__all__ = ["assume_at_least", "assume_ordered", "slice_indices", "entry_checks"]


def assume_at_least(d, k: int, why: str) -> bool:
    """Record that size ``d`` is at least ``k`` (checked when the compiled program is
    entered) unless that is already certain; True. For an ``int``, whether it holds."""
    if not isinstance(d, SizePolynomial):
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
    return all(assume_at_least(b - a, 0, why) if isinstance(b - a, SizePolynomial) else a <= b
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
        # A bound computed from sizes (``x[: n // 2]``): assumed in range.
        if isinstance(b, SizePolynomial):
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
