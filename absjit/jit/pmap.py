"""``pmap``: JAX's "map over devices" on absjit's one device, as a ``jit`` of a named
``vmap``.

absjit runs a program on one device (the CPU's cores through its parallel kernels, or
one GPU), so ``pmap(f, axis_name="i")(x)`` computes what JAX's ``pmap`` computes on
``x.shape[0]`` devices, with collectives (``lax.psum`` …) over ``"i"``, as one compiled
vectorised program. Unlike JAX it accepts any mapped size, not only up to the device
count. ``devices`` must be None or this device list; ``donate_argnums`` is accepted and
ignored (absjit never donates buffers).
"""
from __future__ import annotations

import functools
import operator

__all__ = ["pmap"]


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=()):
    """Map ``fun`` over the leading axis (``in_axes``) of its arguments, with the axis
    called ``axis_name`` for collectives: a ``jit`` of ``vmap`` (see the module doc).

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> from absjit import lax
    >>> absjit.pmap(lambda x: x / lax.psum(x, "i"), axis_name="i")(jnp.array([1.0, 3.0]))
    Array([0.25, 0.75], dtype=float32)
    """
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, in_axes=in_axes,
                                 out_axes=out_axes,
                                 static_broadcasted_argnums=static_broadcasted_argnums,
                                 devices=devices, backend=backend, axis_size=axis_size,
                                 donate_argnums=donate_argnums)
    if not callable(fun):
        raise TypeError(f"pmap: fun must be callable, got {type(fun).__name__}")
    from .. import api_utils
    from ..api_transforms import vmap
    from .api import jit
    if devices is not None and list(devices) != list(api_utils.devices(backend)):
        raise ValueError("pmap: absjit runs on one device; devices must be None or "
                         f"{api_utils.devices(backend)}")
    static = static_broadcasted_argnums
    static = (static,) if isinstance(static, int) else tuple(static)
    static = tuple(operator.index(i) for i in static)

    @functools.wraps(fun)
    def mapped(*args, **kwargs):
        axes = in_axes
        if static:
            n = len(args)
            norm = {i % n for i in static}
            if isinstance(axes, (list, tuple)):
                axes = tuple(None if i in norm else a for i, a in enumerate(axes))
            else:
                axes = tuple(None if i in norm else axes for i in range(n))
        return vmap(fun, in_axes=axes, out_axes=out_axes, axis_size=axis_size,
                    axis_name=axis_name)(*args, **kwargs)

    return jit(mapped, static_argnums=static or None, backend=backend)
