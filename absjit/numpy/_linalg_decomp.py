"""``absjit.numpy.linalg``: decompositions and the solvers built from them.

Every function maps over leading (batch) axes and promotes integer and bool input to
the default float, as JAX does. The decompositions bind the primitives of
``absjit.lax.linalg``; everything else (``solve``, ``inv``, ``det``, ``slogdet``,
``lstsq``, ``pinv``, ``matrix_rank``, ``matrix_power``) is a composition of those and
ordinary lax ops, so it differentiates, batches and compiles without rules of its own.
``solve`` alone has a JVP rule: a tangent is one more solve with the primal's
factorization (O(n^2) per right-hand side, as JAX's ``custom_linear_solve``), where
differentiating the factorization would cost O(n^3).
"""
from __future__ import annotations

import operator
from collections import namedtuple

import numpy as np

from .. import dtypes
from ..core.dims import unify_sizes
from ..core.trace import get_aval
from ..custom_derivatives import custom_jvp
from ..lax import linalg as lax_linalg
from ..ops import elementwise as ew
from ..ops import reductions as red
from ..ops import structural as st
from ..ops._linalg_util import H, diagonal, eye, full, matmul, mT, real_dtype, shape_of
from ..ops.linalg_decomp import lu_p, permute_rows, triangular_solve_p, unpermute_rows
from ..ops.linalg_spectral import eig_p
from ..ops.sorting import sort_p
from ._linalg import matmul as jmatmul
from ._promote import asarray_weak, broadcast_shapes, broadcast_to_shape, check_arraylike
from ._shape import take_along_axis

__all__ = ["cholesky", "eigh", "eigvalsh", "svd", "svdvals", "qr", "inv", "solve", "det",
           "slogdet", "lstsq", "pinv", "matrix_rank", "matrix_power", "EighResult",
           "SVDResult", "QRResult", "SlogdetResult", "eig", "eigvals", "EigResult"]

EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])


def _inexact(name, *args):
    """Arguments promoted together; integers and bools become the default float."""
    check_arraylike(name, *args)
    dt, weak = dtypes.result_type_and_weak(*args)
    if not dtypes.is_inexact(dt):
        dt = dtypes.default_float()
    return [asarray_weak(a, dt, weak) for a in args]


def _square(name, x):
    shape = shape_of(x)
    if len(shape) < 2 or not unify_sizes(shape[-1], shape[-2], name):
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got {shape}.")
    return shape


def _bcast(x, shape):
    return broadcast_to_shape(x, tuple(shape))


def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """Cholesky factor of Hermitian positive-definite matrices (``numpy.linalg``).

    Returns lower ``L`` with ``a = L @ L^H`` (``upper=True``: ``U = L^H``). By default
    the input is symmetrized first, as in JAX. A matrix that is not positive definite
    gives NaNs instead of raising.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.cholesky(jnp.array([[4., 2.], [2., 2.]]))
    Array([[2., 0.],
           [1., 1.]], dtype=float32)
    """
    (a,) = _inexact("jnp.linalg.cholesky", a)
    _square("cholesky", a)
    L = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return H(L) if upper else L


def eigh(a, UPLO=None, symmetrize_input: bool = True):
    """Eigenvalues (ascending) and eigenvectors (columns) of Hermitian matrices.

    Returns ``EighResult(eigenvalues, eigenvectors)``. ``UPLO`` ('L' or 'U') picks the
    triangle read when ``symmetrize_input=False``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.eigh(jnp.array([[2., 0.], [0., 1.]])).eigenvalues
    Array([1., 2.], dtype=float32)
    """
    if UPLO is None or UPLO == "L":
        lower = True
    elif UPLO == "U":
        lower = False
    else:
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    (a,) = _inexact("jnp.linalg.eigh", a)
    _square("eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input: bool = True):
    """Eigenvalues (ascending) of Hermitian matrices.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.eigvalsh(jnp.array([[2., 1.], [1., 2.]]))
    Array([1., 3.], dtype=float32)
    """
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index=None):
    """Singular value decomposition ``a = U @ diag(S) @ Vh``.

    Returns ``SVDResult(U, S, Vh)``, or the singular values (descending) alone when
    ``compute_uv=False``. ``hermitian=True`` computes it from ``eigh``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.svd(jnp.array([[3., 0.], [0., -4.]]), compute_uv=False)
    Array([4., 3.], dtype=float32)
    """
    (a,) = _inexact("jnp.linalg.svd", a)
    if len(shape_of(a)) < 2:
        raise ValueError(f"svd: input must have rank >= 2, got shape {shape_of(a)}")
    if hermitian:
        return _svd_hermitian(a, compute_uv, subset_by_index)
    if compute_uv:
        u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                                  subset_by_index=subset_by_index)
        return SVDResult(u, s, vh)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False,
                          subset_by_index=subset_by_index)


def _svd_hermitian(a, compute_uv, subset_by_index):
    _square("svd", a)
    v, w = lax_linalg.eigh(a, subset_by_index=subset_by_index)
    s = ew.abs(w)
    nd = len(shape_of(s))
    if not compute_uv:
        return st.rev(sort_p.bind(s, dimension=nd - 1, is_stable=True, num_keys=1)[0],
                      (nd - 1,))
    sign = ew.sign(w)
    idx = st.iota(np.int32, shape_of(s), nd - 1)
    s, idx, sign = sort_p.bind(s, idx, sign, dimension=nd - 1, is_stable=True, num_keys=1)
    s, idx, sign = (st.rev(t, (nd - 1,)) for t in (s, idx, sign))
    u = take_along_axis(v, st.expand_dims(idx, (nd - 1,)), axis=-1)
    vshape = shape_of(u)
    signs = st.broadcast_in_dim(ew.convert_element_type(sign, get_aval(u).dtype), vshape,
                                tuple(range(nd - 1)) + (nd,))
    return SVDResult(u, s, H(ew.mul(u, signs)))


def svdvals(x, /):
    """Singular values (descending).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.svdvals(jnp.eye(2))
    Array([1., 1.], dtype=float32)
    """
    return svd(x, compute_uv=False)


def qr(a, mode: str = "reduced"):
    """QR decomposition: ``QRResult(Q, R)``, or ``R`` alone for ``mode='r'``.

    ``mode='reduced'`` gives Q (..., m, k), R (..., k, n), ``k = min(m, n)``;
    ``'complete'`` gives Q (..., m, m), R (..., m, n).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.qr(jnp.ones((3, 2)), mode="r").shape
    (2, 2)
    """
    (a,) = _inexact("jnp.linalg.qr", a)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    elif mode == "raw":
        raise NotImplementedError("jnp.linalg.qr: mode='raw' (Householder reflectors) is "
                                  "not supported")
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    if len(shape_of(a)) < 2:
        raise ValueError(f"qr: input must have rank >= 2, got shape {shape_of(a)}")
    q, r = lax_linalg.qr(a, full_matrices=full_matrices)
    return r if mode == "r" else QRResult(q, r)


# ---------------------------------------------------------------------------
# Solvers on an LU factorization
# ---------------------------------------------------------------------------
def lu_solve_core(lu, perm, b, trans: int = 0):
    """Solve with ``lu, perm = lax.linalg.lu(a)[::2]``: ``a x = b`` (``trans=0``),
    ``a^T x = b`` (1) or ``a^H x = b`` (2). ``lu`` (..., n, n), ``perm`` (..., n) and
    ``b`` (..., n, k) share their batch axes."""
    solve = triangular_solve_p.bind
    if trans == 0:
        x = permute_rows(b, perm)
        x = solve(lu, x, left_side=True, lower=True, transpose_a=False, conjugate_a=False,
                  unit_diagonal=True)
        return solve(lu, x, left_side=True, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False)
    if trans not in (1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    conj = trans == 2 and get_aval(lu).dtype.kind == "c"
    x = solve(lu, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj,
              unit_diagonal=False)
    x = solve(lu, x, left_side=True, lower=True, transpose_a=True, conjugate_a=conj,
              unit_diagonal=True)
    return unpermute_rows(x, perm)


def solve_shapes(name, a_shape, b_shape):
    """``(batch, vector)``: the broadcast batch shape of ``a`` (..., n, n) and ``b``
    ((n,) or (..., n, k)), and whether ``b`` is a single vector."""
    if len(a_shape) < 2:
        raise ValueError(f"{name}: left hand array must be at least two dimensional; got "
                         f"a.shape={a_shape}")
    n = a_shape[-1]
    if not unify_sizes(a_shape[-2], n, name):
        raise ValueError(f"{name}: a must have shape [..., n, n], got a.shape={a_shape}")
    if len(b_shape) == 1:
        if not unify_sizes(b_shape[0], n, name):
            raise ValueError(f"{name}: b of shape {b_shape} does not match a of shape "
                             f"{a_shape}; b must have shape ({n},) or [..., {n}, k]")
        return tuple(a_shape[:-2]), True
    if len(b_shape) == 0:
        raise ValueError(f"{name}: b must have shape (n,) or [..., n, k], got a scalar")
    if len(a_shape) == len(b_shape) + 1 and b_shape[-1] == n and b_shape[-2] != n:
        raise ValueError(f"Invalid shapes for solve: {a_shape}, {b_shape}. A batch of "
                         "vectors must be written as matrices: use solve(a, b[..., None])"
                         "[..., 0].")
    if not unify_sizes(b_shape[-2], n, name):
        raise ValueError(f"{name}: b of shape {b_shape} does not match a of shape {a_shape}; "
                         f"b must have shape ({n},) or [..., {n}, k]")
    return broadcast_shapes(name, a_shape[:-2], b_shape[:-2]), False


def _solve_with_lu(lu, perm, b, batch, vector, trans=0):
    n = shape_of(lu)[-1]
    if vector:
        b = st.reshape(b, (n, 1))
    k = shape_of(b)[-1]
    if len(shape_of(lu)) == 2 and batch:
        # One matrix, many right-hand sides: solve them as the columns of one (n, B*k)
        # matrix instead of factoring copies of the matrix.
        nb = len(batch)
        b = _bcast(b, batch + (n, k))
        cols = st.transpose(b, (nb,) + tuple(range(nb)) + (nb + 1,))   # (n, ..., k)
        x = lu_solve_core(lu, perm, st.reshape(cols, (n, int(np.prod(batch)) * k)), trans)
        x = st.transpose(st.reshape(x, (n,) + batch + (k,)),
                         tuple(range(1, nb + 1)) + (0, nb + 1))
        return x
    lu = _bcast(lu, batch + (n, n))
    perm = _bcast(perm, batch + (n,))
    b = _bcast(b, batch + (n, k))
    x = lu_solve_core(lu, perm, b, trans)
    return st.reshape(x, batch + (n,)) if vector else x


def solve(a, b):
    """Solve ``a @ x = b`` for square ``a`` (..., n, n) by LU with partial pivoting.

    ``b`` is a vector (n,) or matrices (..., n, k); batch axes broadcast.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.solve(jnp.array([[2., 0.], [0., 4.]]), jnp.array([2., 2.]))
    Array([1. , 0.5], dtype=float32)
    """
    a, b = _inexact("jnp.linalg.solve", a, b)
    solve_shapes("solve", shape_of(a), shape_of(b))
    return _solve(a, b)


def _solve_by_lu(a, b):
    """``(x, lu, perm)``: the solution and the factorization it used."""
    batch, vector = solve_shapes("solve", shape_of(a), shape_of(b))
    lu, _, perm = lax_linalg.lu(a)
    return _solve_with_lu(lu, perm, b, batch, vector), lu, perm


@custom_jvp
def _solve(a, b):
    return _solve_by_lu(a, b)[0]


@_solve.defjvp
def _solve_jvp(primals, tangents):
    """``dx = solve(a, db - da @ x)`` with the primal's factorization: O(n^2) work per
    right-hand side (as JAX's ``custom_linear_solve``), where differentiating the LU
    factorization itself would cost O(n^3) more."""
    (a, b), (da, db) = primals, tangents
    x, lu, perm = _solve_by_lu(a, b)
    vector = len(shape_of(b)) == 1
    xm = st.expand_dims(x, (len(shape_of(x)),)) if vector else x
    dbm = st.expand_dims(db, (1,)) if vector else db
    rhs = ew.sub(*_broadcast_pair(dbm, jmatmul(da, xm)))
    batch = broadcast_shapes("solve", shape_of(lu)[:-2], shape_of(rhs)[:-2])
    dx = _solve_with_lu(lu, perm, rhs, batch, False)
    return x, st.squeeze(dx, (len(shape_of(dx)) - 1,)) if vector else dx


def _broadcast_pair(x, y):
    shape = broadcast_shapes("solve", shape_of(x), shape_of(y))
    return _bcast(x, shape), _bcast(y, shape)


def inv(a):
    """Matrix inverse (``solve(a, I)``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.inv(jnp.array([[2., 0.], [0., 4.]]))
    Array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)
    """
    (a,) = _inexact("jnp.linalg.inv", a)
    shape = _square("inv", a)
    return solve(a, eye(shape, get_aval(a).dtype))


def _lu_diag_parity(a):
    lu, piv, _ = lu_p.bind(a)
    d = diagonal(lu)
    k = shape_of(piv)
    swapped = ew.ne(piv, st.iota(np.int32, k, len(k) - 1))
    parity = red.reduce_sum(ew.convert_element_type(swapped, np.int32), (len(k) - 1,))
    return d, parity


def _parity_sign(parity, dtype):
    odd = ew.convert_element_type(ew.rem(parity, np.array(2, np.int32)), dtype)
    return ew.sub(np.array(1, dtype), ew.mul(np.array(2, dtype), odd))


def _entry(a, i, j):
    shape = shape_of(a)
    nb = len(shape) - 2
    return st.reshape(st.slice(a, (0,) * nb + (i, j), shape[:-2] + (i + 1, j + 1)),
                      shape[:-2])


def _det_small(a, n):
    """The cofactor expansion for 2x2 and 3x3 matrices, as JAX: exact for small integer
    entries, and its gradient is finite at singular matrices."""
    e = [[_entry(a, i, j) for j in range(n)] for i in range(n)]
    mul, sub = ew.mul, ew.sub
    if n == 2:
        return sub(mul(e[0][0], e[1][1]), mul(e[0][1], e[1][0]))
    m0 = sub(mul(e[1][1], e[2][2]), mul(e[1][2], e[2][1]))
    m1 = sub(mul(e[1][0], e[2][2]), mul(e[1][2], e[2][0]))
    m2 = sub(mul(e[1][0], e[2][1]), mul(e[1][1], e[2][0]))
    return ew.add(sub(mul(e[0][0], m0), mul(e[0][1], m1)), mul(e[0][2], m2))


def det(a):
    """Determinant: a cofactor expansion for 2x2 and 3x3 matrices (as JAX), otherwise
    from the LU factorization.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.det(jnp.array([[1., 2.], [3., 4.]]))
    Array(-2., dtype=float32)
    """
    (a,) = _inexact("jnp.linalg.det", a)
    shape = _square("det", a)
    dt = get_aval(a).dtype
    if shape[-1] == 0:
        return full(1, shape[:-2], dt)
    if shape[-1] in (2, 3):
        return _det_small(a, shape[-1])
    d, parity = _lu_diag_parity(a)
    nd = len(shape_of(d))
    return ew.mul(_parity_sign(parity, dt), red.reduce_prod(d, (nd - 1,)))


def slogdet(a, *, method=None):
    """Sign and natural log of the absolute value of the determinant.

    Returns ``SlogdetResult(sign, logabsdet)``; a singular matrix gives sign 0 and
    logabsdet -inf. ``method`` may be None or 'lu'.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.slogdet(jnp.array([[0., 1.], [1., 0.]])).sign
    Array(-1., dtype=float32)
    """
    if method not in (None, "lu"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                         "(`None`).")
    (a,) = _inexact("jnp.linalg.slogdet", a)
    shape = _square("slogdet", a)
    dt = get_aval(a).dtype
    rdt = real_dtype(dt)
    if shape[-1] == 0:
        return SlogdetResult(full(1, shape[:-2], dt), full(0, shape[:-2], rdt))
    d, parity = _lu_diag_parity(a)
    ax = (len(shape_of(d)) - 1,)
    is_zero = red.reduce_or(ew.eq(d, full(0, shape_of(d), dt)), ax)
    absd = ew.abs(d)
    if dt.kind == "c":
        sign = red.reduce_prod(ew.div(d, ew.convert_element_type(absd, dt)), ax)
    else:
        sign = full(1, shape_of(parity), dt)
        neg = ew.convert_element_type(ew.lt(d, full(0, shape_of(d), dt)), np.int32)
        parity = ew.add(parity, red.reduce_sum(neg, ax))
    sign = ew.select(is_zero, full(0, shape_of(parity), dt),
                     ew.mul(sign, _parity_sign(parity, dt)))
    logdet = ew.select(is_zero, full(-np.inf, shape_of(parity), rdt),
                       red.reduce_sum(ew.log(absd), ax))
    return SlogdetResult(sign, logdet)


def _finfo_eps(dt):
    return float(np.finfo(real_dtype(dt)).eps)


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """Least-squares solution of ``a @ x = b`` for 2-D ``a`` (m, n), via the SVD.

    Returns ``(x, resid, rank, s)`` like JAX: singular values below
    ``rcond * s[0]`` (default ``eps * max(m, n)``; a negative ``rcond`` means machine
    epsilon) are treated as zero; ``resid`` is the squared residual norm per column of
    ``b`` (empty when ``numpy_resid=True`` and the problem is rank-deficient or not
    overdetermined, as NumPy).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> x, resid, rank, s = jnp.linalg.lstsq(jnp.array([[1., 0.], [0., 1.], [0., 0.]]),
    ...                                      jnp.array([1., 2., 3.]))
    >>> x
    Array([1., 2.], dtype=float32)
    """
    a, b = _inexact("jnp.linalg.lstsq", a, b)
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) != 2:
        raise TypeError(f"{len(sa)}-dimensional array given. Array must be two-dimensional")
    if len(sb) not in (1, 2):
        raise TypeError(f"{len(sb)}-dimensional array given. Array must be one or "
                        "two-dimensional")
    if not unify_sizes(sa[0], sb[0], "jnp.linalg.lstsq"):
        raise ValueError("Leading dimensions of input arrays must match")
    vector = len(sb) == 1
    if vector:
        b = st.reshape(b, (sb[0], 1))
    m, n = sa
    dt = get_aval(a).dtype
    rdt = real_dtype(dt)
    if m == 0 or n == 0:
        s = full(0, (0,), rdt)
        rank = np.array(0, np.int32)
        x = full(0, (n, shape_of(b)[1]), dt)
    else:
        u, s, vt = lax_linalg.svd(a, full_matrices=False)
        if rcond is None:
            rc = np.array(_finfo_eps(dt) * max(m, n), rdt)
        elif isinstance(rcond, (int, float)):
            rc = np.array(_finfo_eps(dt) if rcond < 0 else rcond, rdt)
        else:
            rc = asarray_weak(rcond, rdt, False)
            rc = ew.select(ew.lt(rc, np.array(0, rdt)), np.array(_finfo_eps(dt), rdt), rc)
        k = shape_of(s)[0]
        s0 = st.broadcast_in_dim(st.slice(s, (0,), (1,)), (k,), (0,))
        cutoff = ew.mul(st.broadcast_in_dim(rc, (k,), ()), s0)
        mask = ew.bitwise_and(ew.gt(s, full(0, (k,), rdt)), ew.ge(s, cutoff))
        rank = red.reduce_sum(ew.convert_element_type(mask, dtypes.canonicalize_dtype(
            np.dtype(np.int64))), (0,))
        safe_s = ew.select(mask, s, full(1, (k,), rdt))
        s_inv = ew.select(mask, ew.div(full(1, (k,), rdt), safe_s), full(0, (k,), rdt))
        s_inv = ew.convert_element_type(s_inv, dt)
        utb = jmatmul(H(u), b)
        scaled = ew.mul(st.broadcast_in_dim(s_inv, shape_of(utb), (0,)), utb)
        x = jmatmul(H(vt), scaled)
    if numpy_resid and (int(rank) < n or m <= n):
        resid = full(0, (0,), rdt)
    else:
        r = ew.sub(b, jmatmul(a, x))
        resid = red.reduce_sum(_abs2(r), (0,))
    if vector:
        x = st.reshape(x, (n,))
    return x, resid, rank, s


def _abs2(r):
    if get_aval(r).dtype.kind == "c":
        return ew.add(ew.mul(ew.real(r), ew.real(r)), ew.mul(ew.imag(r), ew.imag(r)))
    return ew.mul(r, r)


def pinv(a, rtol=None, hermitian: bool = False, *, rcond=None):
    """Moore-Penrose pseudo-inverse via the SVD; singular values at or below
    ``rtol * max(s)`` (default ``10 * max(m, n) * eps``) are dropped.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.pinv(jnp.array([[2., 0.], [0., 0.]]))
    Array([[0.5, 0. ],
           [0. , 0. ]], dtype=float32)
    """
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    (a,) = _inexact("jnp.linalg.pinv", a)
    shape = shape_of(a)
    if len(shape) < 2:
        raise ValueError(f"pinv: input must have rank >= 2, got shape {shape}")
    *batch, m, n = shape
    batch = tuple(batch)
    dt = get_aval(a).dtype
    rdt = real_dtype(dt)
    if m == 0 or n == 0:
        return full(0, batch + (n, m), dt)
    if rtol is None:
        rtol = np.array(10.0 * max(m, n) * _finfo_eps(dt), rdt)
    else:
        rtol = asarray_weak(rtol, rdt, False)
    u, s, vh = svd(ew.conj(a) if dt.kind == "c" else a, full_matrices=False,
                   hermitian=hermitian)
    k = min(m, n)
    sshape = shape_of(s)
    nb = len(sshape) - 1
    rt = broadcast_to_shape(rtol, batch) if shape_of(rtol) else rtol
    rt = st.broadcast_in_dim(rt, sshape, tuple(range(len(shape_of(rt)))))
    smax = red.reduce_max(s, (nb,))
    cutoff = ew.mul(rt, st.broadcast_in_dim(smax, sshape, tuple(range(nb))))
    s = ew.select(ew.gt(s, cutoff), s, full(np.inf, sshape, rdt))
    s = ew.convert_element_type(s, dt)
    ut = mT(u)                         # (..., k, m)
    scaled = ew.div(ut, st.broadcast_in_dim(s, batch + (k, m), tuple(range(nb + 1))))
    return matmul(mT(vh), scaled)


def matrix_rank(M, rtol=None, *, hermitian: bool = False, tol=None):
    """Number of singular values above ``rtol`` (default ``max(s) * max(m, n) * eps``;
    note that an explicit ``rtol`` is absolute here, as in JAX).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.matrix_rank(jnp.array([[1., 2.], [2., 4.]]))
    Array(1, dtype=int32)
    """
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    (M,) = _inexact("jnp.linalg.matrix_rank", M)
    shape = shape_of(M)
    idt = dtypes.canonicalize_dtype(np.dtype(np.int64))
    if len(shape) < 2:
        nz = red.reduce_or(ew.ne(M, full(0, shape, get_aval(M).dtype)),
                           tuple(range(len(shape))))
        return ew.convert_element_type(nz, np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    sshape = shape_of(s)
    nb = len(sshape) - 1
    rdt = get_aval(s).dtype
    if rtol is None:
        smax = red.reduce_max(s, (nb,)) if sshape[-1] else full(0, sshape[:-1], rdt)
        tol_v = ew.mul(smax, np.array(max(shape[-2:]) * np.finfo(rdt).eps, rdt))
    else:
        tol_v = asarray_weak(rtol, rdt, False)
        tol_v = broadcast_to_shape(tol_v, sshape[:-1]) if shape_of(tol_v) != sshape[:-1] \
            else tol_v
    tol_b = st.broadcast_in_dim(tol_v, sshape, tuple(range(nb)))
    above = ew.convert_element_type(ew.gt(s, tol_b), idt)
    return red.reduce_sum(above, (nb,))


def matrix_power(a, n):
    """``a`` raised to the integer power ``n`` by repeated squaring (``n < 0`` inverts
    first; ``n == 0`` gives identity matrices).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.matrix_power(jnp.array([[1., 1.], [0., 1.]]), 3)
    Array([[1., 3.],
           [0., 1.]], dtype=float32)
    """
    check_arraylike("jnp.linalg.matrix_power", a)
    shape = tuple(np.shape(a))
    if len(shape) < 2:
        raise TypeError(f"{len(shape)}-dimensional array given. Array must be at least "
                        "two-dimensional")
    if not unify_sizes(shape[-2], shape[-1], "jnp.linalg.matrix_power"):
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    dt, weak = dtypes.result_type_and_weak(a)
    a = asarray_weak(a, dt, weak)
    if n == 0:
        return eye(shape, dt)
    if n < 0:
        a = inv(a)
        n = -n
    z = result = None
    while n > 0:
        z = a if z is None else jmatmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else jmatmul(result, z)
    return result


def eig(a):
    """Eigenvalues and right eigenvectors (unit-norm columns) of general square matrices.

    Both are complex whatever the input, as in JAX, and not sorted. Returns
    ``EigResult(eigenvalues, eigenvectors)``. Derivatives of the eigenvectors are not
    implemented (as in JAX); those of the eigenvalues are, through ``eigvals``. On
    every backend it is LAPACK's ``geev`` (through NumPy, between compiled pieces on the
    ``cpu`` backend).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.eig(jnp.array([[2., 0.], [0., 3.]])).eigenvalues
    Array([2.+0.j, 3.+0.j], dtype=complex64)
    """
    (a,) = _inexact("jnp.linalg.eig", a)
    _square("eig", a)
    w, v = eig_p.bind(a, compute_eigenvectors=True)
    return EigResult(w, v)


def eigvals(a):
    """Eigenvalues of general square matrices (complex, not sorted; differentiable).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.linalg.eigvals(jnp.array([[0., -1.], [1., 0.]]))
    Array([0.+1.j, 0.-1.j], dtype=complex64)
    """
    (a,) = _inexact("jnp.linalg.eigvals", a)
    _square("eigvals", a)
    (w,) = eig_p.bind(a, compute_eigenvectors=False)
    return w
