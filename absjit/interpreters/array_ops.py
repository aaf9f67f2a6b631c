"""The array operations the transformations build values with, supplied by ``absjit.ops``.

Autodiff adds tangents and broadcasts zero tangents (``ad.add_tangents``,
``ad.zeros_like_aval``); batching moves and broadcasts batch axes (``batching.moveaxis``,
``batching.bdim_at_front``). The primitives doing that (``add``, ``broadcast_in_dim``,
``transpose``) are defined in ``absjit.ops``, the layer above the interpreters, which
import only ``absjit.core``. So the ops modules defining them register them here when
they are imported (:func:`register`), the way JAX's ``ad_util`` holds ``add_jaxvals``;
``import absjit`` imports ``absjit.ops`` before anything is traced.

Read them as attributes of this module at call time (``array_ops.add(x, y)``), never
with ``from ... import``, which would keep the placeholder.
"""
from __future__ import annotations

__all__ = ["register", "add", "broadcast_in_dim", "transpose"]


def _unregistered(*args, **params):
    raise RuntimeError("absjit.ops has not registered the array operations the "
                       "transformations use: import absjit first")


#: ``add(x, y)``: ``lax.add`` (set by ``absjit.ops.elementwise``).
add = _unregistered
#: ``broadcast_in_dim(x, shape, broadcast_dimensions)`` (set by ``absjit.ops.structural``).
broadcast_in_dim = _unregistered
#: ``transpose(x, permutation)`` (set by ``absjit.ops.structural``).
transpose = _unregistered


def register(**fns) -> None:
    """Supply the operations named by the keywords (``add``, ``broadcast_in_dim``,
    ``transpose``)."""
    for name, fn in fns.items():
        if name not in ("add", "broadcast_in_dim", "transpose"):
            raise TypeError(f"array_ops.register: unknown operation {name!r}")
        globals()[name] = fn
