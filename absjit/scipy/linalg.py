"""``absjit.scipy.linalg``: SciPy's dense linear algebra with JAX's semantics.

Functions take SciPy's arguments (``overwrite_*`` and ``check_finite`` are accepted and
ignored: arrays are immutable and nothing is checked at run time), map over leading
batch axes and promote integer input to the default float. They are compositions of
the ``absjit.lax.linalg`` decompositions, so they differentiate, batch and compile.
"""
from __future__ import annotations

from .. import numpy as jnp
from ..core.trace import get_aval
from ..lax import linalg as lax_linalg
from ..numpy import _linalg_decomp as _dec
from ..ops import elementwise as ew
from ..ops import structural as st
from ..ops._linalg_util import H, eye, matmul, mT, shape_of, tril, triu
from ..ops.linalg_decomp import permutation_matrix
from ._expm import expm
from ._matfuncs import (expm_frechet, funm, hessenberg, polar, rsf2csf, schur,
                        solve_sylvester, sqrtm)
from ._special_matrices import *  # noqa: F401,F403
from ._special_matrices import __all__ as _special_all

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "lu", "lu_factor",
           "lu_solve", "eigh", "svd", "qr", "inv", "det", "expm", "solve", "polar",
           "expm_frechet", "schur", "sqrtm", "funm", "qr_multiply",
           "eigh_tridiagonal", "solve_sylvester", "hessenberg", "rsf2csf"] + list(_special_all)


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Cholesky factor of a Hermitian positive-definite matrix.

    Returns upper ``U`` with ``a = U^H @ U`` (the default, as SciPy), or lower ``L``
    with ``a = L @ L^H``; only that triangle of ``a`` is read. A matrix that is not
    positive definite gives NaNs (SciPy raises ``LinAlgError``).

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.cholesky(jnp.array([[4., 2.], [2., 2.]]))
    Array([[2., 1.],
           [0., 1.]], dtype=float32)
    """
    (a,) = _dec._inexact("jax.scipy.linalg.cholesky", a)
    _dec._square("cholesky", a)
    if lower:
        return lax_linalg.cholesky(a, symmetrize_input=False)
    return H(lax_linalg.cholesky(H(a), symmetrize_input=False))


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """``(c, lower)`` for :func:`cho_solve`; ``c`` is the Cholesky factor (the other
    triangle is zero, unlike SciPy's, which leaves it unspecified).

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> c, lower = sla.cho_factor(jnp.array([[4., 2.], [2., 2.]]))
    >>> lower
    False
    """
    return cholesky(a, lower=lower), lower


def _batched_rhs(name, a, b):
    """``a`` (..., n, n) and ``b`` broadcast to common batch axes, ``b`` as matrices;
    returns ``(a, b, vector)``."""
    batch, vector = _dec.solve_shapes(name, shape_of(a), shape_of(b))
    n = shape_of(a)[-1]
    if vector:
        b = st.reshape(b, (n, 1))
    k = shape_of(b)[-1]
    return _dec._bcast(a, batch + (n, n)), _dec._bcast(b, batch + (n, k)), vector


def _unvector(x, vector):
    return st.squeeze(x, (len(shape_of(x)) - 1,)) if vector else x


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """Solve ``a @ x = b`` given ``(c, lower) = cho_factor(a)``.

    ``b`` is a vector (n,) or matrices (..., n, k).

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> a = jnp.array([[4., 2.], [2., 2.]])
    >>> sla.cho_solve(sla.cho_factor(a), a @ jnp.array([1., 2.]))
    Array([1., 2.], dtype=float32)
    """
    c, lower = c_and_lower
    c, b = _dec._inexact("jax.scipy.linalg.cho_solve", c, b)
    c, b, vector = _batched_rhs("cho_solve", c, b)
    lower = bool(lower)
    y = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower,
                                    transpose_a=not lower, conjugate_a=not lower)
    x = lax_linalg.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower,
                                    conjugate_a=lower)
    return _unvector(x, vector)


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """Solve ``op(a) @ x = b`` for triangular ``a`` (..., n, n).

    ``trans`` is 0/'N' (``a``), 1/'T' (``a^T``) or 2/'C' (``a^H``); ``b`` is a vector
    (n,) or matrices (..., n, k). Only the ``lower`` (or upper) triangle is read.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.solve_triangular(jnp.array([[2., 0.], [1., 1.]]), jnp.array([2., 2.]),
    ...                      lower=True)
    Array([1., 1.], dtype=float32)
    """
    try:
        transpose_a, conjugate_a = _TRANS[trans]
    except (KeyError, TypeError):
        raise ValueError(f"Invalid 'trans' value {trans!r}") from None
    a, b = _dec._inexact("jax.scipy.linalg.solve_triangular", a, b)
    a, b, vector = _batched_rhs("solve_triangular", a, b)
    x = lax_linalg.triangular_solve(a, b, left_side=True, lower=bool(lower),
                                    transpose_a=transpose_a, conjugate_a=conjugate_a,
                                    unit_diagonal=bool(unit_diagonal))
    return _unvector(x, vector)


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """LU decomposition ``a = p @ l @ u`` of (..., m, n) matrices.

    Returns ``(p, l, u)``: permutation matrices (..., m, m), unit lower-triangular
    ``l`` (..., m, k) and upper-triangular ``u`` (..., k, n), ``k = min(m, n)``; with
    ``permute_l`` returns ``(p @ l, u)``.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> p, l, u = sla.lu(jnp.array([[1., 2.], [3., 4.]]))
    >>> u
    Array([[3.       , 4.       ],
           [0.       , 0.6666666]], dtype=float32)
    """
    (a,) = _dec._inexact("jax.scipy.linalg.lu", a)
    shape = shape_of(a)
    if len(shape) < 2:
        raise ValueError(f"lu: input must have rank >= 2, got shape {shape}")
    *batch, m, n = shape
    batch = tuple(batch)
    k = min(m, n)
    dt = get_aval(a).dtype
    lu_, _, perm = lax_linalg.lu(a)
    nd = len(shape)
    p = mT(permutation_matrix(perm, m, dt))
    l_ = ew.add(tril(st.slice(lu_, (0,) * nd, batch + (m, k)), -1), eye(batch + (m, k), dt))
    u = triu(st.slice(lu_, (0,) * nd, batch + (k, n)))
    if permute_l:
        return matmul(p, l_), u
    return p, l_, u


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """``(lu, piv)`` for :func:`lu_solve`: ``L`` below the diagonal of ``lu`` (unit
    diagonal not stored), ``U`` on and above it; row ``i`` was swapped with ``piv[i]``.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> lu, piv = sla.lu_factor(jnp.array([[1., 2.], [3., 4.]]))
    >>> piv
    Array([1, 1], dtype=int32)
    """
    (a,) = _dec._inexact("jax.scipy.linalg.lu_factor", a)
    if len(shape_of(a)) < 2:
        raise ValueError(f"lu_factor: input must have rank >= 2, got shape {shape_of(a)}")
    lu_, piv, _ = lax_linalg.lu(a)
    return lu_, piv


def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True):
    """Solve ``a @ x = b`` (``trans=0``), ``a^T x = b`` (1) or ``a^H x = b`` (2) given
    ``lu_factor(a)``.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> a = jnp.array([[1., 2.], [3., 4.]])
    >>> sla.lu_solve(sla.lu_factor(a), jnp.array([3., 7.])).round(5)  # a @ [1, 1]
    Array([1., 1.], dtype=float32)
    """
    lu_, piv = lu_and_piv
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    lu_, b = _dec._inexact("jax.scipy.linalg.lu_solve", lu_, b)
    batch, vector = _dec.solve_shapes("lu_solve", shape_of(lu_), shape_of(b))
    perm = lax_linalg.lu_pivots_to_permutation(piv, shape_of(lu_)[-1])
    return _dec._solve_with_lu(lu_, perm, b, batch, vector, trans)


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals=None, type: int = 1, check_finite: bool = True):  # noqa: A002
    """Eigenvalues ``w`` (ascending) and eigenvectors ``v`` of a Hermitian matrix,
    reading its ``lower`` (or upper) triangle; returns ``(w, v)`` or ``w`` with
    ``eigvals_only``. The generalized problem (``b``) is not supported.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.eigh(jnp.array([[2., 1.], [1., 2.]]), eigvals_only=True)
    Array([1., 3.], dtype=float32)
    """
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = _dec._inexact("jax.scipy.linalg.eigh", a)
    _dec._square("eigh", a)
    v, w = lax_linalg.eigh(a, lower=bool(lower), symmetrize_input=False)
    return w if eigvals_only else (w, v)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """Singular value decomposition: ``(u, s, vh)``, or ``s`` without ``compute_uv``.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.svd(jnp.array([[3., 0.], [0., 4.]]), compute_uv=False)
    Array([4., 3.], dtype=float32)
    """
    (a,) = _dec._inexact("jax.scipy.linalg.svd", a)
    if len(shape_of(a)) < 2:
        raise ValueError(f"svd: input must have rank >= 2, got shape {shape_of(a)}")
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """QR decomposition: ``(q, r)`` for ``mode='full'`` (q is m x m) or ``'economic'``
    (m x k), or ``(r,)`` for ``mode='r'`` (as SciPy). Pivoting is not supported.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> q, r = sla.qr(jnp.ones((3, 2)))
    >>> q.shape, r.shape
    ((3, 3), (3, 2))
    """
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    if pivoting:
        raise NotImplementedError("jax.scipy.linalg.qr: pivoting=True is not supported")
    (a,) = _dec._inexact("jax.scipy.linalg.qr", a)
    if len(shape_of(a)) < 2:
        raise ValueError(f"qr: input must have rank >= 2, got shape {shape_of(a)}")
    q, r = lax_linalg.qr(a, full_matrices=full_matrices)
    return (r,) if mode == "r" else (q, r)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """Matrix inverse (see :func:`absjit.numpy.linalg.inv`).

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.inv(jnp.array([[2., 0.], [0., 4.]]))[1, 1]
    Array(0.25, dtype=float32)
    """
    return jnp.linalg.inv(a)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """Determinant (see :func:`absjit.numpy.linalg.det`).

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.det(jnp.array([[1., 2.], [3., 4.]]))
    Array(-2., dtype=float32)
    """
    return jnp.linalg.det(a)


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
    """Solve ``a @ x = b`` for square ``a`` (..., n, n).

    ``assume_a`` is 'gen', 'sym' or 'her' (LU with partial pivoting, as JAX: the
    symmetry is not exploited) or 'pos' (Cholesky, reading the ``lower`` or upper
    triangle of ``a``). ``b`` is a vector (n,) or matrices (..., n, k); batch axes
    broadcast.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.solve(jnp.array([[4., 2.], [2., 2.]]), jnp.array([6., 4.]), assume_a="pos")
    Array([1., 1.], dtype=float32)
    """
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError("Expected assume_a to be one of ['gen', 'sym', 'her', 'pos']; got "
                         f"{assume_a!r}")
    if assume_a != "pos":
        a, b = _dec._inexact("jax.scipy.linalg.solve", a, b)
        return jnp.linalg.solve(a, b)
    a, b = _dec._inexact("jax.scipy.linalg.solve", a, b)
    a, b, vector = _batched_rhs("solve", a, b)
    return _unvector(cho_solve(cho_factor(a, lower=lower), b), vector)


def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
    """The economic QR decomposition ``a = Q @ R`` (``a`` (..., m, n), ``k = min(m, n)``)
    with ``Q`` multiplied into ``c``: ``(c @ Q, R)`` for ``mode='right'`` (``c``
    (..., p, m), or a row vector (m,)) or ``(Q @ c, R)`` for ``'left'`` (``c``
    (..., k, p), or a column vector (k,)); ``conjugate`` uses ``conj(Q)``. With a
    vector ``c`` the result is raveled to 1-D (also for batched ``a``), as JAX. ``Q`` is
    formed explicitly (JAX applies the Householder reflectors instead); the results
    agree up to rounding, and this one is differentiable (JAX's is not). Column
    pivoting is not supported.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> a = jnp.array([[1., 1.], [1., 2.], [1., 3.], [1., 4.]])
    >>> qtb, r = sla.qr_multiply(a, jnp.array([2., 4., 5., 4.]))
    >>> sla.solve_triangular(r, qtb).round(4)
    Array([2. , 0.7], dtype=float32)
    """
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise NotImplementedError("jax.scipy.linalg.qr_multiply: pivoting=True is not "
                                  "supported")
    a, c = _dec._inexact("jax.scipy.linalg.qr_multiply", a, c)
    sa, sc = shape_of(a), shape_of(c)
    if len(sa) < 2:
        raise ValueError(f"qr_multiply: a must have rank >= 2, got shape {sa}")
    m, n = sa[-2], sa[-1]
    k = min(m, n)
    q, r = lax_linalg.qr(a, full_matrices=False)
    if conjugate:
        q = jnp.conj(q)
    if mode == "right":
        rows = sc[-1] if sc else None
        if rows != m:
            raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has "
                             f"shape {sa} so Q has {m} rows, but c has shape {sc} "
                             f"(expected {m} columns).")
        out = jnp.matmul(c, q)
        return (out.ravel() if len(sc) == 1 else out), r
    rows = sc[0] if len(sc) == 1 else (sc[-2] if sc else None)
    if rows != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                         f"{sa} so Q has {k} columns, but c has shape {sc} (expected {k} "
                         "rows).")
    out = jnp.matmul(q, c)
    return (out.ravel() if len(sc) == 1 else out), r


def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range=None, tol=None, key=None):
    """Eigenvalues (ascending) and, unless ``eigvals_only``, eigenvectors of the real
    symmetric tridiagonal matrix with diagonal ``d`` (n,) and off-diagonal ``e`` (n-1,).

    ``select='a'`` gives all of them, ``'i'`` those with indices ``select_range =
    (lo, hi)`` (inclusive, Python integers). The matrix is formed and passed to
    :func:`eigh` (JAX bisects for the eigenvalues and runs inverse iteration); the
    results agree up to rounding (eigenvectors up to sign). ``tol`` and ``key`` are
    accepted and unused.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.eigh_tridiagonal(jnp.array([2., 2.]), jnp.array([1.]), eigvals_only=True)
    Array([1., 3.], dtype=float32)
    """
    from ..numpy._promote import check_arraylike
    check_arraylike("eigh_tridiagonal", d, e)
    d, e = jnp.asarray(d), jnp.asarray(e)
    if d.dtype.name not in ("float32", "float64") or e.dtype != d.dtype:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        "jax.scipy.linalg.eigh_tridiagonal, got "
                        f"{d.dtype.name} and {e.dtype.name}")
    if d.ndim != 1 or e.ndim != 1 or e.shape[0] != max(d.shape[0] - 1, 0):
        raise ValueError("eigh_tridiagonal: d must have shape (n,) and e shape (n-1,), got "
                         f"{d.shape} and {e.shape}")
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    if select not in ("a", "i"):
        raise ValueError(f"eigh_tridiagonal: select must be 'a', 'v' or 'i', got "
                         f"{select!r}")
    n = d.shape[0]
    t = jnp.diag(d) + jnp.diag(e, 1) + jnp.diag(e, -1)
    v, w = lax_linalg.eigh(t, symmetrize_input=False)
    if select == "i":
        lo, hi = (int(x) for x in select_range)
        if not 0 <= lo <= hi < n:
            raise ValueError(f"eigh_tridiagonal: select_range {select_range} is out of "
                             f"range for n={n}")
        w, v = w[lo:hi + 1], v[:, lo:hi + 1]
    return w if eigvals_only else (w, v)
