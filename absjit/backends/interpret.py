"""The ``interpret`` backend: runs a jaxpr with the NumPy impl rules.

It is the executable specification every other backend is tested against, and the
fallback when no compiling backend is available. "Compiling" only records the jaxpr;
``as_text()`` is the jaxpr itself.

Examples
--------
>>> import absjit, absjit.numpy as jnp
>>> f = absjit.jit(lambda x: x + 1, backend="interpret")
>>> f(jnp.arange(3))
Array([1, 2, 3], dtype=int32)
"""
from __future__ import annotations

import numpy as np

from ..core.specialize import bind_arguments, is_symbolic_jaxpr, specialize
from ..ops.call import eval_jaxpr_numpy
from .base import Backend, CompileOptions, Executable, register_backend

__all__ = ["InterpretBackend", "InterpretExecutable"]


class InterpretExecutable(Executable):
    """Calls ``eval_jaxpr_numpy`` on ``(*consts, *args)`` buffers."""

    __slots__ = ("jaxpr", "num_consts", "symbolic", "specialized")

    def __init__(self, closed_jaxpr):
        self.jaxpr = closed_jaxpr.jaxpr
        self.num_consts = len(self.jaxpr.constvars)
        # Sizes of the ``ranked`` level: bound per call, one concrete copy per sizes.
        self.symbolic = is_symbolic_jaxpr(self.jaxpr)
        self.specialized: dict = {}

    def __call__(self, *buffers) -> list:
        n = self.num_consts
        jaxpr = self.jaxpr
        if self.symbolic:
            sizes = bind_arguments(jaxpr, buffers)
            key = tuple(sorted(sizes.items()))
            got = self.specialized.get(key)
            if got is None:
                if len(self.specialized) > 64:
                    self.specialized.clear()
                got = self.specialized[key] = specialize(jaxpr, sizes)
            jaxpr = got
        outs = eval_jaxpr_numpy(jaxpr, buffers[:n], *buffers[n:])
        # An output may be (a view of) an input buffer; when that input is writable
        # (a caller's NumPy array) the result must not alias it, since jit marks
        # outputs read-only and the caller may keep writing to its array.
        result = []
        for out in outs:
            for b in buffers:
                if type(b) is np.ndarray and b.flags.writeable and np.may_share_memory(out, b):
                    out = out.copy()
                    break
            result.append(out)
        return result

    def as_text(self) -> str:
        return str(self.jaxpr)


class InterpretBackend(Backend):
    """Reference backend: NumPy, one primitive at a time."""

    name = "interpret"
    platforms = ("cpu",)

    def compile(self, closed_jaxpr, options: CompileOptions | None = None) -> Executable:
        return InterpretExecutable(closed_jaxpr)

    def version_key(self) -> tuple:
        return ("numpy", np.__version__)


interpret_backend = register_backend(InterpretBackend())
