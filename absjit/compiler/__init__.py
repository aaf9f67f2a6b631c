"""The backend-neutral compiler: jaxpr -> fusion plan -> loop IR -> IR passes.

``lower_program(closed, options)`` gives a :class:`~.ir.Program`; ``optimize`` runs the
IR passes; ``pformat`` prints it. Backends (``absjit/backends/numba_cpu``) render the IR.
Imports only ``absjit.core`` (and primitives' fusion rules registered by ``absjit.ops``).
"""
from __future__ import annotations

from . import ir  # noqa: F401
from .lower import PARALLEL_MIN_SIZE, Unsupported, lower_program
from .passes import optimize
from .plan import Plan, plan
from .printer import pformat

__all__ = ["ir", "lower_program", "optimize", "pformat", "Plan", "plan", "Unsupported",
           "PARALLEL_MIN_SIZE", "compile_to_ir", "explain"]


def compile_to_ir(closed, options, name="kernel", loop_scatters=False):
    """``optimize(lower_program(closed, options, name, loop_scatters))``."""
    return optimize(lower_program(closed, options, name, loop_scatters))


def explain(closed) -> str:
    """The fusion plan of ``closed``'s top level (calls inlined), as text: each
    equation's kind and whether its result is an array (and why) or computed lazily
    inside which loop nests."""
    from ..core.passes import dce, inline_calls
    jaxpr = dce(inline_calls(closed).jaxpr)
    return str(plan(jaxpr.eqns, jaxpr.outvars))
