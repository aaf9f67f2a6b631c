"""Backends: where compiled jaxprs run. See :mod:`absjit.backends.base`.

The package is also callable: ``absjit.backends()`` lists the available backends.
"""
import sys
import types

from .base import (Backend, CompileOptions, Executable, available_backends, get_backend,  # noqa: F401
                   register_backend, select_backend)


class _CallableModule(types.ModuleType):
    """``absjit.backends()`` is ``available_backends()``; ``absjit.backends.base`` etc.
    still name the submodules."""

    def __call__(self):
        return available_backends()


def __getattr__(name):
    # A backend's package is imported when first named (``absjit.backends.numba_cpu``),
    # as when it is first asked for by name (``base.register_backend_module``).
    if name in ("interpret", "numba_cpu", "numba_cuda", "xla", "diskcache"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


sys.modules[__name__].__class__ = _CallableModule
