"""Numerical checks of derivatives.

``check_grads(f, args, order=1)`` checks forward mode against central finite
differences and reverse mode against forward mode (``<u, J v> == <J^T u, v>``), then
recurses on the JVP and VJP functions for higher orders. It runs in float64 (x64 on
for the duration) so finite differences are accurate. With ``jax_fn`` the JVP and VJP
are also compared with JAX's.
"""
from __future__ import annotations

import numpy as np

import absjit
from absjit import tree_util
from tests.checks import jax

__all__ = ["check_grads", "numerical_jvp"]


def _to64(x):
    a = np.asarray(x)
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def _is_float(x) -> bool:
    return np.asarray(x).dtype.kind == "f"


def _rand_like(rng, x):
    a = np.asarray(x)
    if a.dtype.kind != "f":
        return np.zeros(a.shape, absjit.dtypes.float0)
    return rng.standard_normal(a.shape).astype(a.dtype)


def _vdot(xs, ys) -> float:
    total = 0.0
    for x, y in zip(tree_util.tree_leaves(xs), tree_util.tree_leaves(ys)):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype == absjit.dtypes.float0 or y.dtype == absjit.dtypes.float0:
            continue
        if x.dtype.kind != "f" or y.dtype.kind != "f":
            continue
        total += float(np.sum(x.astype(np.float64) * y.astype(np.float64)))
    return total


def numerical_jvp(f, args, tangents, eps):
    """Central difference of ``f`` at ``args`` along ``tangents`` (float leaves only)."""
    def shifted(sign):
        return [absjit.numpy.asarray(np.asarray(a) + sign * eps * np.asarray(t))
                if _is_float(a) else a for a, t in zip(args, tangents)]
    plus = tree_util.tree_map(np.asarray, f(*shifted(1)))
    minus = tree_util.tree_map(np.asarray, f(*shifted(-1)))
    return tree_util.tree_map(
        lambda p, m: (p.astype(np.float64) - m.astype(np.float64)) / (2 * eps)
        if np.asarray(p).dtype.kind == "f" else np.zeros(np.shape(p)), plus, minus)


def _assert_tree_close(a, b, atol, rtol, what):
    for x, y in zip(tree_util.tree_leaves(a), tree_util.tree_leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype == absjit.dtypes.float0 or x.dtype.kind not in "fc":
            continue
        np.testing.assert_allclose(x.astype(np.float64), np.asarray(y, np.float64),
                                   atol=atol, rtol=rtol, err_msg=what)


def check_grads(f, args, order=1, modes=("fwd", "rev"), eps=1e-4, atol=1e-5, rtol=1e-4,
                jax_fn=None, seed=0):
    """Check the derivatives of ``f`` (positional array arguments) up to ``order``.

    Parameters
    ----------
    f : callable
        An absjit-traceable function of the arrays in ``args``.
    args : sequence of arrays
    order : int
        1 checks JVP/VJP; 2 also checks the derivatives of the JVP and VJP, and so on.
    modes : tuple
        ``"fwd"`` (JVP vs finite differences) and/or ``"rev"`` (VJP vs JVP).
    jax_fn : callable, optional
        The same function written with ``jax.numpy``; JVP/VJP are compared with JAX's.
    """
    before = absjit.config.enable_x64
    absjit.config.update("enable_x64", True)
    try:
        _check(f, [_to64(a) for a in args], order, modes, eps, atol, rtol, jax_fn,
               np.random.default_rng(seed))
    finally:
        absjit.config.update("enable_x64", before)


def _check(f, args, order, modes, eps, atol, rtol, jax_fn, rng):
    tangents = [_rand_like(rng, a) for a in args]
    out, t_out = absjit.jvp(f, tuple(args), tuple(tangents))
    if "fwd" in modes:
        num = numerical_jvp(f, args, tangents, eps)
        _assert_tree_close(t_out, num, atol=max(atol, 10 * eps * eps), rtol=rtol,
                           what="JVP vs finite differences")
    if "rev" in modes:
        out2, pullback = absjit.vjp(f, *args)
        _assert_tree_close(out2, out, atol=atol, rtol=rtol, what="vjp primal vs jvp primal")
        ct = tree_util.tree_map(lambda o: _rand_like(rng, o), out)
        cts_in = pullback(ct)
        lhs = _vdot(ct, t_out)
        rhs = _vdot(cts_in, tangents)
        np.testing.assert_allclose(lhs, rhs, atol=atol * 10, rtol=rtol * 10,
                                   err_msg="VJP inconsistent with JVP: <u, Jv> != <J^T u, v>")
    if jax_fn is not None and jax is not None:
        _compare_with_jax(f, jax_fn, args, tangents, rng, atol, rtol, modes)
    if order > 1:
        def f_jvp(*primals):
            return absjit.jvp(f, tuple(primals), tuple(tangents))[1]
        if "fwd" in modes:
            _check(f_jvp, args, order - 1, ("fwd",), eps, atol, rtol, None, rng)
        if "rev" in modes:
            ct = tree_util.tree_map(lambda o: _rand_like(rng, o), out)

            def f_vjp(*primals):
                return absjit.vjp(f, *primals)[1](ct)
            _check(f_vjp, args, order - 1, modes, eps, atol, rtol, None, rng)


def _compare_with_jax(f, jax_fn, args, tangents, rng, atol, rtol, modes):
    jax.config.update("jax_enable_x64", True)
    try:
        j_args = tuple(np.asarray(a) for a in args)
        j_tan = tuple(np.asarray(t) for t in tangents)
        _, jt = jax.jvp(jax_fn, j_args, j_tan)
        _, at = absjit.jvp(f, tuple(args), tuple(tangents))
        _assert_tree_close(at, jt, atol=atol, rtol=rtol, what="JVP vs JAX")
        if "rev" in modes:
            j_out, j_pb = jax.vjp(jax_fn, *j_args)
            ct = tree_util.tree_map(lambda o: _rand_like(rng, o), tuple(tree_util.tree_leaves(
                tree_util.tree_map(np.asarray, j_out))))
            a_out, a_pb = absjit.vjp(f, *args)
            a_ct = tree_util.tree_unflatten(tree_util.tree_structure(a_out), list(ct))
            j_ct = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(j_out), list(ct))
            _assert_tree_close(a_pb(a_ct), j_pb(j_ct), atol=atol, rtol=rtol,
                               what="VJP vs JAX")
    finally:
        jax.config.update("jax_enable_x64", False)
