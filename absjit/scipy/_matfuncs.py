"""``polar`` and ``expm_frechet``: matrix functions composed from the SVD and ``expm``,
so they differentiate, batch and compile with no rules of their own."""
from __future__ import annotations

from ..core.trace import get_aval
from ..lax import linalg as lax_linalg
from ..numpy import _linalg_decomp as _dec
from ..numpy._creation import zeros
from ..numpy._shape import concatenate
from ..ops import elementwise as ew
from ..ops._linalg_util import H, matmul, shape_of
from ._expm import expm

__all__ = ["polar", "expm_frechet"]


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
