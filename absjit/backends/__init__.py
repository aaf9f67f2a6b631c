"""Backends: where compiled jaxprs run. See :mod:`absjit.backends.base`."""
from .base import (Backend, CompileOptions, Executable, available_backends, get_backend,  # noqa: F401
                   register_backend, select_backend)
