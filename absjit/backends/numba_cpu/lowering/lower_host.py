"""The fallback for one equation: a whole-array primitive with no loop lowering (fft,
LAPACK, Python callbacks…) runs its NumPy implementation from an object-mode block of
the compiled kernel, so only that equation leaves compiled code — also inside
``while``/``scan``/``cond`` bodies, where it used to send the whole program to the
interpret backend.

At the top level of a program the backend runs such an equation from the plain-Python
driver between compiled pieces instead (no object-mode transition at all); this rule
serves the equations nested in control flow.

The generated block names its call by a key (a hash of the primitive, its parameters
and operand types), filled in :data:`HOST_CALLS` while the kernel is rendered — and a
kernel is always rendered before it is loaded, from memory or disk, so the key is known
whenever the kernel runs.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ....core.primitive import impl_rules

__all__ = ["host_rule", "host_callback", "HOST_CALLS", "numba_array_type"]

# key -> (primitive, params, result dtypes)
HOST_CALLS: dict = {}


def numba_array_type(aval) -> str:
    """The Numba type of a C-contiguous array of ``aval`` as ``objmode`` parses it."""
    dt = np.dtype(aval.dtype)
    name = "boolean" if dt == np.bool_ else dt.name
    return f"Array({name}, {len(aval.shape)}, 'C')"


def host_rule(prim):
    """An array rule (same signature as ``lower_arrays.array_rules``) that calls
    ``prim``'s NumPy implementation from object mode."""
    def rule(ctx, outs, ins, in_avals, out_avals, **params):
        sig = repr((prim.name, sorted(params.items()),
                    [(np.dtype(a.dtype).name, tuple(a.shape)) for a in in_avals],
                    [(np.dtype(a.dtype).name, tuple(a.shape)) for a in out_avals]))
        key = hashlib.sha256(sig.encode()).hexdigest()[:16]
        HOST_CALLS[key] = (prim, dict(params), [np.dtype(a.dtype) for a in out_avals])
        types = ", ".join(f'{o}="{numba_array_type(a)}"' for o, a in zip(outs, out_avals))
        args = "".join(f", {x}" for x in ins)
        # Each result is read once after the block: Numba rejects a typed object-mode
        # result that nothing reads afterwards ("invalid type annotation on
        # non-outgoing variables"), as an unused LU pivot array in a loop body is.
        return [f"with objmode({types}):",
                f"    ({''.join(o + ', ' for o in outs)}) = host_callback({key!r}{args})"
                ] + [f"{o} = {o}" for o in outs]
    rule.__name__ = f"lower_{prim.name}_on_host"
    return rule


def host_callback(key, *ins):
    """Called from object mode inside a kernel: the primitive's NumPy implementation,
    its results C-contiguous and of the declared dtypes (what the kernel was typed
    for)."""
    prim, params, dtypes = HOST_CALLS[key]
    outs = impl_rules[prim](*ins, **params)
    return tuple(np.ascontiguousarray(np.asarray(o, dtype=dt)) for o, dt in zip(outs, dtypes))
