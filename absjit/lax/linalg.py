"""``absjit.lax.linalg``: the matrix decompositions as strict lax functions.

Like the rest of ``absjit.lax`` there is no implicit promotion: operands must be
float32, float64, complex64 or complex128 (``absjit.numpy.linalg`` and
``absjit.scipy.linalg`` promote integers to the default float first). Every function
maps over leading (batch) axes. The primitives live in ``absjit/ops/linalg_decomp.py``
and ``absjit/ops/linalg_spectral.py``.
"""
from __future__ import annotations

import numpy as np

from ..core.dims import dim_min
from ..core.trace import get_aval
from ..ops import elementwise as ew
from ..ops import structural as st
from ..ops._linalg_util import H, full, rank_error, shape_of
from ..ops.indexing import gather
from ..ops.linalg_decomp import cholesky_p, lu_p, triangular_solve_p
from ..ops.linalg_spectral import eigh_p, qr_p, svd_p

__all__ = ["cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "qr", "eigh",
           "svd", "symmetrize", "cholesky_p", "triangular_solve_p", "lu_p", "qr_p",
           "eigh_p", "svd_p"]


def symmetrize(x):
    """``(x + x^H) / 2`` over the last two axes.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> lax.linalg.symmetrize(np.array([[1., 2.], [0., 1.]], np.float32))[0, 1]
    Array(1., dtype=float32)
    """
    dt = get_aval(x).dtype
    return ew.div(ew.add(x, H(x)), np.array(2, dt))


def cholesky(x, *, symmetrize_input: bool = True):
    """Lower Cholesky factor ``L`` (``x = L @ L^H``) of positive-definite matrices.

    Parameters
    ----------
    x : array (..., n, n) of float32/float64/complex64/complex128
    symmetrize_input : bool
        Factor ``(x + x^H) / 2`` (the default, as in JAX); otherwise only the lower
        triangle of ``x`` is read.

    Returns
    -------
    ``L`` (..., n, n), zero above the diagonal. A matrix that is not positive definite
    gives NaN in its lower triangle, as in JAX (no exception).

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> lax.linalg.cholesky(np.array([[4., 2.], [2., 2.]], np.float32))
    Array([[2., 0.],
           [1., 1.]], dtype=float32)
    """
    shape = shape_of(x)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise rank_error("cholesky", shape)
    if symmetrize_input:
        x = symmetrize(x)
    return cholesky_p.bind(x)


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """Solve ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b`` for triangular ``a``.

    ``op(a)`` is ``a``, its transpose (``transpose_a``), its conjugate
    (``conjugate_a``) or both. Only the ``lower`` (or upper) triangle of ``a`` is read;
    ``unit_diagonal`` assumes ones on the diagonal. ``a`` is (..., m, m) and ``b``
    (..., m, n) (left) or (..., n, m) (right), with the same batch axes; a ``b`` of one
    rank less is a single vector.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> a = np.array([[2., 0.], [1., 1.]], np.float32)
    >>> lax.linalg.triangular_solve(a, np.array([[2.], [2.]], np.float32), left_side=True,
    ...                             lower=True)
    Array([[1.],
           [1.]], dtype=float32)
    """
    a_nd, b_nd = len(shape_of(a)), len(shape_of(b))
    conjugate_a = bool(conjugate_a) and get_aval(a).dtype.kind == "c"
    singleton = b_nd == a_nd - 1
    if singleton:
        b = st.expand_dims(b, (b_nd if left_side else b_nd - 1,))
    out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                  transpose_a=bool(transpose_a), conjugate_a=conjugate_a,
                                  unit_diagonal=bool(unit_diagonal))
    if singleton:
        out = st.squeeze(out, (b_nd if left_side else b_nd - 1,))
    return out


def lu(x):
    """LU decomposition with partial pivoting.

    Returns
    -------
    lu : (..., m, n)
        ``L`` (unit diagonal, not stored) below the diagonal and ``U`` on and above it.
    pivots : (..., min(m, n)) int32
        Row ``i`` was swapped with row ``pivots[i]``.
    permutation : (..., m) int32
        ``x[..., permutation, :] == L @ U``.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> lu, piv, perm = lax.linalg.lu(np.array([[1., 2.], [3., 4.]], np.float32))
    >>> perm
    Array([1, 0], dtype=int32)
    """
    return tuple(lu_p.bind(x))


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The permutation that the row swaps ``pivots`` (..., k) apply to ``range(m)``.

    Swap ``i`` is the transposition ``T_i`` of ``i`` and ``pivots[i]``; the result is
    ``T_0 o T_1 o ... o T_{k-1}`` applied to ``range(m)``. The ``k`` transpositions are
    composed pairwise in ``log2(k)`` rounds of one ``gather`` each, so the composite
    stays cheap eagerly (no per-swap loop) and batches and compiles like any lax code.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> lax.linalg.lu_pivots_to_permutation(np.array([2, 2], np.int32), 3)
    Array([2, 0, 1], dtype=int32)
    """
    pshape = shape_of(pivots)
    if not pshape:
        raise ValueError("lu_pivots_to_permutation: pivots must have rank >= 1")
    m = int(permutation_size)
    k = pshape[-1]
    if k > m:
        raise ValueError(f"lu_pivots_to_permutation: {k} pivots for a permutation of size "
                         f"{m}")
    if get_aval(pivots).dtype != np.int32:
        pivots = ew.convert_element_type(pivots, np.int32)
    batch = pshape[:-1]
    nb = len(batch)
    if k == 0:
        return st.iota(np.int32, batch + (m,), nb)
    rounds = max(0, (k - 1).bit_length())
    kk = 1 << rounds
    if kk > k:   # pad with identity swaps (row i with itself)
        pad = st.iota(np.int32, batch + (kk - k,), nb)
        pivots = st.concatenate([pivots, ew.add(pad, full(k, batch + (kk - k,), np.int32))],
                                nb)
    shape = batch + (kk, m)
    row = st.iota(np.int32, shape, nb)          # i
    col = st.iota(np.int32, shape, nb + 1)      # j
    piv = st.broadcast_in_dim(pivots, shape, tuple(range(nb + 1)))
    # T_i[j] = pivots[i] where j == i, i where j == pivots[i], else j.
    t = ew.select(ew.eq(col, row), piv, ew.select(ew.eq(col, piv), row, col))
    for _ in range(rounds):
        t = _compose_pairs(t)
    return st.reshape(t, batch + (m,))


def _compose_pairs(t):
    """(..., 2r, m) permutations -> (..., r, m): ``t[2i] o t[2i + 1]``."""
    shape = shape_of(t)
    nb = len(shape) - 2
    r = shape[-2] // 2
    zeros = (0,) * len(shape)
    left = st.slice(t, zeros, shape, (1,) * nb + (2, 1))
    right = st.slice(t, zeros[:-2] + (1, 0), shape, (1,) * nb + (2, 1))
    out_shape = shape[:-2] + (r, shape[-1])
    # left o right: out[..., i, j] = left[..., i, right[..., i, j]].
    idx = [st.iota(np.int32, out_shape, d) for d in range(nb + 1)] + [right]
    return gather(left, idx, tuple(range(nb + 2)))


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """QR decomposition ``x = q @ r`` of (..., m, n) matrices.

    ``full_matrices=True`` gives ``q`` (..., m, m) and ``r`` (..., m, n); False gives
    ``q`` (..., m, k) and ``r`` (..., k, n), ``k = min(m, n)``. Column pivoting is not
    supported (``pivoting=True`` raises ``NotImplementedError``).

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> q, r = lax.linalg.qr(np.eye(3, 2, dtype=np.float32), full_matrices=False)
    >>> r.shape
    (2, 2)
    """
    if pivoting:
        raise NotImplementedError("lax.linalg.qr: column pivoting (pivoting=True) is not "
                                  "supported")
    q, r = qr_p.bind(x, full_matrices=bool(full_matrices))
    return q, r


def _subset(name, subset_by_index, k):
    if subset_by_index is None:
        return None
    lo, hi = (int(i) for i in subset_by_index)
    if not 0 <= lo <= hi <= k:
        raise ValueError(f"{name}: subset_by_index={tuple(subset_by_index)} must satisfy "
                         f"0 <= lo <= hi <= {k}")
    return None if (lo, hi) == (0, k) else (lo, hi)


def _slice_last(x, lo, hi):
    shape = shape_of(x)
    return st.slice(x, (0,) * (len(shape) - 1) + (lo,), shape[:-1] + (hi,))


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None):
    """Eigendecomposition of symmetric (Hermitian) matrices.

    Parameters
    ----------
    x : array (..., n, n)
    lower : bool
        Read the lower (True) or upper triangle (only matters without symmetrizing).
    symmetrize_input : bool
        Decompose ``(x + x^H) / 2`` (default, as in JAX).
    sort_eigenvalues : bool
        Accepted; eigenvalues are always in ascending order.
    subset_by_index : (lo, hi), optional
        Keep eigenpairs ``lo`` to ``hi - 1``.

    Returns
    -------
    v : (..., n, n) eigenvectors (columns); w : (..., n) real eigenvalues, ascending.

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> v, w = lax.linalg.eigh(np.diag(np.array([2., 1.], np.float32)))
    >>> w
    Array([1., 2.], dtype=float32)
    """
    shape = shape_of(x)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError("Argument to symmetric eigendecomposition must have shape "
                         f"[..., n, n], got shape {shape}")
    sub = _subset("eigh", subset_by_index, shape[-1])
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues))
    if sub is not None:
        v, w = _slice_last(v, *sub), _slice_last(w, *sub)
    return v, w


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """Singular value decomposition ``x = u @ diag(s) @ vh``.

    Returns ``(u, s, vh)`` with ``compute_uv`` (``u`` (..., m, m or k), ``vh``
    (..., n or k, n)), else ``s`` (..., k), ``k = min(m, n)``, descending.
    ``subset_by_index=(lo, hi)`` keeps singular triplets ``lo`` to ``hi - 1`` (needs
    ``full_matrices=False``); ``algorithm`` is accepted and ignored (LAPACK
    ``?gesdd`` is used).

    Examples
    --------
    >>> import numpy as np
    >>> from absjit import lax
    >>> lax.linalg.svd(np.diag(np.array([1., 3.], np.float32)), compute_uv=False)
    Array([3., 1.], dtype=float32)
    """
    shape = shape_of(x)
    if len(shape) < 2:
        raise ValueError(f"Argument to svd must have rank >= 2, got shape {shape}")
    k = dim_min(*shape[-2:])
    sub = _subset("svd", subset_by_index, k)
    if sub is not None and full_matrices:
        raise ValueError("svd: full_matrices and subset_by_index cannot both be set")
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    if not compute_uv:
        (s,) = outs
        return s if sub is None else _slice_last(s, *sub)
    s, u, vt = outs
    if sub is not None:
        lo, hi = sub
        s, u = _slice_last(s, lo, hi), _slice_last(u, lo, hi)
        vshape = shape_of(vt)
        vt = st.slice(vt, (0,) * (len(vshape) - 2) + (lo, 0), vshape[:-2] + (hi, vshape[-1]))
    return u, s, vt
