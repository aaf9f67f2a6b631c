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


sys.modules[__name__].__class__ = _CallableModule
