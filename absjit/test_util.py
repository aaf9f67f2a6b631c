"""``check_grads``: numerical checks of a function's derivatives (``jax.test_util``).

Examples
--------
>>> import absjit.numpy as jnp
>>> from absjit.test_util import check_grads
>>> check_grads(jnp.sin, (0.5,), order=2)  # raises AssertionError when wrong
"""
from __future__ import annotations

import numpy as np

from . import tree_util

__all__ = ["check_grads", "check_jvp", "check_vjp"]

_EPS = 1e-4
# Tolerances of the comparison by the dtype compared (finite differences are noisy).
_TOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3,
        np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 2e-3,
        np.dtype(np.complex128): 1e-5}


def _tol(given, leaves):
    if given is not None:
        return given
    dts = [np.asarray(x).dtype for x in leaves if np.asarray(x).dtype.kind in "fc"]
    return max((_TOL.get(dt, 1e-2) for dt in dts), default=1e-5)


def _rand_like(rng, x):
    a = np.asarray(x)
    if a.dtype.kind == "c":
        return (rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)).astype(
            a.dtype)
    if a.dtype.kind != "f":
        raise TypeError(f"check_grads: arguments must be floating point, got {a.dtype}")
    return rng.standard_normal(a.shape).astype(a.dtype)


def _axpy(a, xs, ys):
    return tree_util.tree_map(lambda x, y: np.asarray(a * np.asarray(x) + np.asarray(y)),
                              xs, ys)


def _numerical_jvp(f, primals, tangents, eps):
    up = f(*_axpy(eps, tangents, primals))
    down = f(*_axpy(-eps, tangents, primals))
    return tree_util.tree_map(
        lambda u, d: (np.asarray(u) - np.asarray(d)) / (2 * eps), up, down)


def _assert_close(name, got, want, atol, rtol):
    g_leaves, g_tree = tree_util.tree_flatten(got)
    w_leaves, w_tree = tree_util.tree_flatten(want)
    if g_tree != w_tree:
        raise AssertionError(f"{name}: structures differ: {g_tree} vs {w_tree}")
    for g, w in zip(g_leaves, w_leaves):
        g, w = np.asarray(g), np.asarray(w)
        if g.dtype.kind in "fc":
            np.testing.assert_allclose(g.astype(np.complex128 if g.dtype.kind == "c" else
                                                np.float64), w, atol=atol, rtol=rtol,
                                       err_msg=name)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=_EPS) -> None:
    """``f_jvp(args, tangents)`` against central finite differences of ``f``."""
    rng = np.random.default_rng(0)
    tangents = tree_util.tree_map(lambda x: _rand_like(rng, x), args)
    _, t_out = f_jvp(args, tangents)
    expected = _numerical_jvp(f, args, tangents, eps)
    leaves = tree_util.tree_leaves(args)
    _assert_close("JVP", t_out, expected, _tol(atol, leaves), _tol(rtol, leaves))


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=_EPS) -> None:
    """``<u, J v>`` (finite differences) against ``<J^T u, v>`` (``f_vjp``)."""
    rng = np.random.default_rng(1)
    out, pullback = f_vjp(*args)
    v = tree_util.tree_map(lambda x: _rand_like(rng, x), args)
    u = tree_util.tree_map(lambda x: _rand_like(rng, x), out)
    jv = _numerical_jvp(f, args, v, eps)
    ct = pullback(u)
    lhs = sum(np.vdot(np.asarray(a), np.asarray(b)) for a, b in
              zip(tree_util.tree_leaves(u), tree_util.tree_leaves(jv)))
    rhs = sum(np.vdot(np.asarray(a), np.asarray(b)) for a, b in
              zip(tree_util.tree_leaves(ct), tree_util.tree_leaves(v)))
    leaves = tree_util.tree_leaves(args)
    _assert_close("VJP", np.asarray(rhs).conj() if np.iscomplexobj(rhs) else rhs,
                  np.asarray(lhs), _tol(atol, leaves), _tol(rtol, leaves))


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None,
                eps=None) -> None:
    """Check ``f``'s derivatives up to ``order`` numerically; ``AssertionError`` when
    they disagree.

    Forward mode (``"fwd"``) is compared with central finite differences; reverse mode
    (``"rev"``) through ``<u, J v> == <J^T u, v>``. Higher orders check the JVP and
    VJP functions themselves, recursively. ``args`` is a tuple of float arrays.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> check_grads(lambda x, y: jnp.sum(x * jnp.exp(y)), (jnp.ones(3), jnp.zeros(3)), 1)
    """
    from .api_transforms import jvp, vjp
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"check_grads: args must be a tuple of arguments, got "
                        f"{type(args).__name__}")
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"check_grads: order must be a positive int, got {order!r}")
    if isinstance(modes, str):
        modes = (modes,)
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"check_grads: unknown mode {m!r}; expected 'fwd' or 'rev'")
    eps = _EPS if eps is None else eps
    from .numpy import asarray
    # In the dtypes absjit computes in (float32 for Python floats unless x64 is on): the
    # tolerances follow them.
    args = tuple(tree_util.tree_map(lambda x: np.asarray(asarray(x)), tuple(args)))

    def recurse(fun, primals, k):
        if "fwd" in modes:
            def f_jvp(p, t):
                return jvp(fun, tuple(p), tuple(t))
            check_jvp(fun, f_jvp, primals, atol, rtol, eps)
            if k > 1:
                rng = np.random.default_rng(2)
                tangents = tree_util.tree_map(lambda x: _rand_like(rng, x), primals)
                n = len(primals)
                recurse(lambda *pt: jvp(fun, tuple(pt[:n]), tuple(pt[n:]))[1],
                        tuple(primals) + tuple(tangents), k - 1)
        if "rev" in modes:
            check_vjp(fun, lambda *p: vjp(fun, *p), primals, atol, rtol, eps)
            if k > 1:
                rng = np.random.default_rng(3)
                out = fun(*primals)
                u = tree_util.tree_map(lambda x: _rand_like(rng, x), out)
                recurse(lambda *p: vjp(fun, *p)[1](u), primals, k - 1)

    recurse(f, args, order)
