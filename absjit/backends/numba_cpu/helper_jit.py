"""How the cpu backend's helpers (the functions generated kernels call through
:mod:`.runtime`: ``_sin_float32``, ``_exp_float64``, ``_cdiv``…) are compiled.

``numba.njit(inline="always")`` inlines a function at Numba's own IR level: every
kernel that calls it types and lowers the whole body again, once per call site (for
kernels calling sin, exp or tanh, most of their compile time). :func:`helper`
compiles a function the ordinary way instead — once per process and argument types —
and marks the compiled LLVM function ``alwaysinline``. A kernel that calls it links
that code, and LLVM inlines it into the calling loop before optimising, so the loop
vectoriser sees the same code as before; another call site, or another kernel, costs
a call to type, not the body.

Helpers compile with their own flags (``error_model="numpy"``, as the kernels), not
the calling kernel's: a kernel compiled with ``fastmath`` does not apply it to a
helper's arithmetic (whose range reductions and error-free sums rely on IEEE
rounding). They are compiled without a Python entry point (half the cost of compiling
a small one), so they can only be called from ``njit`` code.
"""
from __future__ import annotations

import logging

import numba

__all__ = ["helper", "read_only_inputs"]

log = logging.getLogger("absjit")


_FLAGS = {"error_model": "numpy",
          # only compiled code calls a helper: no Python or C entry points to compile
          "no_cpython_wrapper": True, "no_cfunc_wrapper": True}


def helper(fn=None, **flags):
    """``numba.njit(error_model="numpy", **flags)`` for functions called from compiled
    code only (no Python entry point), their compiled functions marked for LLVM to
    inline wherever they are linked. Usable as ``@helper`` or ``@helper(**flags)``."""
    if fn is None:
        return lambda f: helper(f, **flags)
    disp = numba.njit(**{**_FLAGS, **flags})(fn)
    add_overload = disp.add_overload

    def add_marked(cres):
        _mark_alwaysinline(cres)
        add_overload(cres)

    # Numba calls ``add_overload`` with each new compile result, after finalising its
    # library and before any kernel links it.
    disp.add_overload = add_marked
    return disp


def _mark_alwaysinline(cres) -> None:
    """Give the compiled function the LLVM attribute ``alwaysinline`` in the module
    its callers link (``CodeLibrary._final_module``, Numba internals stable from Numba
    0.50 to 0.68). Without it the function is still correct, but LLVM keeps most
    helpers out of line, and loops calling them are not vectorised."""
    try:
        name = cres.fndesc.llvm_func_name
        for f in cres.library._final_module.functions:
            if f.name == name and not f.is_declaration:
                f.add_function_attribute("alwaysinline")
                return
    except Exception:  # noqa: BLE001 - a newer Numba's internals
        pass
    log.debug("helper %s was not marked alwaysinline", getattr(cres.fndesc, "qualname", "?"))


def read_only_inputs(*positions):
    """Compile a dispatcher's array arguments at ``positions`` (ones it only reads) as
    read-only arrays, whatever the caller passes. A kernel's own arguments are read-only
    arrays (absjit arrays are immutable) and its temporaries are writable, so a helper
    called with either would otherwise compile once per combination (``_blas_trsm``
    three times, 0.45 s each, in one program); a writable array converts to the
    read-only type at the call (Numba's safe array conversion), so one compile serves
    every combination.

    Examples
    --------
    >>> import numba, numpy as np
    >>> total = read_only_inputs(0)(numba.njit(lambda x: x.sum()))
    >>> frozen = np.ones(3); frozen.flags.writeable = False
    >>> call = numba.njit(lambda a, b: total(a) + total(b))
    >>> float(call(np.ones(3), frozen)), len(total.signatures)
    (6.0, 1)
    """
    def wrap(disp):
        compile_exact = disp.compile

        def compile_read_only(sig):
            from numba.core import types
            args = getattr(sig, "args", sig)
            if isinstance(args, tuple):
                args = tuple(a.copy(readonly=True) if i in positions
                             and isinstance(a, types.Array) and a.mutable else a
                             for i, a in enumerate(args))
                sig = args if not hasattr(sig, "args") else sig.replace(args=args)
            return compile_exact(sig)
        disp.compile = compile_read_only
        return disp
    return wrap
