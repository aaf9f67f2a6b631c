"""``polar`` and ``expm_frechet`` (composed from the SVD and ``expm``, so they
differentiate, batch and compile with no rules of their own); ``schur`` and
``hessenberg`` (primitives run on the host); and ``sqrtm``, ``funm`` and
``solve_sylvester`` (built on the Schur form)."""
from __future__ import annotations

import numpy as np

from .. import numpy as jnp
from ..core.trace import get_aval
from ..ops.linalg_schur import hessenberg_p, schur_p
from ..ops.scan import fori_loop
from ..lax import linalg as lax_linalg
from ..numpy import _linalg_decomp as _dec
from ..numpy._creation import zeros
from ..numpy._shape import concatenate
from ..ops import elementwise as ew
from ..ops._linalg_util import H, matmul, shape_of
from ._expm import expm

__all__ = ["polar", "expm_frechet", "schur", "hessenberg", "rsf2csf", "sqrtm", "funm",
           "solve_sylvester"]


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """Polar decomposition: ``a = u @ p`` (``side='right'``) or ``a = p @ u``
    (``'left'``) with ``u`` having orthonormal columns (or rows) and ``p`` Hermitian
    positive semi-definite.

    Both methods are computed from the SVD ``a = W S Vh`` (``u = W Vh``,
    ``p = V S Vh`` or ``W S W^H``): JAX's default ``'qdwh'`` iteration gives the same
    factors up to rounding, so ``eps`` and ``max_iterations`` are accepted and unused.
    ``a`` is (..., m, n); ``u`` has its shape and ``p`` is (n, n) (right) or (m, m)
    (left).

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> u, p = sla.polar(jnp.array([[0., 2.], [3., 0.]]))
    >>> u
    Array([[0., 1.],
           [1., 0.]], dtype=float32)
    >>> p
    Array([[3., 0.],
           [0., 2.]], dtype=float32)
    """
    if side not in ("right", "left"):
        raise ValueError(f"side={side!r} is not implemented; expected 'right' or 'left'")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method!r}; expected 'qdwh' "
                         "or 'svd'")
    (a,) = _dec._inexact("jax.scipy.linalg.polar", a)
    if len(shape_of(a)) < 2:
        raise ValueError(f"polar: input must have rank >= 2, got shape {shape_of(a)}")
    w, s, vh = lax_linalg.svd(a, full_matrices=False, compute_uv=True)
    u = matmul(w, vh)
    s = ew.convert_element_type(s, get_aval(a).dtype)
    if side == "right":
        p = matmul(H(vh), s[..., :, None] * vh)
    else:
        p = matmul(w * s[..., None, :], H(w))
    return u, p


def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Fréchet derivative of ``expm`` at ``A`` in the direction ``E``.

    Returns ``(expm(A), L)``, or ``L`` alone when ``compute_expm`` is false. ``L`` is
    read from the upper-right block of ``expm([[A, E], [0, A]])`` (a matrix twice the
    size; leading axes are batch axes) rather than from the Al-Mohy–Higham recurrences
    JAX and SciPy use; the results agree up to rounding. ``method`` is accepted and ignored, as in JAX.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.expm_frechet(jnp.zeros((2, 2)), jnp.eye(2), compute_expm=False)
    Array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    A, E = _dec._inexact("jax.scipy.linalg.expm_frechet", A, E)
    sa, se = shape_of(A), shape_of(E)
    if len(sa) < 2 or sa[-1] != sa[-2]:
        raise ValueError(f"expected A to be a (batch of) square matrices, got shape {sa}")
    if sa != se:
        raise ValueError(f"expected A and E to be the same shape, got {sa} and {se}")
    n = sa[-1]
    zero = zeros(tuple(sa), get_aval(A).dtype)
    big = concatenate([concatenate([A, E], axis=-1), concatenate([zero, A], axis=-1)],
                      axis=-2)
    m = expm(big)
    L = m[..., :n, n:]
    if not compute_expm:
        return L
    return m[..., :n, :n], L


def schur(a, output="real"):
    """Schur decomposition ``a = Z @ T @ Z^H`` of square matrices (..., n, n).

    ``output='real'`` gives, for real input, a real quasi-triangular ``T`` (2 x 2 blocks
    for complex-conjugate eigenvalue pairs); ``'complex'`` an upper-triangular complex
    ``T``. Computed by LAPACK through SciPy on the host (between compiled pieces under
    ``jit``, as ``jnp.linalg.eig``); not differentiable, as in JAX.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> t, z = sla.schur(jnp.array([[1., 2.], [0., 3.]]))
    >>> jnp.diagonal(t)
    Array([1., 3.], dtype=float32)
    """
    if output not in ("real", "complex"):
        raise ValueError("Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    (a,) = _dec._inexact("jax.scipy.linalg.schur", a)
    _dec._square("schur", a)
    t, z = schur_p.bind(a, output=output)
    return t, z


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """Hessenberg form ``a = Q @ H @ Q^H`` of square matrices: ``H`` is zero below the
    first subdiagonal. Returns ``H``, or ``(H, Q)`` with ``calc_q``. Computed by LAPACK
    through SciPy on the host (as :func:`schur`); not differentiable, as in JAX.
    Integer input is promoted to the default float (JAX rejects it).

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.hessenberg(jnp.array([[1., 2.], [3., 4.]]))
    Array([[1., 2.],
           [3., 4.]], dtype=float32)
    """
    (a,) = _dec._inexact("jax.scipy.linalg.hessenberg", a)
    _dec._square("hessenberg", a)
    h, q = hessenberg_p.bind(a)
    return (h, q) if calc_q else h


def rsf2csf(T, Z, check_finite=True):
    """Convert a real Schur form ``(T, Z)`` (``a = Z T Z^T``, ``T`` quasi-triangular)
    to a complex one: each 2 x 2 diagonal block (a complex-conjugate eigenvalue pair) is
    triangularised by a complex Givens rotation applied to ``T`` from both sides and to
    ``Z`` from the right, working from the last block up. Written with lax ops (a loop
    over the subdiagonal), so it compiles and batches; the rotations pick the same
    eigenvalue of each block as SciPy, up to rounding.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> t, z = sla.rsf2csf(jnp.array([[0., 1.], [-1., 0.]]), jnp.eye(2))
    >>> jnp.diagonal(t).round(5)
    Array([0.+1.j, 0.-1.j], dtype=complex64)
    """
    T, Z = _dec._inexact("jax.scipy.linalg.rsf2csf", T, Z)
    st_, sz = shape_of(T), shape_of(Z)
    _dec._square("rsf2csf", T)
    if st_ != sz:
        raise ValueError(f"rsf2csf: T and Z must have the same shape, got {st_} and {sz}")
    ct = jnp.result_type(get_aval(T).dtype, np.complex64)
    T, Z = T.astype(ct), Z.astype(ct)
    n = st_[-1]
    eps = float(np.finfo(ct).eps)
    idx = jnp.arange(n)

    def body(k, tz):
        t, z = tz
        m = n - 1 - k                                   # m = n-1 … 1
        a, b = t[..., m - 1, m - 1], t[..., m - 1, m]
        c, d = t[..., m, m - 1], t[..., m, m]
        active = jnp.abs(c) > eps * (jnp.abs(a) + jnp.abs(d))
        # The eigenvalue of the block whose rotation brings it to the top, minus d.
        half = (a - d) / 2
        root = jnp.sqrt(half * half + b * c)
        mu = half + jnp.where(jnp.real(root) * jnp.real(half) >= 0, root, -root)
        r = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(c) ** 2)
        r = jnp.where(active & (r > 0), r, 1)
        cs, sn = mu / r, c / r
        # G: identity but [[conj(cs), conj(sn)], [-sn, cs]] at rows/cols (m-1, m).
        rm1, rm = idx == m - 1, idx == m
        g = jnp.eye(n, dtype=ct) + 0 * cs[..., None, None]
        blk = (jnp.conj(cs)[..., None, None] * (rm1[:, None] & rm1[None, :])
               + jnp.conj(sn)[..., None, None] * (rm1[:, None] & rm[None, :])
               - sn[..., None, None] * (rm[:, None] & rm1[None, :])
               + cs[..., None, None] * (rm[:, None] & rm[None, :]))
        in_blk = (rm1 | rm)[:, None] & (rm1 | rm)[None, :]
        g = jnp.where(active[..., None, None] & in_blk, blk, g)
        t = matmul(matmul(g, t), H(g))
        z = matmul(z, H(g))
        t = jnp.where(active[..., None, None] & rm[:, None] & rm1[None, :], 0, t)
        return t, z
    if n < 2:
        return T, Z
    return fori_loop(0, n - 1, body, (T, Z))


def _sqrtm_triangular(t):
    """The principal square root ``R`` of upper-triangular ``t``: ``R_ii = sqrt(t_ii)``
    and, superdiagonal by superdiagonal, ``R_ij = (t_ij - sum_{i<k<j} R_ik R_kj) /
    (R_ii + R_jj)``. With only the earlier superdiagonals filled in, ``(R @ R)_ij`` on
    superdiagonal ``d`` is exactly that sum, so each step is one matrix product."""
    n = shape_of(t)[-1]
    d0 = jnp.sqrt(jnp.diagonal(t, axis1=-2, axis2=-1))
    r0 = d0[..., :, None] * jnp.eye(n, dtype=d0.dtype)
    denom = d0[..., :, None] + d0[..., None, :]
    offset = jnp.arange(n)[None, :] - jnp.arange(n)[:, None]

    def step(d, r):
        on = offset == d
        upd = (t - matmul(r, r)) / jnp.where(on, denom, 1)
        return jnp.where(on, upd, r)
    return fori_loop(1, n, step, r0)


def sqrtm(A, blocksize=1):
    """The principal matrix square root ``X`` (``X @ X == A``) of square matrices.

    From the complex Schur form (computed on the host, see :func:`schur`) and the
    triangular recurrence, as JAX; the result is always complex, as JAX's (SciPy returns
    a real root when one exists). ``blocksize`` is accepted and ignored. A singular
    matrix with a repeated zero eigenvalue gives NaN or infinities.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.sqrtm(jnp.array([[4., 0.], [0., 9.]])).real
    Array([[2., 0.],
           [0., 3.]], dtype=float32)
    """
    if blocksize != 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    (A,) = _dec._inexact("jax.scipy.linalg.sqrtm", A)
    _dec._square("sqrtm", A)
    t, z = schur(A, output="complex")
    r = _sqrtm_triangular(t)
    return matmul(matmul(z, r), H(z))


def _parlett(t, f_diag):
    """``F = f(t)`` for upper-triangular ``t`` given ``f`` on its diagonal (Parlett's
    recurrence). ``F`` commutes with ``t``; on superdiagonal ``d``, with only the earlier
    superdiagonals of ``F`` filled in, entry ``(i, j)`` of that identity reads
    ``F_ij (t_jj - t_ii) = (t F - F t)_ij``, one pair of products per step. Where
    ``t_jj == t_ii`` the numerator is kept undivided (SciPy's convention)."""
    n = shape_of(t)[-1]
    d0 = jnp.diagonal(t, axis1=-2, axis2=-1)
    f0 = f_diag[..., :, None] * jnp.eye(n, dtype=f_diag.dtype)
    den = d0[..., None, :] - d0[..., :, None]
    offset = jnp.arange(n)[None, :] - jnp.arange(n)[:, None]

    def step(d, f):
        on = offset == d
        num = matmul(t, f) - matmul(f, t)
        safe = jnp.where(on & (den != 0), den, 1)
        return jnp.where(on, num / safe, f)
    return fori_loop(1, n, step, f0)


def funm(A, func, disp=True):
    """``func`` applied to a square matrix: ``Z f(T) Z^H`` from the complex Schur form
    ``A = Z T Z^H`` and Parlett's recurrence, ``func`` called once on the eigenvalues
    (a complex vector) and written with ``absjit.numpy``.

    Returns the (complex) result, or ``(result, errest)`` with ``disp=False``. The
    recurrence divides by eigenvalue differences, so close but distinct eigenvalues
    lose accuracy, and a repeated eigenvalue of a non-diagonalisable matrix gives a wrong
    result, as in SciPy and JAX. ``errest`` estimates the relative error from the
    smallest eigenvalue gap: ``min(1, max(eps, eps / gap * ||triu(T, 1)||_1))``, 1 for a
    repeated eigenvalue with a non-zero upper part.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.funm(jnp.array([[1., 1.], [0., 2.]]), lambda x: x * x).real
    Array([[1., 3.],
           [0., 4.]], dtype=float32)
    """
    (A,) = _dec._inexact("jax.scipy.linalg.funm", A)
    shape = shape_of(A)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise ValueError(f"expected square array_like input, got shape {shape}")
    t, z = schur(A, output="complex")
    f_diag = jnp.asarray(func(jnp.diagonal(t)))
    f_diag = f_diag.astype(get_aval(t).dtype)
    f = _parlett(t, f_diag)
    out = matmul(matmul(z, f), H(z))
    if disp:
        return out
    # The recurrence amplifies rounding by up to 1 / (smallest eigenvalue gap) times
    # the size of the strictly upper part of T; capped at 1 (a repeated eigenvalue).
    n = shape[0]
    d0 = jnp.diagonal(t)
    eps = float(np.finfo(get_aval(f).dtype).eps)
    upper = jnp.triu(jnp.ones((n, n), bool), 1)
    gaps = jnp.where(upper, jnp.abs(d0[None, :] - d0[:, None]), np.inf)
    minden = jnp.min(gaps) if n > 1 else np.inf
    scale = jnp.linalg.norm(jnp.triu(t, 1), 1)
    err = jnp.minimum(1.0, jnp.maximum(eps, eps / minden * scale))
    return out, err.astype(get_aval(scale).dtype)


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """Solve the Sylvester equation ``A @ X + X @ B = C`` for ``X`` (..., m, n).

    Bartels–Stewart: with complex Schur forms ``A = U R U^H`` and ``B = V S V^H`` the
    equation becomes ``R Y + Y S = U^H C V``, solved column by column (column ``j``
    is one triangular solve with ``R + S_jj I``), and ``X = U Y V^H``. The result is
    real for real input. Where an eigenvalue of ``A`` plus one of ``B`` is within
    ``tol`` of zero (no unique solution) the result is NaN, as JAX. ``method='eigen'``
    is accepted and computed the same way (JAX diagonalises instead, faster and less
    accurate). Batch axes of ``A``, ``B`` and ``C`` broadcast.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> A = jnp.array([[1., 2.], [3., 4.]])
    >>> B = jnp.array([[5., 6.], [7., 8.]])
    >>> X = sla.solve_sylvester(A, B, A + B)
    >>> bool(jnp.allclose(X, jnp.eye(2), atol=1e-5))
    True
    """
    if method not in ("schur", "eigen"):
        raise ValueError(f"method must be 'schur' or 'eigen', got {method!r}")
    A, B, C = _dec._inexact("jax.scipy.linalg.solve_sylvester", A, B, C)
    sa, sb, sc = shape_of(A), shape_of(B), shape_of(C)
    _dec._square("solve_sylvester", A)
    _dec._square("solve_sylvester", B)
    if len(sc) < 2 or sc[-2] != sa[-1] or sc[-1] != sb[-1]:
        raise ValueError(f"solve_sylvester: C must have shape (..., {sa[-1]}, {sb[-1]}) "
                         f"for A of shape {sa} and B of shape {sb}, got {sc}")
    m, n = sa[-1], sb[-1]
    batch = tuple(np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2]), tuple(sc[:-2])))
    A = jnp.broadcast_to(A, batch + (m, m))
    B = jnp.broadcast_to(B, batch + (n, n))
    C = jnp.broadcast_to(C, batch + (m, n))
    r, u = schur(A, output="complex")
    s_, v = schur(B, output="complex")
    f = matmul(matmul(H(u), C.astype(r.dtype)), v)
    eye_m = jnp.eye(m, dtype=r.dtype)

    def column(j, y):
        # Columns >= j of y are still zero, so y @ S[:, j] sums over k < j only.
        s_col = s_[..., :, j]
        rhs = f[..., :, j] - jnp.einsum("...ik,...k->...i", y, s_col)
        sjj = s_[..., j, j]
        lhs = r + sjj[..., None, None] * eye_m
        yj = lax_linalg.triangular_solve(lhs, rhs[..., :, None], left_side=True,
                                         lower=False)[..., 0]
        return jnp.where(jnp.arange(n) == j, yj[..., :, None], y)
    y = fori_loop(0, n, column, jnp.zeros(batch + (m, n), r.dtype))
    x = matmul(matmul(u, y), H(v))
    if get_aval(C).dtype.kind != "c":
        x = jnp.real(x)
    gap = jnp.abs(jnp.diagonal(r, axis1=-2, axis2=-1)[..., :, None]
                  + jnp.diagonal(s_, axis1=-2, axis2=-1)[..., None, :])
    bad = jnp.min(gap, axis=(-2, -1)) < tol
    return jnp.where(bad[..., None, None], np.nan, x)
