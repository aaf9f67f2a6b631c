"""``absjit.scipy.optimize``: unconstrained minimisation by BFGS (``jax.scipy.optimize``).

The iteration is an ``absjit.lax.while_loop`` whose body takes one BFGS step with a
strong-Wolfe line search (itself a ``while_loop``), and gradients come from
``absjit.value_and_grad``, so :func:`minimize` runs eagerly, under ``jit`` and under
``vmap`` alike.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import dtypes, lax
from .. import numpy as jnp
from ..api_transforms import value_and_grad

__all__ = ["minimize", "OptimizeResults"]


class OptimizeResults(NamedTuple):
    """What :func:`minimize` returns.

    Attributes
    ----------
    x : Array
        The final point.
    success : Array
        Whether the gradient norm fell below ``gtol`` without a line-search failure.
    status : Array
        0 converged, 1 the iteration limit was reached, 3 the line search failed.
    fun : Array
        The objective at ``x``.
    jac : Array
        The gradient at ``x``.
    hess_inv : Array
        The BFGS estimate of the inverse Hessian.
    nfev : Array
        Evaluations of the objective.
    njev : Array
        Evaluations of the gradient (equal to ``nfev``: each evaluation gives both).
    nit : Array
        Iterations taken.
    """
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


class _Search(NamedTuple):
    i: Any
    done: Any
    zoom: Any
    a_prev: Any
    f_prev: Any
    d_prev: Any
    a_next: Any
    a_lo: Any
    f_lo: Any
    d_lo: Any
    g_lo: Any
    a_hi: Any
    f_hi: Any
    d_hi: Any
    a_star: Any
    f_star: Any
    g_star: Any


def _trial_in_bracket(s):
    """The minimiser of the quadratic through ``f_lo``, ``d_lo`` and ``f_hi``, kept at
    least a tenth of the bracket away from its ends (else the midpoint)."""
    width = s.a_hi - s.a_lo
    denom = 2 * (s.f_hi - s.f_lo - s.d_lo * width)
    step = jnp.where(denom != 0, -s.d_lo * width * width / jnp.where(denom != 0, denom, 1),
                     0.5 * width)
    a = s.a_lo + step
    lo, hi = jnp.minimum(s.a_lo, s.a_hi), jnp.maximum(s.a_lo, s.a_hi)
    margin = 0.1 * (hi - lo)
    ok = jnp.isfinite(a) & (a > lo + margin) & (a < hi - margin)
    return jnp.where(ok, a, s.a_lo + 0.5 * width)


def _line_search(value_and_grad_fn, x, p, f0, g0, maxiter, c1=1e-4, c2=0.9):
    """A step ``a`` along ``p`` meeting the strong Wolfe conditions.

    One objective evaluation per iteration: while bracketing, the trial step doubles;
    once a bracket ``[a_lo, a_hi]`` is known, trials come from :func:`_trial_in_bracket`.
    Returns ``(a, f, g, failed, evaluations)``; on failure ``a`` is the best point with
    sufficient decrease found (possibly 0).
    """
    d0 = jnp.dot(g0, p)
    zero = jnp.zeros_like(f0)

    def cond(s):
        return (~s.done) & (s.i < maxiter)

    def body(s):
        a = jnp.where(s.zoom, _trial_in_bracket(s), s.a_next)
        f, g = value_and_grad_fn(x + a * p)
        d = jnp.dot(g, p)
        armijo_fails = (f > f0 + c1 * a * d0) | ~jnp.isfinite(f)
        curvature_ok = jnp.abs(d) <= -c2 * d0
        # Bracketing phase.
        b_hi = armijo_fails | ((s.i > 0) & (f >= s.f_prev))
        b_done = ~b_hi & curvature_ok
        b_lo_new = ~b_hi & ~b_done & (d >= 0)
        # Zoom phase.
        z_hi = armijo_fails | (f >= s.f_lo)
        z_done = ~z_hi & curvature_ok
        z_flip = ~z_hi & ~z_done & (d * (s.a_hi - s.a_lo) >= 0)

        zoom, done = s.zoom, s.done
        new_done = jnp.where(zoom, z_done, b_done)
        # New bracket ends.
        # While bracketing, a_lo tracks the last trial with sufficient decrease (a_prev).
        lo_from_t = jnp.where(zoom, ~z_hi, ~b_hi & ~b_done)    # the trial becomes a_lo
        lo_from_prev = ~zoom & b_hi                            # a_prev becomes a_lo
        # (a_prev is then a_lo already: a_lo's gradient g_lo is the one zooming needs.)
        hi_from_t = jnp.where(zoom, z_hi, b_hi)                # the trial becomes a_hi
        hi_from_prev = ~zoom & b_lo_new                        # a_prev becomes a_hi
        hi_from_lo = zoom & z_flip                             # old a_lo becomes a_hi

        def pick(t_val, prev_val, old, from_t, from_prev):
            return jnp.where(from_t, t_val, jnp.where(from_prev, prev_val, old))

        a_hi = pick(a, s.a_prev, jnp.where(hi_from_lo, s.a_lo, s.a_hi), hi_from_t, hi_from_prev)
        f_hi = pick(f, s.f_prev, jnp.where(hi_from_lo, s.f_lo, s.f_hi), hi_from_t, hi_from_prev)
        d_hi = pick(d, s.d_prev, jnp.where(hi_from_lo, s.d_lo, s.d_hi), hi_from_t, hi_from_prev)
        a_lo = pick(a, s.a_prev, s.a_lo, lo_from_t, lo_from_prev)
        f_lo = pick(f, s.f_prev, s.f_lo, lo_from_t, lo_from_prev)
        d_lo = pick(d, s.d_prev, s.d_lo, lo_from_t, lo_from_prev)
        g_lo = jnp.where(lo_from_t, g, s.g_lo)
        return _Search(
            i=s.i + 1, done=done | new_done, zoom=zoom | (~new_done & (b_hi | b_lo_new)),
            a_prev=jnp.where(zoom, s.a_prev, a), f_prev=jnp.where(zoom, s.f_prev, f),
            d_prev=jnp.where(zoom, s.d_prev, d), a_next=jnp.where(zoom, s.a_next, 2 * a),
            a_lo=a_lo, f_lo=f_lo, d_lo=d_lo, g_lo=g_lo, a_hi=a_hi, f_hi=f_hi, d_hi=d_hi,
            a_star=jnp.where(new_done, a, s.a_star), f_star=jnp.where(new_done, f, s.f_star),
            g_star=jnp.where(new_done, g, s.g_star))

    one = jnp.ones_like(f0)
    start = _Search(i=jnp.asarray(0), done=jnp.asarray(False),
                    zoom=jnp.asarray(False), a_prev=zero, f_prev=f0, d_prev=d0, a_next=one,
                    a_lo=zero, f_lo=f0, d_lo=d0, g_lo=g0, a_hi=zero, f_hi=f0, d_hi=d0,
                    a_star=zero, f_star=f0, g_star=g0)
    s = lax.while_loop(cond, body, start)
    # On failure fall back to a_lo: the lowest point found with sufficient decrease.
    a = jnp.where(s.done, s.a_star, s.a_lo)
    f = jnp.where(s.done, s.f_star, s.f_lo)
    g = jnp.where(s.done, s.g_star, s.g_lo)
    return a, f, g, ~s.done, s.i


class _BFGS(NamedTuple):
    k: Any
    nfev: Any
    converged: Any
    failed: Any
    x: Any
    f: Any
    g: Any
    H: Any


def _norm(g, ord):
    if ord == np.inf:
        return jnp.max(jnp.abs(g))
    if ord == -np.inf:
        return jnp.min(jnp.abs(g))
    return jnp.sum(jnp.abs(g) ** ord) ** (1.0 / ord)


def _bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    n = x0.shape[0]
    maxiter = 200 * n if maxiter is None else maxiter
    value_and_grad_fn = value_and_grad(fun)
    f0, g0 = value_and_grad_fn(x0)
    if jnp.shape(f0) != ():
        raise TypeError(f"minimize: fun must return a scalar, got shape {jnp.shape(f0)}")
    eye = jnp.eye(n, dtype=x0.dtype)

    def cond(s):
        return (~s.converged) & (~s.failed) & (s.k < maxiter)

    def body(s):
        p = -(s.H @ s.g)
        # A direction that does not descend (an estimate spoiled by rounding) restarts
        # from steepest descent.
        descent = jnp.dot(p, s.g) < 0
        H = jnp.where(descent, s.H, eye)
        p = jnp.where(descent, p, -s.g)
        a, f, g, failed, evals = _line_search(value_and_grad_fn, s.x, p, s.f, s.g,
                                              line_search_maxiter)
        step = a * p
        y = g - s.g
        sy = jnp.dot(step, y)
        rho = 1.0 / jnp.where(sy > 0, sy, 1)
        left = eye - rho * jnp.outer(step, y)
        updated = left @ H @ left.T + rho * jnp.outer(step, step)
        H = jnp.where((sy > 0) & ~failed, updated, H)
        return _BFGS(k=s.k + 1, nfev=s.nfev + evals, converged=_norm(g, norm) < gtol,
                     failed=failed, x=s.x + step, f=f, g=g, H=H)

    start = _BFGS(k=jnp.asarray(0), nfev=jnp.asarray(1), converged=_norm(g0, norm) < gtol,
                  failed=jnp.asarray(False), x=x0, f=f0, g=g0, H=eye)
    s = lax.while_loop(cond, body, start)
    status = jnp.where(s.converged, 0, jnp.where(s.failed, 3, 1))
    return s, status


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimise a scalar function of one 1-D array, starting from ``x0``.

    Parameters
    ----------
    fun : callable ``fun(x, *args)`` returning a scalar.
    x0 : 1-D floating-point array, the starting point.
    args : tuple of extra arguments passed to ``fun``.
    method : ``'BFGS'`` (the only method, as in JAX; case-insensitive).
    tol : accepted and, as in JAX, unused: set ``options={'gtol': ...}``.
    options : ``maxiter`` (default ``200 * x0.size``), ``gtol`` (``1e-5``), ``norm``
        of the gradient tested against ``gtol`` (``inf``), ``line_search_maxiter``
        (``10``).

    Returns
    -------
    OptimizeResults

    Examples
    --------
    >>> from absjit.scipy.optimize import minimize
    >>> r = minimize(lambda x: jnp.sum((x - 3.0) ** 2), jnp.zeros(2), method="BFGS")
    >>> r.x, bool(r.success)
    (Array([3., 3.], dtype=float32), True)
    """
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to absjit.scipy.optimize.minimize must be a tuple, "
                        f"got {args!r}")
    if not isinstance(method, str) or method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized")
    options = {} if options is None else dict(options)
    unknown = set(options) - {"maxiter", "norm", "gtol", "line_search_maxiter"}
    if unknown:
        raise TypeError(f"minimize: unknown BFGS options {sorted(unknown)}")
    x0 = jnp.asarray(x0)
    if not dtypes.is_inexact(x0.dtype):
        raise TypeError(f"minimize: x0 must be floating point, got {x0.dtype}")
    if x0.ndim != 1:
        raise TypeError(f"minimize: x0 must be 1-dimensional, got shape {x0.shape}")
    s, status = _bfgs(lambda x: fun(x, *args), x0, **options)
    return OptimizeResults(x=s.x, success=s.converged & ~s.failed, status=status, fun=s.f,
                           jac=s.g, hess_inv=s.H, nfev=s.nfev, njev=s.nfev, nit=s.k)
