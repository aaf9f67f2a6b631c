"""Primitives and the rule tables the frontend owns.

A primitive is a named object (``add_p``); its user function is one line
(``def add(x, y): return add_p.bind(x, y)``). Each transform owns a table keyed by
primitive; every rule returns a **list** (multiple results are normal):

``abstract_eval_rules[p](*avals, **params) -> [aval, ...]``
    Shape/dtype rule. Raises ``TypeError``/``ValueError`` with a clear message for bad
    input, before any kernel runs. Receives ``ShapedArray`` (maybe ``ConcreteArray``).
``impl_rules[p](*np_values, **params) -> [np.ndarray, ...]``
    The NumPy reference interpreter: the executable spec every backend is tested
    against. Inputs are NumPy arrays of canonical dtypes; outputs are cast to the dtypes
    the abstract rule says.

The autodiff and batching tables live in ``absjit.interpreters.ad`` (``jvp_rules``,
``transpose_rules``) and ``absjit.interpreters.batching`` (``batch_rules``); backend
lowering tables live with each backend. Registrations for one primitive sit together
under its definition (see ``absjit/ops``).
"""
from __future__ import annotations

__all__ = ["Primitive", "impl_rules", "abstract_eval_rules", "all_primitives"]

impl_rules: dict = {}
abstract_eval_rules: dict = {}
_ALL: dict = {}


class Primitive:
    """A named operation of the IR.

    Parameters
    ----------
    name : str
        Printed in jaxprs (``log``, ``reduce_sum``).
    multiple_results : bool
        ``bind`` returns a list rather than a single value.
    effectful : bool
        The primitive has an effect (printing); passes never drop or merge it.
    param_order : tuple of str, optional
        Order in which params print; the rest follow sorted by name.
    """

    __slots__ = ("name", "multiple_results", "effectful", "param_order", "module",
                 "__weakref__")

    def __init__(self, name: str, multiple_results: bool = False, effectful: bool = False,
                 param_order: tuple = ()):
        import sys
        # The defining module: tools that check rule coverage look at absjit's own.
        self.module = sys._getframe(1).f_globals.get("__name__", "")
        self.name = name
        self.multiple_results = multiple_results
        self.effectful = effectful
        self.param_order = tuple(param_order)
        _ALL[name] = self

    def bind(self, *args, **params):
        outs = _bind(self, args, params)
        return outs if self.multiple_results else outs[0]

    def __repr__(self):
        return self.name


def _bind(primitive, args, params):
    # ``core.trace.bind``, which sets itself here when it loads: ``trace`` imports this
    # module, not the other way round (``absjit.core`` imports both).
    raise RuntimeError("absjit.core.trace is not imported")


def all_primitives() -> dict:
    """Every primitive defined so far, by name."""
    return dict(_ALL)
