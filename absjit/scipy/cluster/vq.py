"""``absjit.scipy.cluster.vq``: assigning observations to the nearest code."""
from __future__ import annotations

from ... import numpy as jnp
from ...numpy._linalg_decomp import _inexact

__all__ = ["vq"]


def vq(obs, code_book, check_finite=True):
    """The index of the nearest code in ``code_book`` for each observation, and the
    Euclidean distance to it (the first code wins a tie).

    ``obs`` is ``(M, N)`` (or ``(M,)``, one feature) and ``code_book`` ``(K, N)`` (or
    ``(K,)``). ``check_finite`` is accepted and ignored, as in JAX.

    Examples
    --------
    >>> from absjit.scipy.cluster.vq import vq
    >>> vq(jnp.array([[1., 1.], [4., 5.]]), jnp.array([[0., 0.], [4., 4.]]))
    (Array([0, 1], dtype=int32), Array([1.4142135, 1.       ], dtype=float32))
    """
    obs, code_book = _inexact("vq", obs, code_book)
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    elif obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    if obs.shape[1] != code_book.shape[1]:
        raise ValueError(f"vq: observations have {obs.shape[1]} features but the codes have "
                         f"{code_book.shape[1]}")
    dist = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = jnp.argmin(dist, axis=-1)
    return code, jnp.min(dist, axis=-1)
