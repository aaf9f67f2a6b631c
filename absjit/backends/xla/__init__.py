"""The ``xla`` backend (alias ``tpu``): jaxprs compiled by XLA through ``jax.jit``.

It serves TPUs (and any platform jax reports), and runs compiled the programs the
Numba backends cannot lower (``sort`` or ``conv_general_dilated`` inside a loop,
complex arithmetic, float16/bfloat16): see :func:`absjit.backends.base.route_backend`.
Importing this package does not import jax; the first compile does. Without jax,
``jit(f, backend="xla")`` raises :class:`XLANotInstalledError`.

Examples
--------
>>> import absjit, absjit.numpy as jnp
>>> f = absjit.jit(lambda x: jnp.sort(x)[::-1], backend="xla")
>>> f(jnp.array([2.0, 3.0, 1.0]))
Array([3., 2., 1.], dtype=float32)
"""
from __future__ import annotations

import importlib.util
import sys

from ..base import register_backend

__all__ = ["XlaBackend", "XlaExecutable", "XLANotInstalledError", "jax_installed", "BACKEND"]


class XLANotInstalledError(ImportError):
    """The ``xla`` (or ``tpu``) backend was asked for, but jax/jaxlib are not installed.

    Examples
    --------
    >>> str(XLANotInstalledError()).startswith("the xla backend needs jax")
    True
    """

    def __init__(self, msg=None):
        super().__init__(msg or "the xla backend needs jax and jaxlib, which are not "
                         "installed: pip install absjit[xla]", name="jax")


def jax_installed() -> bool:
    """Whether jax and jaxlib can be imported (without importing them).

    Examples
    --------
    >>> isinstance(jax_installed(), bool)
    True
    """
    alias = sys.modules.get("absjit.compat_jax")
    if alias is not None and alias.is_installed():
        return False  # ``jax`` names absjit itself while the import alias is installed
    for name in ("jax", "jaxlib"):
        if name in sys.modules:
            if sys.modules[name] is None:  # an import blocked on purpose
                return False
            continue
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):
            return False
    return True


from .backend import XlaBackend, XlaExecutable  # noqa: E402

BACKEND = register_backend(XlaBackend())
