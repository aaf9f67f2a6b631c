"""The Schur decomposition ``a = Z T Z^H`` (``schur_p``) and the Hessenberg reduction
``a = Q H Q^H`` (``hessenberg_p``), on the host through SciPy.

Like ``eig_p`` they have no loop lowering: the numba_cpu backend runs their NumPy impls
between compiled pieces and the xla backend through a host callback. Their JVP rules
raise for a non-zero tangent, as JAX's missing rules do.
"""
from __future__ import annotations

import numpy as np

from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..interpreters import ad
from ._linalg_util import check_matrix_dtype, out_aval
from .linalg_decomp import _batch_leading, map_matrices
from .linalg_spectral import complex_dtype

__all__ = ["schur_p", "hessenberg_p"]

schur_p = Primitive("schur", multiple_results=True, param_order=("output",))


def _out_dtype(dt, output):
    return complex_dtype(dt) if output == "complex" else np.dtype(dt)


def _schur_abstract(x, *, output):
    check_matrix_dtype("schur", x)
    if len(x.shape) < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("Argument to Schur decomposition must have shape [..., n, n], got "
                         f"shape {tuple(x.shape)}")
    dt = _out_dtype(x.dtype, output)
    return [out_aval(x.shape, dt), out_aval(x.shape, dt)]


def _schur_impl(x, *, output):
    """``schur_p``, the executable spec: ``(T, Z)`` per matrix, ``T`` upper
    (quasi-)triangular — 2x2 blocks for complex pairs when ``output='real'`` and the
    input is real — and ``Z`` unitary. Impl: LAPACK ``?gees`` through
    ``scipy.linalg.schur``; a matrix that does not converge (NaN input) gives NaNs.
    For real input the complex form is made from the real one (``rsf2csf``), so real
    eigenvalues keep an exactly zero imaginary part (``sqrtm`` relies on it to pick the
    principal branch of a negative eigenvalue, as SciPy does)."""
    import scipy.linalg
    dt = _out_dtype(x.dtype, output)

    def one(a):
        try:
            if output == "complex" and a.dtype.kind != "c":
                t, z = scipy.linalg.schur(a, output="real", check_finite=False)
                t, z = scipy.linalg.rsf2csf(t, z, check_finite=False)
            else:
                t, z = scipy.linalg.schur(a.astype(dt), output=output,
                                          check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            t = z = np.full(a.shape, np.nan, dt)
        return [np.asarray(t, dt), np.asarray(z, dt)]
    if x.size == 0:
        return [np.zeros(x.shape, dt), np.zeros(x.shape, dt)]
    return map_matrices(one, x)


def _schur_jvp(primals, tangents, *, output):
    (x,), (dx,) = primals, tangents
    if dx is not None:
        raise NotImplementedError(
            "Differentiation rule for 'schur' not implemented: the Schur form is not "
            "unique, so it has no derivative (as in JAX).")
    return schur_p.bind(x, output=output), [None, None]


_schur_jvp.symbolic_zeros = True
abstract_eval_rules[schur_p] = _schur_abstract
impl_rules[schur_p] = _schur_impl
ad.jvp_rules[schur_p] = _schur_jvp
_batch_leading(schur_p)


# ---------------------------------------------------------------------------
# hessenberg
# ---------------------------------------------------------------------------
hessenberg_p = Primitive("hessenberg", multiple_results=True)


def _hessenberg_abstract(x):
    check_matrix_dtype("hessenberg", x)
    if len(x.shape) < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("Argument to Hessenberg reduction must have shape [..., n, n], got "
                         f"shape {tuple(x.shape)}")
    return [out_aval(x.shape, x.dtype), out_aval(x.shape, x.dtype)]


def _hessenberg_impl(x):
    """``hessenberg_p``, the executable spec: ``(H, Q)`` per matrix, ``H`` zero below
    the first subdiagonal and ``Q`` unitary. Impl: LAPACK ``?gehrd``/``?orghr`` through
    ``scipy.linalg.hessenberg``; NaN input gives NaNs."""
    import scipy.linalg

    def one(a):
        h, q = scipy.linalg.hessenberg(a, calc_q=True, check_finite=False)
        return [np.asarray(h, x.dtype), np.asarray(q, x.dtype)]
    if x.size == 0:
        return [np.zeros(x.shape, x.dtype), np.zeros(x.shape, x.dtype)]
    return map_matrices(one, x)


def _hessenberg_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    if dx is not None:
        raise NotImplementedError("Differentiation rule for 'hessenberg' not implemented "
                                  "(as in JAX).")
    return hessenberg_p.bind(x), [None, None]


_hessenberg_jvp.symbolic_zeros = True
abstract_eval_rules[hessenberg_p] = _hessenberg_abstract
impl_rules[hessenberg_p] = _hessenberg_impl
ad.jvp_rules[hessenberg_p] = _hessenberg_jvp
_batch_leading(hessenberg_p)
