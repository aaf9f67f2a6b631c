"""``jit`` and its caches: the per-function entry cache and the process-wide compile
cache (see :mod:`absjit.jit.api`, :mod:`absjit.jit.cache`,
:mod:`absjit.jit.compile_cache`)."""
from .api import Compiled, Lowered, Traced, clear_caches, jit
from . import compile_cache

__all__ = ["jit", "clear_caches", "Lowered", "Compiled", "Traced", "compile_cache"]
