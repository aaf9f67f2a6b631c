"""Orthogonal factorizations: ``qr``, ``eigh`` (symmetric/Hermitian eigenproblem) and
``svd``, and the general eigenproblem ``eig``.

As in ``linalg_decomp``: each primitive maps over leading axes, its NumPy impl is the
executable spec (the docstrings name the LAPACK routine), and the JVP rules follow JAX's
``jax/_src/lax/linalg.py``. Eigenvectors and singular vectors are defined up to sign
(phase), so only gauge-invariant quantities of them have well-defined derivatives; the
rules assume distinct eigenvalues / singular values, as JAX's do.
"""
from __future__ import annotations

import numpy as np

from ..core.dims import dim_min
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..interpreters import ad
from . import elementwise as ew
from . import structural as st
from ._linalg_util import (H, check_matrix_dtype, diag_embed, diagonal, dtype_of, eye,
                           full, is_complex, matmul, out_aval, real_dtype, shape_of, tril)
from .linalg_decomp import (_batch_leading, lu_p, map_matrices, permute_rows, small_stack,
                            triangular_solve_p)

__all__ = ["qr_p", "eigh_p", "svd_p", "eig_p"]


def _real(x):
    return ew.real(x) if is_complex(x) else x


def _as(x, dtype):
    return x if dtype_of(x) == np.dtype(dtype) else ew.convert_element_type(x, dtype)


def _along_last(v, shape):
    """Broadcast (..., k) to (..., r, k): ``v[j]`` at every ``[i, j]``."""
    nd = len(shape)
    return st.broadcast_in_dim(v, shape, tuple(range(nd - 2)) + (nd - 1,))


def _along_rows(v, shape):
    """Broadcast (..., k) to (..., k, c): ``v[i]`` at every ``[i, j]``."""
    nd = len(shape)
    return st.broadcast_in_dim(v, shape, tuple(range(nd - 2)) + (nd - 2,))


# ---------------------------------------------------------------------------
# qr
# ---------------------------------------------------------------------------
qr_p = Primitive("qr", multiple_results=True, param_order=("full_matrices",))


def _qr_abstract(x, *, full_matrices):
    check_matrix_dtype("qr", x)
    if len(x.shape) < 2:
        raise ValueError(f"Argument to qr must have rank >= 2, got shape {tuple(x.shape)}")
    *batch, m, n = x.shape
    k = m if full_matrices else dim_min(m, n)
    return [out_aval((*batch, m, k), x.dtype), out_aval((*batch, k, n), x.dtype)]


def _qr_impl(x, *, full_matrices):
    """``qr_p``, the executable spec.

    QR factorization of (..., m, n) matrices: ``q`` (..., m, k) with
    orthonormal columns and upper-triangular ``r`` (..., k, n), ``k = m`` with
    ``full_matrices`` else ``min(m, n)``.

    Impl: ``scipy.linalg.qr`` (LAPACK ``?geqrf`` + ``?orgqr``/``?ungqr``), one call per
    matrix (``numpy.linalg.qr`` for stacks of small matrices).
    """
    *batch, m, n = x.shape
    if x.size == 0:
        k = m if full_matrices else min(m, n)
        q = np.broadcast_to(np.eye(m, k, dtype=x.dtype), (*batch, m, k)).copy()
        return [q, np.zeros((*batch, k, n), x.dtype)]
    if small_stack(x):
        return list(np.linalg.qr(x, mode="complete" if full_matrices else "reduced"))
    mode = "full" if full_matrices else "economic"
    import scipy.linalg  # imported on first use: a slow import
    return map_matrices(lambda a: scipy.linalg.qr(a, mode=mode, check_finite=False), x)


def _qr_jvp(primals, tangents, *, full_matrices):
    # j-towns.github.io/papers/qr-derivative.pdf, as in JAX.
    (x,), (dx,) = primals, tangents
    *_, m, n = shape_of(x)
    if dx is None:
        return list(qr_p.bind(x, full_matrices=full_matrices)), [None, None]
    if m < n or (full_matrices and m != n):
        raise NotImplementedError(
            "qr: derivatives are implemented for m >= n with reduced factors only "
            f"(got a {m}x{n} matrix, full_matrices={full_matrices}), as in JAX")
    q, r = qr_p.bind(x, full_matrices=False)
    dx_rinv = triangular_solve_p.bind(r, dx, left_side=False, lower=False,
                                      transpose_a=False, conjugate_a=False,
                                      unit_diagonal=False)
    qt_dx_rinv = matmul(H(q), dx_rinv)
    low = tril(qt_dx_rinv, -1)
    do = ew.sub(low, H(low))   # skew-symmetric (skew-Hermitian)
    if is_complex(x):
        dt = dtype_of(x)
        imag_part = ew.sub(qt_dx_rinv, _as(ew.real(qt_dx_rinv), dt))
        do = ew.add(do, ew.mul(eye(shape_of(do), dt), imag_part))
    dq = ew.add(matmul(q, ew.sub(do, qt_dx_rinv)), dx_rinv)
    dr = matmul(ew.sub(qt_dx_rinv, do), r)
    return [q, r], [dq, dr]


_qr_jvp.symbolic_zeros = True
abstract_eval_rules[qr_p] = _qr_abstract
impl_rules[qr_p] = _qr_impl
ad.jvp_rules[qr_p] = _qr_jvp
_batch_leading(qr_p)


# ---------------------------------------------------------------------------
# eigh
# ---------------------------------------------------------------------------
eigh_p = Primitive("eigh", multiple_results=True, param_order=("lower", "sort_eigenvalues"))


def _eigh_abstract(x, *, lower, sort_eigenvalues):
    check_matrix_dtype("eigh", x)
    if len(x.shape) < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("Argument to symmetric eigendecomposition must have shape "
                         f"[..., n, n], got shape {tuple(x.shape)}")
    return [out_aval(x.shape, x.dtype), out_aval(x.shape[:-1], real_dtype(x.dtype))]


def _eigh_impl(x, *, lower, sort_eigenvalues):
    """``eigh_p``, the executable spec.

    Eigendecomposition of symmetric/Hermitian (..., n, n) matrices,
    reading the lower (``lower=True``) or upper triangle: outputs eigenvectors ``v``
    (..., n, n, columns) and real eigenvalues ``w`` (..., n) in ascending order.

    Impl: LAPACK ``?syevd``/``?heevd`` through ``scipy.linalg.eigh(driver="evd")``, one
    call per matrix (``numpy.linalg.eigh`` for stacks of small matrices); both sort.
    """
    if x.size == 0:
        return [np.zeros(x.shape, x.dtype), np.zeros(x.shape[:-1], real_dtype(x.dtype))]
    if small_stack(x):
        try:
            w, v = np.linalg.eigh(x, UPLO="L" if lower else "U")
            return [v, w]
        except np.linalg.LinAlgError:
            pass   # some matrix failed (NaN input): one at a time below

    def one(a):
        try:
            import scipy.linalg  # imported on first use: a slow import
            w, v = scipy.linalg.eigh(a, lower=lower, driver="evd", check_finite=False)
        except np.linalg.LinAlgError:   # no convergence: NaNs rather than an exception
            v = np.full(a.shape, np.nan, a.dtype)
            w = np.full(a.shape[:-1], np.nan, real_dtype(a.dtype))
        return [v, w]
    return map_matrices(one, x)


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues):
    (x,), (dx,) = primals, tangents
    v, w = eigh_p.bind(x, lower=lower, sort_eigenvalues=sort_eigenvalues)
    if dx is None:
        return [v, w], [None, None]
    shape, dt = shape_of(x), dtype_of(x)
    wc = _as(w, dt)
    eye_n = eye(shape, dt)
    # F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it (no division by zero there).
    diff = ew.sub(_along_last(wc, shape), _along_rows(wc, shape))
    fmat = ew.sub(ew.div(full(1, shape, dt), ew.add(eye_n, diff)), eye_n)
    vdag_dx_v = matmul(matmul(H(v), dx), v)
    dv = matmul(v, ew.mul(fmat, vdag_dx_v))
    dw = _real(diagonal(vdag_dx_v))
    return [v, w], [dv, dw]


_eigh_jvp.symbolic_zeros = True
abstract_eval_rules[eigh_p] = _eigh_abstract
impl_rules[eigh_p] = _eigh_impl
ad.jvp_rules[eigh_p] = _eigh_jvp
_batch_leading(eigh_p)


# ---------------------------------------------------------------------------
# svd
# ---------------------------------------------------------------------------
svd_p = Primitive("svd", multiple_results=True, param_order=("full_matrices", "compute_uv"))


def _svd_abstract(x, *, full_matrices, compute_uv):
    check_matrix_dtype("svd", x)
    if len(x.shape) < 2:
        raise ValueError(f"Argument to svd must have rank >= 2, got shape {tuple(x.shape)}")
    *batch, m, n = x.shape
    k = dim_min(m, n)
    s = out_aval((*batch, k), real_dtype(x.dtype))
    if not compute_uv:
        return [s]
    u = out_aval((*batch, m, m if full_matrices else k), x.dtype)
    vt = out_aval((*batch, n if full_matrices else k, n), x.dtype)
    return [s, u, vt]


def _svd_impl(x, *, full_matrices, compute_uv):
    """``svd_p``, the executable spec.

    Singular value decomposition of (..., m, n) matrices: outputs the
    singular values ``s`` (..., k), ``k = min(m, n)``, in descending order, and with
    ``compute_uv`` also ``u`` (..., m, m or k) and ``vt`` (..., n or k, n) with
    ``a = u @ diag(s) @ vt``.

    Impl: LAPACK ``?gesdd`` from ``scipy.linalg.lapack``, one call per matrix
    (``numpy.linalg.svd`` for stacks of small matrices); NaNs where it fails to converge.
    """
    *batch, m, n = x.shape
    k = min(m, n)
    if x.size == 0:
        s = np.zeros((*batch, k), real_dtype(x.dtype))
        if not compute_uv:
            return [s]
        mu, nv = (m, n) if full_matrices else (k, k)
        u = np.broadcast_to(np.eye(m, mu, dtype=x.dtype), (*batch, m, mu)).copy()
        vt = np.broadcast_to(np.eye(nv, n, dtype=x.dtype), (*batch, nv, n)).copy()
        return [s, u, vt]
    if small_stack(x):
        try:
            if not compute_uv:
                return [np.linalg.svd(x, compute_uv=False)]
            u, s, vt = np.linalg.svd(x, full_matrices=full_matrices)
            return [s, u, vt]
        except np.linalg.LinAlgError:
            pass   # some matrix failed (NaN input): one at a time below
    import scipy.linalg  # imported on first use: a slow import
    gesdd, gesdd_lwork = scipy.linalg.get_lapack_funcs(("gesdd", "gesdd_lwork"), (x,))
    flags = dict(compute_uv=int(compute_uv), full_matrices=int(full_matrices))
    work, info = gesdd_lwork(m, n, **flags)   # the optimal workspace: ~10% faster
    if info == 0:
        flags["lwork"] = int(np.real(work))

    def one(a):
        u, s, vt, info = gesdd(a, **flags)
        if info != 0:   # no convergence: NaNs rather than an exception
            u, s, vt = (np.full(np.shape(t), np.nan, t.dtype) for t in (u, s, vt))
        return [s, u, vt] if compute_uv else [s]
    return map_matrices(one, x)


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    (a,), (da,) = primals, tangents
    *_, m, n = shape_of(a)
    if da is None:
        outs = svd_p.bind(a, full_matrices=full_matrices, compute_uv=compute_uv)
        return list(outs), [None] * len(outs)
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "svd: derivatives of full_matrices=True singular vectors of a non-square "
            "matrix are not implemented (as in JAX); use full_matrices=False")
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True)
    dt = dtype_of(a)
    ut, v = H(u), H(vt)
    ds_mat = matmul(matmul(ut, da), v)            # (..., k, k)
    ds = _real(diagonal(ds_mat))
    if not compute_uv:
        return [s], [ds]
    kk = shape_of(ds_mat)
    sc = _as(s, dt)
    s_col, s_row = _along_last(sc, kk), _along_rows(sc, kk)   # s_j and s_i at [i, j]
    eye_k = eye(kk, dt)
    # F[i, j] = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it.
    s_diffs = ew.mul(ew.add(s_col, s_row), ew.sub(s_col, s_row))
    f = ew.sub(ew.div(full(1, kk, dt), ew.add(s_diffs, eye_k)), eye_k)
    dss = ew.mul(s_col, ds_mat)                   # dS diag(s)
    sds = ew.mul(s_row, ds_mat)                   # diag(s) dS
    du_inner = ew.mul(f, ew.add(dss, H(dss)))
    if is_complex(a):
        rdt = real_dtype(dt)
        zero = ew.eq(s, full(0, shape_of(s), rdt))
        zf = ew.convert_element_type(zero, rdt)
        s_inv = ew.sub(ew.div(full(1, shape_of(s), rdt), ew.add(s, zf)), zf)
        s_inv_mat = _as(diag_embed(s_inv), dt)
        du_diag = ew.mul(ew.mul(full(0.5, kk, dt), ew.sub(ds_mat, H(ds_mat))), s_inv_mat)
        du_inner = ew.add(du_inner, du_diag)
    du = matmul(u, du_inner)
    dv = matmul(v, ew.mul(f, ew.add(sds, H(sds))))
    if m > n:
        dav = matmul(da, v)
        resid = ew.sub(dav, matmul(u, matmul(ut, dav)))
        du = ew.add(du, ew.div(resid, _along_last(sc, shape_of(resid))))
    if n > m:
        dahu = matmul(H(da), u)
        resid = ew.sub(dahu, matmul(v, matmul(vt, dahu)))
        dv = ew.add(dv, ew.div(resid, _along_last(sc, shape_of(resid))))
    return [s, u, vt], [ds, du, H(dv)]


_svd_jvp.symbolic_zeros = True
abstract_eval_rules[svd_p] = _svd_abstract
impl_rules[svd_p] = _svd_impl
ad.jvp_rules[svd_p] = _svd_jvp
_batch_leading(svd_p)


# ---------------------------------------------------------------------------
# eig
# ---------------------------------------------------------------------------
eig_p = Primitive("eig", multiple_results=True, param_order=("compute_eigenvectors",))


def complex_dtype(dt) -> np.dtype:
    """The complex type of the same precision (complex types map to themselves)."""
    return np.result_type(np.dtype(dt), np.complex64)


def _eig_abstract(x, *, compute_eigenvectors):
    check_matrix_dtype("eig", x)
    if len(x.shape) < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("Argument to nonsymmetric eigendecomposition must have shape "
                         f"[..., n, n], got shape {tuple(x.shape)}")
    ct = complex_dtype(x.dtype)
    w = out_aval(x.shape[:-1], ct)
    return [w, out_aval(x.shape, ct)] if compute_eigenvectors else [w]


def _eig_impl(x, *, compute_eigenvectors):
    """``eig_p``, the executable spec.

    Eigenvalues ``w`` (..., n) and right eigenvectors ``v`` (..., n, n, unit-norm
    columns) of general square matrices, always complex, in LAPACK's order (not
    sorted). Impl: LAPACK ``?geev`` through ``numpy.linalg.eig``; a matrix that does not
    converge (NaN input) gives NaNs rather than an exception.
    """
    ct = complex_dtype(x.dtype)

    def one(a):
        try:
            w, v = np.linalg.eig(a)
        except np.linalg.LinAlgError:
            w = np.full(a.shape[:-1], np.nan, ct)
            v = np.full(a.shape, np.nan, ct)
        return [np.asarray(w, ct), np.asarray(v, ct)]
    if x.size == 0:
        outs = [np.zeros(x.shape[:-1], ct), np.zeros(x.shape, ct)]
    else:
        outs = one(x) if small_stack(x) and np.isfinite(x).all() else map_matrices(one, x)
    return outs if compute_eigenvectors else outs[:1]


def _eig_jvp(primals, tangents, *, compute_eigenvectors):
    (x,), (dx,) = primals, tangents
    if compute_eigenvectors and dx is not None:
        # As JAX: eigenvectors of a general matrix have no derivative rule here (their
        # phase is arbitrary); eigvals is differentiable.
        raise NotImplementedError(
            "The derivatives of eigenvectors of non-symmetric matrices are not "
            "implemented, only eigenvalues: use jnp.linalg.eigvals.")
    w, v = eig_p.bind(x, compute_eigenvectors=True)
    outs = [w, v] if compute_eigenvectors else [w]
    if dx is None:
        return outs, [None] * len(outs)
    # dw_i = (V^-1 dX V)_ii, solving with V's LU factors.
    ct = dtype_of(w)
    y = matmul(_as(dx, ct), v)
    lu, _, perm = lu_p.bind(v)
    y = permute_rows(y, perm)
    solve = triangular_solve_p.bind
    y = solve(lu, y, left_side=True, lower=True, transpose_a=False, conjugate_a=False,
              unit_diagonal=True)
    y = solve(lu, y, left_side=True, lower=False, transpose_a=False, conjugate_a=False,
              unit_diagonal=False)
    return outs, [diagonal(y)]


_eig_jvp.symbolic_zeros = True
abstract_eval_rules[eig_p] = _eig_abstract
impl_rules[eig_p] = _eig_impl
ad.jvp_rules[eig_p] = _eig_jvp
_batch_leading(eig_p)
