"""``absjit.debug.print``: printing at run time, from inside transformed code.

Python's ``print`` inside a traced function runs once, while tracing, and shows tracers.
``debug.print`` stages an effectful ``debug_print`` equation instead, so it prints the
actual values every time the computation runs: eagerly, under ``jit`` (from the
compiled code), under ``grad`` (primal values only) and under ``vmap`` (one line per
batch element, as in JAX).
"""
from __future__ import annotations

import numpy as np

from . import tree_util
from .core.primitive import Primitive, abstract_eval_rules, impl_rules
from .interpreters import ad, batching

from ._callbacks import debug_callback as callback  # noqa: E402

__all__ = ["print", "callback", "breakpoint", "debug_print_p"]

_builtin_print = print

debug_print_p = Primitive("debug_print", multiple_results=True, effectful=True,
                          param_order=("fmt",))


def _debug_print_abstract(*avals, fmt, in_tree):
    return []


def format_values(fmt: str, in_tree, vals) -> str:
    """The printed text: ``fmt.format`` with the values rebuilt into their pytrees."""
    args, kwargs = tree_util.tree_unflatten(in_tree, [np.asarray(v) for v in vals])
    return fmt.format(*args, **kwargs)


def _debug_print_impl(*vals, fmt, in_tree):
    _builtin_print(format_values(fmt, in_tree, vals))
    return []


abstract_eval_rules[debug_print_p] = _debug_print_abstract
impl_rules[debug_print_p] = _debug_print_impl


def print(fmt: str, *args, **kwargs):  # noqa: A001 - mirrors jax.debug.print
    """Print ``fmt.format(*args, **kwargs)`` with run-time values.

    Examples
    --------
    >>> import absjit
    >>> @absjit.jit
    ... def f(x):
    ...     absjit.debug.print("x = {}", x)
    ...     return x + 1
    >>> _ = f(1.0)
    x = 1.0
    """
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the format must be a str, got {type(fmt).__name__}")
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    debug_print_p.bind(*leaves, fmt=fmt, in_tree=in_tree)


def _debug_print_jvp(primals, tangents, *, fmt, in_tree):
    if not ad.tangent_copy.get():  # the tangent copy of a loop body does not print again
        debug_print_p.bind(*primals, fmt=fmt, in_tree=in_tree)
    return [], []


_debug_print_jvp.symbolic_zeros = True
ad.jvp_rules[debug_print_p] = _debug_print_jvp
# A debug_print of tangents has no outputs, so nothing flows back through it.
ad.transpose_rules[debug_print_p] = lambda cts, *args, **params: [None] * len(args)


class _Printer:
    """A ``debug.print`` as a host callback (what ``vmap`` turns it into)."""

    __slots__ = ("fmt", "in_tree")

    def __init__(self, fmt, in_tree):
        self.fmt, self.in_tree = fmt, in_tree

    def __call__(self, *vals):
        _debug_print_impl(*vals, fmt=self.fmt, in_tree=self.in_tree)

    def __repr__(self):
        return f"print{self.fmt!r}"


def _debug_print_batch(vals, dims, *, fmt, in_tree):
    # As JAX: one line per batch element, in order. The batched operands' axes go
    # first and a per-element callback prints each element's values.
    from ._callbacks import _PerElement, debug_callback_p
    size = next(np.shape(v)[d] if not hasattr(v, "aval") else v.aval.shape[d]
                for v, d in zip(vals, dims) if d is not None)
    moved = [batching.moveaxis(v, d, 0) if d is not None and d != 0 else v
             for v, d in zip(vals, dims)]
    debug_callback_p.bind(*moved, callback=_PerElement(_Printer(fmt, in_tree), dims, size))
    return [], []


batching.batch_rules[debug_print_p] = _debug_print_batch


def breakpoint(*, backend=None, filter_frames: bool = True, num_frames=None,  # noqa: A001
               ordered: bool = False, token=None, **kwargs):
    """Stop in the Python debugger (``sys.breakpointhook``, so ``PYTHONBREAKPOINT=0``
    turns it off) when the computation reaches this point.

    Eagerly it stops in the caller's frame, like Python's ``breakpoint()``. Inside
    ``jit``, ``grad`` or ``vmap`` it is staged as a :func:`callback` and stops every
    time the compiled code runs; the variables of the traced function are gone by
    then (they were tracers), so unlike JAX's debugger there are no frames of values to
    inspect: print what you need with :func:`print` first. The keyword arguments are
    JAX's and are accepted.

    Examples
    --------
    >>> import os, absjit
    >>> os.environ["PYTHONBREAKPOINT"] = "0"  # a doctest must not stop
    >>> absjit.jit(lambda x: (absjit.debug.breakpoint(), x + 1)[1])(1.0)
    Array(2., dtype=float32, weak_type=True)
    >>> del os.environ["PYTHONBREAKPOINT"]
    """
    import sys
    if num_frames is not None and (not isinstance(num_frames, int) or num_frames < 0):
        raise ValueError(f"debug.breakpoint: num_frames must be a non-negative int, got "
                         f"{num_frames!r}")
    from .core.trace import EVAL_MAIN, current_dynamic
    if current_dynamic() is EVAL_MAIN:
        sys.breakpointhook()
        return None
    callback(lambda: sys.breakpointhook())
    return None
