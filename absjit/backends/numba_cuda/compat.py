"""What the cuda backend needs to know about the installed numba-cuda: its version, a
release that cannot compile with the installed NumPy, and its disk cache's locator."""
from __future__ import annotations

from ...compat import pinned_locator

__all__ = ["NUMBA_CUDA_NUMPY_PIN", "numba_cuda_version", "numba_cuda_problem",
           "pin_cuda_disk_cache"]

# numba-cuda up to 0.30.4 registers an overload for ``np.row_stack`` when its array
# module is imported, which happens at the first kernel compile; NumPy 2.5 removed
# ``np.row_stack``, so that compile fails with an AttributeError deep inside Numba.
# absjit's ``cuda`` extra pins the NumPy below (setup.cfg), and the cuda backend refuses
# the broken combination up front with this message instead of failing mid-compile.
NUMBA_CUDA_NUMPY_PIN = "numpy<2.5"
_ROW_STACK_FIXED_IN = (0, 30, 5)  # the first numba-cuda release assumed to guard it


def numba_cuda_version() -> str:
    """The installed numba-cuda version ("none" when it is not installed)."""
    from importlib import metadata
    try:
        return metadata.version("numba-cuda")
    except metadata.PackageNotFoundError:
        return "none"


def _version_tuple(text: str) -> tuple:
    parts = []
    for p in text.split(".")[:3]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def numba_cuda_problem(numpy_module=None, version=None):
    """None, or why this numba-cuda cannot compile kernels with this NumPy (and the fix).

    ``numpy_module``/``version`` default to the installed ones (tests pass stand-ins).
    """
    import numpy
    np_mod = numpy if numpy_module is None else numpy_module
    version = numba_cuda_version() if version is None else version
    if version == "none" or hasattr(np_mod, "row_stack"):
        return None
    if _version_tuple(version) < _ROW_STACK_FIXED_IN:
        return (f"numba-cuda {version} cannot compile kernels with NumPy "
                f"{np_mod.__version__} (NumPy 2.5 removed np.row_stack, which numba-cuda "
                f"<= 0.30.4 references); install {NUMBA_CUDA_NUMPY_PIN!r} "
                f"(pip install 'absjit[cuda]' pins it) or a newer numba-cuda")
    return None


def pin_cuda_disk_cache(dispatcher, directory: str) -> None:
    """:func:`absjit.compat.pin_disk_cache` for a ``numba.cuda.jit`` dispatcher: its kernels are cached
    in ``directory`` only. Relies on numba-cuda's ``CUDACache``/``CUDACacheImpl`` and
    ``numba.cuda.core.caching`` (numba-cuda 0.30)."""
    from numba.cuda.core import caching
    from numba.cuda.dispatcher import CUDACache, CUDACacheImpl

    _Pinned = pinned_locator(caching, directory)

    class _Impl(CUDACacheImpl):
        _locator_classes = [_Pinned]

    class _Cache(CUDACache):
        _impl_class = _Impl

    dispatcher._cache = _Cache(dispatcher.py_func)
