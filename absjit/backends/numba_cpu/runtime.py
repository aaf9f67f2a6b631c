"""Helpers the generated kernels call (compiled by Numba once per process, inlined into
each kernel by LLVM: :mod:`.helper_jit`).

Generated modules do ``from absjit.backends.numba_cpu.runtime import *``. The hash of
the backend's source is part of every kernel's cache key, so editing a helper
invalidates the kernels that may have inlined the old version.
"""
from __future__ import annotations

import numba
import numpy as np

from .helper_jit import helper

__all__ = []


def _make_idiv(dt):
    """Integer division truncating toward zero; ``x // 0 == -1``; ``MIN // -1 == MIN``."""
    ctor = np.dtype(dt).type
    signed = np.dtype(dt).kind == "i"

    if signed:
        def idiv(x, y):
            if y == 0:
                return ctor(-1)
            if y == -1:
                return ctor(-x)  # wraps for MIN, as two's complement does
            q = x // y
            if x % y != 0 and (x < 0) != (y < 0):
                q += 1
            return ctor(q)
    else:
        def idiv(x, y):
            if y == 0:
                return ctor(-1)
            return ctor(x // y)
    return helper(idiv)


for _dt in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
    globals()[f"_idiv_{_dt}"] = _make_idiv(_dt)
    __all__.append(f"_idiv_{_dt}")


# Allocation of results and temporaries (no ``np.empty`` overload to compile first).
from .kernels.alloc_kernels import _empty  # noqa: E402

__all__ += ["_empty"]


# BLAS products live here, compiled once per process, so a kernel that multiplies
# matrices links them instead of re-typing ``np.dot`` every time. They are not cached on
# disk: Numba would write next to the installed package, outside absjit's trusted cache
# (a kernel loaded from the disk cache already holds their code).
@numba.njit(error_model="numpy")
def _dot(a, b):
    return np.dot(a, b)


# BLAS products on offset, row-strided operands, written in place: batched and blocked
# products, and the convolutions' accumulating ones.
from .kernels.blas_kernels import (_bgemm, _gemm_rows, _pgemm_pool,  # noqa: E402
                                   _pgemm_prange)
from .parallel.loop_kernels import _pool_for  # noqa: E402

__all__ += ["_dot", "_bgemm", "_pgemm_pool", "_pgemm_prange", "_gemm_rows", "_pool_for"]

# Float reductions' accumulator updates, which the loop vectoriser can reorder.
from .kernels.fold_kernels import _fold_add, _fold_max, _fold_min  # noqa: E402

__all__ += ["_fold_add", "_fold_max", "_fold_min"]


# Vectorisable exp and log for float32/float64 (lowering exp, logistic and log).
from .kernels.fastmath_kernels import (_exp_float32, _exp_float64, _log_float32,  # noqa: E402
                                       _log_float64)

__all__ += ["_exp_float32", "_exp_float64", "_log_float32", "_log_float64"]

# A single-rounding multiply-add (lowering ``fma``).
from .kernels.fma_kernels import _fma_float32  # noqa: E402

__all__ += ["_fma_float32"]

# The Threefry-2x32 hash (lowering ``threefry2x32``).
from .kernels.threefry_kernels import (_threefry2x32_x0, _threefry2x32_x1,  # noqa: E402
                                       _threefry2x32_xor)

__all__ += ["_threefry2x32_x0", "_threefry2x32_x1", "_threefry2x32_xor"]

# Vectorisable expm1, log1p, tanh, sinh, cosh, atan.
from .kernels import kernels_special as _ks  # noqa: E402

globals().update((name, getattr(_ks, name)) for name in _ks.__all__)
__all__ += list(_ks.__all__)

# Vectorisable sin, cos, tan.
from .kernels import kernels_trig as _kt  # noqa: E402

globals().update((name, getattr(_kt, name)) for name in _kt.__all__)
__all__ += list(_kt.__all__)

# Complex functions NumPy and Numba disagree on; NumPy's complex order.
from .kernels.kernels_complex import (_cacosh, _ccosh, _cdiv, _cle, _clt,  # noqa: E402
                                      _csign, _csinh, _ctanh)

__all__ += ["_cacosh", "_ccosh", "_cdiv", "_cle", "_clt", "_csign", "_csinh", "_ctanh"]

# NumPy's sort order for the generated sort loops.
from .kernels.kernels_sort import (_sort_lt_complex, _sort_lt_float,  # noqa: E402
                                   _top_k_rows)

__all__ += ["_sort_lt_float", "_sort_lt_complex", "_top_k_rows"]

# LAPACK/BLAS by symbol (bound to SciPy's routines when a kernel using them is rendered).
from .kernels.lapack_kernels import (_blas_trsm, _complex_schur,  # noqa: E402
                                     _lapack_cholesky, _lapack_eig, _lapack_eig_complex,
                                     _lapack_eigh, _lapack_hessenberg, _lapack_lu,
                                     _lapack_qr, _lapack_schur, _lapack_svd)

__all__ += ["_lapack_lu", "_lapack_cholesky", "_blas_trsm", "_lapack_eigh", "_lapack_qr",
            "_lapack_svd", "_lapack_eig", "_lapack_schur", "_complex_schur",
            "_lapack_hessenberg", "_lapack_eig_complex"]

# FFTs for loop bodies (at the top level DUCC's run between pieces).
from .kernels.fft_kernels import _fft_c2c_axis, _fft_c2r_last, _fft_r2c_last  # noqa: E402

__all__ += ["_fft_c2c_axis", "_fft_r2c_last", "_fft_c2r_last"]

# float16/bfloat16 <-> float32 conversions (kernels on 16-bit float buffers).
from .kernels import half_kernels as _hk  # noqa: E402

globals().update((name, getattr(_hk, name)) for name in _hk.__all__ if name[0] == "_")
__all__ += [name for name in _hk.__all__ if name[0] == "_"]

# Kernels with debug_print call back into Python from object mode.
from numba import objmode  # noqa: E402
from .lowering.lower_arrays import debug_print_callback  # noqa: E402
from .lowering.lower_host import host_callback  # noqa: E402

__all__ += ["objmode", "debug_print_callback", "host_callback"]
