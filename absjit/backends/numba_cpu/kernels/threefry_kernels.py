"""The Threefry-2x32 cipher for generated kernels (lowering ``threefry2x32``): the
shared functions (:mod:`absjit.backends.numba.threefry`) compiled by ``numba.njit``,
once per machine (kept in the disk cache, :func:`.helper_jit.disk_cached`); a kernel
calls them and LLVM inlines them into the loop, where the literal rotation amounts
become packed rotates and the loop vectorises. Numba types each kernel's call once
instead of ~130 statements.
"""
from __future__ import annotations

import numba

from ...numba import threefry
from ..helper_jit import disk_cached

__all__ = ["_threefry2x32_x0", "_threefry2x32_x1", "_threefry2x32_xor"]

_COMPILED = threefry.compiled(lambda f: disk_cached(numba.njit(error_model="numpy")(f)))
_threefry2x32_x0 = _COMPILED["_threefry2x32_x0"]
_threefry2x32_x1 = _COMPILED["_threefry2x32_x1"]
_threefry2x32_xor = _COMPILED["_threefry2x32_xor"]
