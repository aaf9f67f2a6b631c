"""``DimEnv``: the atoms of one trace and what it assumed about them (a union-find).

An atom is made by :meth:`DimEnv.atom` for an argument's axis; unification
(:func:`absjit.core.dims.unify`) joins atoms, an operation that fixes a size records a
constant, and :func:`~absjit.core.dim_assumptions.assume_at_least` records lower bounds.
The compiled program checks all of it at entry.
"""
from __future__ import annotations

import re

from .dim_poly import _Atom
from .dims import Dim, _make

__all__ = ["DimEnv"]


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
