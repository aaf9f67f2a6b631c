"""``expm``: the matrix exponential by scaling and squaring with Padé approximants
(Higham, "The scaling and squaring method for the matrix exponential revisited", SIAM J.
Matrix Anal. Appl. 26(4), 2005), choosing the degree from the 1-norm as JAX and SciPy
do. Written with lax ops, ``lax.switch``, ``lax.scan`` and ``solve``: it
differentiates, batches and compiles with no rule of its own.
"""
from __future__ import annotations

import numpy as np

from ..api_transforms import vmap
from ..core.trace import get_aval
from ..lax.linalg import triangular_solve
from ..numpy._linalg_decomp import _inexact, solve
from ..ops import elementwise as ew
from ..ops import reductions as red
from ..ops import structural as st
from ..ops._linalg_util import eye, full, matmul, real_dtype, shape_of
from ..ops.control_flow import cond, switch
from ..ops.scan import scan

__all__ = ["expm"]

# Padé numerator coefficients b_0 … b_m for each degree m (the denominator uses the
# same coefficients with alternating signs).
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
# theta_m: the largest 1-norm for which degree m is accurate to unit roundoff; the
# last degree of each list is used with scaling so that the norm is at most its theta.
_THETAS = {
    np.dtype(np.float64): ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1),
                           (7, 9.504178996162932e-1), (9, 2.097847961257068e+0),
                           (13, 5.371920351148152e+0)),
    np.dtype(np.float32): ((3, 4.258730016922831e-1), (5, 1.880152677804762e+0),
                           (7, 3.925724783138660e+0)),
}


def _scaled(c, x):
    return ew.mul(full(c, shape_of(x), get_aval(x).dtype), x)


def _lincomb(terms):
    """sum(c * X) over (c, X) pairs, skipping zero coefficients."""
    out = None
    for c, x in terms:
        t = _scaled(c, x)
        out = t if out is None else ew.add(out, t)
    return out


def _pade(m):
    b = _PADE[m]

    def uv(a):
        ident = eye(shape_of(a), get_aval(a).dtype)
        a2 = matmul(a, a)
        if m == 13:
            a4 = matmul(a2, a2)
            a6 = matmul(a4, a2)
            u_inner = ew.add(matmul(a6, _lincomb([(b[13], a6), (b[11], a4), (b[9], a2)])),
                             _lincomb([(b[7], a6), (b[5], a4), (b[3], a2), (b[1], ident)]))
            v = ew.add(matmul(a6, _lincomb([(b[12], a6), (b[10], a4), (b[8], a2)])),
                       _lincomb([(b[6], a6), (b[4], a4), (b[2], a2), (b[0], ident)]))
            return matmul(a, u_inner), v
        powers = [ident, a2]
        while len(powers) <= m // 2:
            powers.append(matmul(powers[-1], a2))
        u_inner = _lincomb([(b[2 * j + 1], p) for j, p in enumerate(powers)])
        v = _lincomb([(b[2 * j], p) for j, p in enumerate(powers)])
        return matmul(a, u_inner), v
    return uv


def _one_norm(a):
    """max over columns of the column sums of |a|, for (n, n) ``a``."""
    return red.reduce_max(red.reduce_sum(ew.abs(a), (0,)), (0,))


def _expm2d(a, upper_triangular, max_squarings):
    dt = get_aval(a).dtype
    rdt = real_dtype(dt)
    thetas = _THETAS[np.dtype(rdt)]
    norm = _one_norm(a)
    maxnorm = thetas[-1][1]
    n_sq = ew.max(np.array(0, rdt),
                  ew.floor(ew.div(ew.log(ew.div(norm, np.array(maxnorm, rdt))),
                                  np.array(np.log(2.0), rdt))))
    scale = ew.pow(np.array(2, rdt), n_sq)
    a = ew.div(a, st.broadcast_in_dim(ew.convert_element_type(scale, dt), shape_of(a), ()))
    # Degree: the number of thresholds at or below the (unscaled) norm.
    idx = None
    for _, theta in thetas[:-1]:
        hit = ew.convert_element_type(ew.ge(norm, np.array(theta, rdt)), np.int32)
        idx = hit if idx is None else ew.add(idx, hit)
    u, v = switch(idx, [_pade(m) for m, _ in thetas], a)
    p, q = ew.add(u, v), ew.sub(v, u)
    if upper_triangular:
        r = triangular_solve(q, p, left_side=True, lower=False)
    else:
        r = solve(q, p)

    def square_step(carry, i):
        return cond(ew.lt(i, n_sq), lambda x: matmul(x, x), lambda x: x, carry), None

    def compute(r):
        out, _ = scan(square_step, r, np.arange(max_squarings, dtype=rdt))
        return out

    def nans(r):
        return full(np.nan, shape_of(r), dt)

    return cond(ew.gt(n_sq, np.array(max_squarings, rdt)), nans, compute, r)


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
    """Matrix exponential of square matrices (..., n, n).

    ``upper_triangular=True`` uses a triangular solve for the Padé quotient;
    ``max_squarings`` bounds the squarings (more needed gives NaN, as in JAX).

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.expm(jnp.zeros((2, 2)))
    Array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    (A,) = _inexact("jax.scipy.linalg.expm", A)
    shape = shape_of(A)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={shape}.")
    if real_dtype(get_aval(A).dtype) not in _THETAS:
        raise TypeError(f"expm: A.dtype={get_aval(A).dtype} is not supported")
    fn = lambda a: _expm2d(a, upper_triangular, int(max_squarings))  # noqa: E731
    if len(shape) > 2:
        for _ in shape[:-2]:
            fn = vmap(fn)
    return fn(A)
