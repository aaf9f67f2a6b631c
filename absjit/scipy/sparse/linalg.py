"""``absjit.scipy.sparse.linalg``: Krylov solvers for ``A x = b`` (``jax.scipy.sparse.linalg``).

``A`` is a square matrix, an object with ``@``, or a linear function; ``b`` (and ``x0``)
any pytree of arrays, the solution has its structure. Each solver iterates in
``absjit.lax.while_loop``s, so it runs eagerly, under ``jit`` and under ``vmap`` alike,
and returns ``(x, info)``. The iteration stops once the residual norm is at most
``max(tol * norm(b), atol)`` or after ``maxiter`` steps (``10 * b.size`` by default).

Derivatives are implicit, through :func:`absjit.lax.custom_linear_solve`: a tangent or
cotangent of the solution is itself the solution of a linear system (the transposed one
for reverse mode) found by the same solver, so they are as accurate as that solve
converges; the arrays ``A`` closes over are differentiable inputs.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from ... import lax, tree_util
from ... import numpy as jnp
from ...array import Array
from ...core.trace import Tracer
from ..linalg import solve as _dense_solve, solve_triangular

__all__ = ["cg", "gmres", "bicgstab"]

_leaves = tree_util.tree_leaves
_map = tree_util.tree_map


def _identity(x):
    return x


# -- vector arithmetic on pytrees --------------------------------------------------------
def _add(x, y):
    return _map(operator.add, x, y)


def _sub(x, y):
    return _map(operator.sub, x, y)


def _scale(alpha, x):
    return _map(lambda leaf: alpha * leaf, x)


def _vdot(x, y):
    """``sum(conj(x) * y)`` over every leaf."""
    return sum(jnp.vdot(a, b) for a, b in zip(_leaves(x), _leaves(y)))


def _vdot_real(x, y):
    """The real part of :func:`_vdot`, computed without the imaginary cross terms."""
    total = 0
    for a, b in zip(_leaves(x), _leaves(y)):
        total = total + jnp.vdot(jnp.real(a), jnp.real(b))
        if jnp.iscomplexobj(a) or jnp.iscomplexobj(b):
            total = total + jnp.vdot(jnp.imag(a), jnp.imag(b))
    return total


def _norm(x):
    return jnp.sqrt(_vdot_real(x, x))


def _result_dtype(tree):
    return jnp.result_type(*_leaves(tree))


def _as_operator(a, what="linear operator"):
    """A function computing ``a @ x`` (``a`` a square matrix or an object with ``@``),
    or ``a`` itself when it is callable."""
    if callable(a):
        return a
    arrays = (np.ndarray, Array, Tracer)
    if isinstance(a, arrays) or hasattr(a, "__matmul__"):
        shape = getattr(a, "shape", None)
        if shape is None or len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"{what} must be a square matrix, but has shape: {shape}")
        if isinstance(a, arrays):
            return functools.partial(jnp.dot, a)
        return functools.partial(operator.matmul, a)
    raise TypeError(f"{what} must be either a function or ndarray: {a!r}")


# -- conjugate gradients and BiCGSTAB -------------------------------------------------------
def _cg_solve(A, b, x0, *, maxiter, tol, atol, M):
    limit2 = jnp.maximum(jnp.square(tol) * _vdot_real(b, b), jnp.square(atol))
    r = _sub(b, A(x0))
    z = M(r)
    dtype = _result_dtype(z)
    rz = _vdot_real(r, z).astype(dtype)

    def going(state):
        _, r, rz, _, k = state
        # Unpreconditioned, r·z is the squared residual norm already.
        rr = jnp.real(rz) if M is _identity else _vdot_real(r, r)
        return (rr > limit2) & (k < maxiter)

    def step(state):
        x, r, rz, p, k = state
        ap = A(p)
        alpha = rz / _vdot_real(p, ap).astype(dtype)
        x = _add(x, _scale(alpha, p))
        r = _sub(r, _scale(alpha, ap))
        z = M(r)
        rz_new = _vdot_real(r, z).astype(dtype)
        p = _add(z, _scale(rz_new / rz, p))
        return x, r, rz_new, p, k + 1

    x, *_ = lax.while_loop(going, step, (x0, r, rz, z, 0))
    return x


def _bicgstab_solve(A, b, x0, *, maxiter, tol, atol, M):
    limit2 = jnp.maximum(jnp.square(tol) * _vdot_real(b, b), jnp.square(atol))
    r = _sub(b, A(x0))
    one = jnp.asarray(1, _result_dtype(b))

    def going(state):
        _, r, *_, k = state
        # k < 0 marks a breakdown (rho, alpha or omega became 0).
        return (_vdot_real(r, r) > limit2) & (k < maxiter) & (k >= 0)

    def step(state):
        x, r, r_hat, alpha, omega, rho, p, v, k = state
        rho_new = _vdot(r_hat, r)
        beta = (rho_new / rho) * (alpha / omega)
        p = _add(r, _scale(beta, _sub(p, _scale(omega, v))))
        p_hat = M(p)
        v = A(p_hat)
        alpha = rho_new / _vdot(r_hat, v)
        s = _sub(r, _scale(alpha, v))
        # Converged half way: the second half-step (t, omega) is skipped.
        done = _vdot_real(s, s) < limit2
        s_hat = M(s)
        t = A(s_hat)
        omega = _vdot(t, s) / _vdot(t, t)
        x_half = _add(x, _scale(alpha, p_hat))
        x = _map(lambda h, sh: jnp.where(done, h, h + omega * sh), x_half, s_hat)
        r = _map(lambda s_, t_: jnp.where(done, s_, s_ - omega * t_), s, t)
        k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = jnp.where(rho_new == 0, -10, k)
        return x, r, r_hat, alpha, omega, rho_new, p, v, k

    state = (x0, r, r, one, one, one, r, r, 0)
    x, *_ = lax.while_loop(going, step, state)
    return x


def _shapes(tree):
    return [np.shape(leaf) for leaf in _leaves(tree)]


def _prepare(A, b, x0, maxiter, M):
    """Arrays for ``b`` and ``x0``, the operators, and the default ``maxiter``."""
    b = _map(jnp.asarray, b)
    x0 = _map(jnp.zeros_like, b) if x0 is None else _map(jnp.asarray, x0)
    if tree_util.tree_structure(x0) != tree_util.tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: "
                         f"{tree_util.tree_structure(x0)} vs {tree_util.tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs "
                         f"{_shapes(b)}")
    size = sum(int(np.prod(np.shape(leaf))) for leaf in _leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # SciPy's default
    A = _as_operator(A)
    M = _identity if M is None else _as_operator(M, "preconditioner")
    return A, b, x0, maxiter, M, size


def _krylov(method, A, b, x0, tol, atol, maxiter, M, symmetric):
    A, b, x0, maxiter, M, _ = _prepare(A, b, x0, maxiter, M)
    solve = functools.partial(method, x0=x0, maxiter=maxiter, tol=tol, atol=atol, M=M)
    # The transposed system (reverse mode) is solved by the same method, with the same
    # x0 and preconditioner.
    symmetric = symmetric and not any(jnp.iscomplexobj(leaf) for leaf in _leaves(b))
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve,
                                symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve ``A x = b`` by conjugate gradients, for a Hermitian positive definite ``A``.

    Parameters
    ----------
    A : array, callable or object with ``@``
        The matrix, or a function computing ``A(x)`` with ``x``'s structure and shapes.
    b : array or pytree of arrays
        The right-hand side.
    x0 : array or pytree of arrays, optional
        The first guess (zeros by default), structured like ``b``.
    tol, atol : float
        Stop once ``norm(b - A x) <= max(tol * norm(b), atol)``.
    maxiter : int, optional
        At most this many iterations (``10 * b.size`` by default).
    M : array, callable or object with ``@``, optional
        A preconditioner approximating the inverse of ``A``.

    Returns
    -------
    x : array or pytree of arrays
        The solution, structured like ``b``.
    info : None
        No convergence information, as in JAX.

    Derivatives solve another system with ``cg`` (``A`` is symmetric, so reverse mode
    reuses ``A`` itself).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.scipy.sparse.linalg import cg
    >>> a = jnp.array([[4.0, 1.0], [1.0, 3.0]])
    >>> x, info = cg(a, jnp.array([1.0, 2.0]))
    >>> x.round(4), info
    (Array([0.0909, 0.6364], dtype=float32), None)
    """
    return _krylov(_cg_solve, A, b, x0, tol, atol, maxiter, M, symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve ``A x = b`` by the biconjugate gradient stabilised method, for any square
    ``A``. Arguments and results as for :func:`cg`; derivatives solve the transposed
    system (for reverse mode) with ``bicgstab`` too.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.scipy.sparse.linalg import bicgstab
    >>> a = jnp.array([[3.0, 1.0], [-1.0, 2.0]])
    >>> x, info = bicgstab(a, jnp.array([5.0, 3.0]))
    >>> x.round(4)
    Array([1., 2.], dtype=float32)
    """
    return _krylov(_bicgstab_solve, A, b, x0, tol, atol, maxiter, M, symmetric=False)


# -- GMRES -----------------------------------------------------------------------------------
def _normalized(x, thresh=None):
    """``(x / norm(x), norm(x))``, or zeros and 0 when the norm is at most ``thresh``
    (by default the machine epsilon of x's type)."""
    norm = _norm(x)
    if thresh is None:
        thresh = jnp.finfo(norm.dtype).eps
    big = norm > thresh
    dtype = _result_dtype(x)
    scale = norm.astype(dtype)
    unit = _map(lambda leaf: jnp.where(big, leaf / scale, jnp.zeros_like(leaf)), x)
    return unit, jnp.where(big, norm, jnp.zeros_like(norm))


def _project(V, w):
    """``V^H w``: the overlaps of ``w`` with each basis vector (the last axis of V)."""
    total = 0
    for basis, leaf in zip(_leaves(V), _leaves(w)):
        axes = list(range(leaf.ndim))
        total = total + jnp.tensordot(jnp.conj(basis), leaf, axes=(axes, axes))
    return total


def _combine(V, h):
    """``V h``: the combination of the basis vectors with coefficients ``h``."""
    return _map(lambda basis: jnp.tensordot(basis, h, axes=1), V)


def _arnoldi_step(k, A, M, V, H):
    """Extend the orthonormal basis ``V`` (vectors on the last axis) by the part of
    ``M(A(V[k]))`` orthogonal to ``V[:k+1]``, recording its coordinates in row ``k`` of
    ``H``. Classical Gram-Schmidt applied twice, which keeps the basis orthogonal to
    working precision. Returns ``(V, H, breakdown)``; ``breakdown`` when the new vector
    lies in the span (the Krylov space is invariant)."""
    dtype = _result_dtype(V)
    w = M(A(_map(lambda basis: basis[..., k], V)))
    w_norm = _norm(w)
    h = jnp.zeros(H.shape[1], dtype)
    for _ in range(2):
        overlaps = _project(V, w)
        w = _sub(w, _combine(V, overlaps))
        h = h + overlaps
    unit, norm = _normalized(w, thresh=jnp.finfo(dtype).eps * w_norm)
    V = _map(lambda basis, u: basis.at[..., k + 1].set(u), V, unit)
    H = H.at[k, :].set(h.at[k + 1].set(norm.astype(dtype)))
    return V, H, norm == 0


def _first_basis(unit_residual, restart):
    return _map(lambda leaf: jnp.concatenate(
        [leaf[..., None], jnp.zeros(leaf.shape + (restart,), leaf.dtype)], axis=-1),
        unit_residual)


def _givens(a, b):
    """``(c, s)`` with ``conj(c) a - conj(s) b = r`` and ``s a + c b = 0``."""
    r = jnp.hypot(jnp.abs(a), jnp.abs(b)).astype(a.dtype)
    zero = r == 0
    safe = jnp.where(zero, jnp.ones_like(r), r)
    c = jnp.where(zero, jnp.ones_like(a), a / safe)
    s = jnp.where(zero, jnp.zeros_like(a), -b / safe)
    return c, s


def _rotate(v, i, c, s):
    """Apply the rotation ``(c, s)`` to entries ``i`` and ``i + 1`` of ``v``."""
    x, y = v[i], v[i + 1]
    return v.at[i].set(jnp.conj(c) * x - jnp.conj(s) * y).at[i + 1].set(s * x + c * y)


def _restart_incremental(A, M, b, x0, unit_residual, residual_norm, ptol, restart):
    """One GMRES cycle that keeps the QR factorisation of the Hessenberg matrix up to
    date with Givens rotations, so it knows its residual after every step and stops as
    soon as it is below ``ptol``."""
    dtype = _result_dtype(b)
    V = _first_basis(unit_residual, restart)
    R = jnp.eye(restart, restart + 1, dtype=dtype)
    rotations = jnp.zeros((restart, 2), dtype)
    g = jnp.zeros(restart + 1, dtype).at[0].set(residual_norm.astype(dtype))

    def going(state):
        k, err = state[0], state[1]
        return (k < restart) & (err > ptol)

    def step(state):
        k, _, V, R, g, rotations = state
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row = lax.fori_loop(0, k, lambda i, row: _rotate(row, i, *rotations[i]), H[k, :])
        c, s = _givens(row[k], row[k + 1])
        rotations = rotations.at[k].set(jnp.stack([c, s]))
        R = R.at[k, :].set(_rotate(row, k, c, s))
        g = _rotate(g, k, c, s)
        return k + 1, jnp.abs(g[k + 1]), V, R, g, rotations

    state = (0, residual_norm, V, R, g, rotations)
    k, _, V, R, g, _ = lax.while_loop(going, step, state)
    # Rows of R past step k are still the identity: they must not pick up g[k] (the
    # residual estimate), so the right-hand side stops at k.
    rhs = jnp.where(jnp.arange(restart) < k, g[:-1], jnp.zeros_like(g[:-1]))
    y = solve_triangular(R[:, :-1].T, rhs)
    return _finish_restart(A, M, b, x0, V, y)


def _restart_batched(A, M, b, x0, unit_residual, residual_norm, ptol, restart):
    """One GMRES cycle that builds the whole Krylov basis (stopping only at a
    breakdown) and then solves the small least-squares problem by its normal
    equations."""
    dtype = _result_dtype(b)
    V = _first_basis(unit_residual, restart)
    H = jnp.eye(restart, restart + 1, dtype=dtype)

    def going(state):
        return (state[3] < restart) & ~state[2]

    def step(state):
        V, H, _, k = state
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(going, step, (V, H, False, 0))
    g = jnp.zeros(restart + 1, dtype).at[0].set(residual_norm.astype(dtype))
    a = H.T
    ah = jnp.conj(H)
    y = _dense_solve(ah @ a, ah @ g, assume_a="pos")
    return _finish_restart(A, M, b, x0, V, y)


def _finish_restart(A, M, b, x0, V, y):
    x = _add(x0, _combine(_map(lambda basis: basis[..., :-1], V), y))
    unit, norm = _normalized(M(_sub(b, A(x))))
    return x, unit, norm


def _gmres_solve(A, b, x0, *, atol, ptol, restart, maxiter, M, cycle):
    unit, norm = _normalized(M(_sub(b, A(x0))))

    def going(state):
        return (state[1] < maxiter) & (state[3] > atol)

    def step(state):
        x, k, unit, norm = state
        x, unit, norm = cycle(A, M, b, x, unit, norm, ptol, restart)
        return x, k + 1, unit, norm

    x, *_ = lax.while_loop(going, step, (x0, 0, unit, norm))
    return x


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solve ``A x = b`` by restarted GMRES, for any square ``A``.

    Each cycle minimises the (preconditioned) residual over a Krylov space of dimension
    ``restart``, starting from the previous cycle's solution; at most ``maxiter`` cycles
    (``10 * b.size`` by default) run. Other arguments as for :func:`cg`.

    Parameters
    ----------
    restart : int
        The Krylov space's dimension per cycle (at most ``b.size``).
    solve_method : {"batched", "incremental"}
        ``"incremental"`` updates a QR factorisation by Givens rotations at every step
        and ends a cycle as soon as its residual is small enough; ``"batched"`` builds
        the whole space and then solves one small least-squares problem.

    Returns
    -------
    x : array or pytree of arrays
        The solution, structured like ``b``.
    info : Array
        0, or -1 when the solution holds NaNs (as JAX reports it).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.scipy.sparse.linalg import gmres
    >>> a = jnp.array([[3.0, 1.0], [-1.0, 2.0]])
    >>> x, info = gmres(a, jnp.array([5.0, 3.0]), solve_method="incremental")
    >>> x.round(4), info
    (Array([1., 2.], dtype=float32), Array(0, dtype=int32, weak_type=True))
    """
    cycles = {"incremental": _restart_incremental, "batched": _restart_batched}
    if solve_method not in cycles:
        raise ValueError(f"invalid solve_method {solve_method}, must be either "
                         "'incremental' or 'batched'")
    A, b, x0, maxiter, M, size = _prepare(A, b, x0, maxiter, M)
    restart = min(restart, size)
    b_norm = _norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    # Within a cycle the preconditioned residual is what GMRES sees.
    ptol = _norm(M(b)) * jnp.minimum(1.0, atol / b_norm)
    solve = functools.partial(_gmres_solve, x0=x0, atol=atol, ptol=ptol, restart=restart,
                              maxiter=maxiter, M=M, cycle=cycles[solve_method])
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    info = jnp.where(jnp.isnan(_norm(x)), -1, 0)
    return x, info
