"""Triangular factorizations: ``cholesky``, ``triangular_solve`` and ``lu``.

Each primitive works on the last two axes and is batched over any leading axes. The
NumPy/SciPy implementations are the executable spec (each docstring names the LAPACK or
BLAS routine it calls); the JVP rules follow JAX's ``jax/_src/lax/linalg.py``, and
every derivative of a composite built on them (``solve``, ``inv``, ``det`` …) follows.
Under ``jit`` on the cpu backend these primitives run on the interpret backend for now.
"""
from __future__ import annotations

import numpy as np

from ..core.dims import dim_min
from ..core.primitive import Primitive, abstract_eval_rules, impl_rules
from ..core.trace import get_aval
from ..interpreters import ad, batching
from . import elementwise as ew
from . import structural as st
from .indexing import gather, scatter
from ._linalg_util import (check_matrix_dtype, dtype_of, eye, full, matmul, mT,
                           out_aval, rank_error, shape_of, tril, triu)

__all__ = ["cholesky_p", "triangular_solve_p", "lu_p"]


def _batch_leading(prim):
    """Batching rule of a primitive that maps over leading axes: move every batch axis
    to the front (broadcasting unbatched operands) and bind once."""
    def rule(vals, dims, **params):
        size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
        moved = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
        outs = prim.bind(*moved, **params)
        outs = list(outs) if prim.multiple_results else [outs]
        return outs, [0] * len(outs)
    rule.__name__ = f"{prim.name}_batch"
    batching.batch_rules[prim] = rule
    return rule


def each_matrix(x):
    """Indices of the matrices in a stack (..., m, n); one empty index for a matrix."""
    return np.ndindex(*x.shape[:-2])


def map_matrices(fn, *xs) -> list:
    """``fn`` (one matrix of each operand -> list of arrays) over stacks of matrices.

    A single matrix's results are returned as LAPACK produced them (often Fortran order:
    copying a 512x128 result into a C-order array cost ~10% of an SVD); a stack's are
    gathered into new arrays. Stacks with no matrices are handled by the callers."""
    if xs[0].ndim == 2:
        return list(fn(*xs))
    outs = None
    for idx in each_matrix(xs[0]):
        res = fn(*(x[idx] for x in xs))
        if outs is None:
            outs = [np.empty(xs[0].shape[:-2] + np.shape(r), np.asarray(r).dtype)
                    for r in res]
        for o, r in zip(outs, res):
            o[idx] = r
    return outs


def small_stack(x) -> bool:
    """A stack of small matrices: NumPy's batched gufuncs (one C loop) beat a Python loop
    over SciPy's LAPACK calls there. For anything larger SciPy's LAPACK is used: with
    the OpenBLAS builds NumPy and SciPy ship, SciPy's ``?potrf``/``?gesdd``/``?syevd``/
    ``?geqrf`` measured 2-4x faster than ``numpy.linalg``'s on 128-512 sized matrices."""
    return x.ndim > 2 and x.shape[-1] * x.shape[-2] <= 256


# ---------------------------------------------------------------------------
# cholesky
# ---------------------------------------------------------------------------
cholesky_p = Primitive("cholesky")


def _cholesky_abstract(x):
    check_matrix_dtype("cholesky", x)
    if len(x.shape) < 2 or x.shape[-1] != x.shape[-2]:
        raise rank_error("cholesky", x.shape)
    return [out_aval(x.shape, x.dtype)]


def _cholesky_impl(x):
    """``cholesky_p``, the executable spec.

    Lower Cholesky factor ``L`` of Hermitian positive-definite
    (..., n, n) matrices, reading only their lower triangle.

    Impl: LAPACK ``?potrf`` (``uplo='L'``) from ``scipy.linalg.lapack``, one call per
    matrix (``numpy.linalg.cholesky`` for stacks of small matrices). A matrix that is not
    positive definite gives NaN in the lower triangle (zeros above), as JAX does.
    """
    if x.size == 0:
        return [np.zeros(x.shape, x.dtype)]
    if small_stack(x):
        try:
            return [np.linalg.cholesky(x)]
        except np.linalg.LinAlgError:
            pass   # some matrix is not positive definite: one at a time below
    import scipy.linalg  # imported on first use: a slow import
    (potrf,) = scipy.linalg.get_lapack_funcs(("potrf",), (x,))

    def one(a):
        c, info = potrf(a, lower=1, clean=1)
        return [c if info == 0 else np.tril(np.full(a.shape, np.nan, a.dtype))]
    return map_matrices(one, x)


def _cholesky_jvp(primals, tangents):
    # L' = L phi(L^{-1} dA L^{-H}), phi = lower triangle with the diagonal halved
    # (Murray 2016, arXiv:1602.07527), as in JAX.
    (x,), (dx,) = primals, tangents
    L = cholesky_p.bind(x)
    if dx is None:
        return [L], [None]
    tmp = triangular_solve_p.bind(L, dx, left_side=False, lower=True, transpose_a=True,
                                  conjugate_a=True, unit_diagonal=False)
    inner = triangular_solve_p.bind(L, tmp, left_side=True, lower=True, transpose_a=False,
                                    conjugate_a=False, unit_diagonal=False)
    shape, dt = shape_of(x), dtype_of(x)
    scale = ew.sub(full(1, shape, dt), ew.mul(full(0.5, shape, dt), eye(shape, dt)))
    phi = ew.mul(tril(inner), scale)
    return [L], [matmul(L, phi)]


_cholesky_jvp.symbolic_zeros = True
abstract_eval_rules[cholesky_p] = _cholesky_abstract
impl_rules[cholesky_p] = _cholesky_impl
ad.jvp_rules[cholesky_p] = _cholesky_jvp
_batch_leading(cholesky_p)


# ---------------------------------------------------------------------------
# triangular_solve
# ---------------------------------------------------------------------------
triangular_solve_p = Primitive(
    "triangular_solve",
    param_order=("left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal"))


def _triangular_solve_abstract(a, b, *, left_side, lower, transpose_a, conjugate_a,
                               unit_diagonal):
    check_matrix_dtype("triangular_solve", a)
    if a.dtype != b.dtype:
        raise TypeError("lax.linalg.triangular_solve requires a and b to have the same "
                        f"dtype, got {a.dtype.name} and {b.dtype.name}")
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError("The first input to triangular_solve must be a square matrix "
                         f"[..., m, m]. Got shape {tuple(a.shape)}.")
    if len(b.shape) != len(a.shape) or tuple(b.shape[:-2]) != tuple(a.shape[:-2]):
        raise ValueError("triangular_solve: b must have the same batch dimensions as a, "
                         f"got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    common = b.shape[-2] if left_side else b.shape[-1]
    if common != a.shape[-1]:
        raise ValueError("Incompatible shapes for arguments to triangular_solve: "
                         f"{tuple(a.shape)} and {tuple(b.shape)}.")
    return [out_aval(b.shape, b.dtype)]


def _trsm(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    if conjugate_a and not transpose_a:
        a = np.conj(a)   # ?trsm has op(A) in {A, A^T, A^H} only
    trans = (2 if conjugate_a else 1) if transpose_a else 0
    import scipy.linalg  # imported on first use: a slow import
    (fn,) = scipy.linalg.get_blas_funcs(("trsm",), (a, b))
    return fn(1.0, a, b, side=0 if left_side else 1, lower=int(lower), trans_a=trans,
              diag=int(unit_diagonal))


def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
    """``triangular_solve_p``, the executable spec.

    Solve ``op(a) x = b`` (``left_side``) or
    ``x op(a) = b`` for triangular ``a`` (..., m, m); ``op`` transposes and/or conjugates.

    Impl: BLAS ``?trsm`` (``scipy.linalg.blas``), one call per matrix; a zero on the
    diagonal gives inf/NaN rather than an error, as in JAX. Linear in ``b`` (transpose
    rule: the solve with ``op(a)`` transposed).
    """
    params = (left_side, lower, transpose_a, conjugate_a, unit_diagonal)
    if b.size == 0 or a.size == 0:
        return [np.zeros(b.shape, b.dtype)]
    return map_matrices(lambda a, b: [_trsm(a, b, *params)], a, b)


def _triangular_solve_jvp(primals, tangents, **params):
    a, b = primals
    da, db = tangents
    ans = triangular_solve_p.bind(a, b, **params)
    t = None
    if db is not None:
        t = triangular_solve_p.bind(a, db, **params)
    if da is not None:
        t_a = _triangular_solve_jvp_a(da, ans, a, **params)
        t = t_a if t is None else ew.add(t, t_a)
    return [ans], [t]


def _triangular_solve_jvp_a(da, ans, a, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    # d(op(A)^{-1} B) = -op(A)^{-1} op(dA) X, with dA restricted to the triangle the
    # solve reads. The cheaper association of the product is used, as in JAX.
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    k = 1 if unit_diagonal else 0
    g = tril(da, -k) if lower else triu(da, k)
    g = ew.neg(g)
    if transpose_a:
        g = mT(g)
    if conjugate_a and dtype_of(g).kind == "c":
        g = ew.conj(g)
    m, n = shape_of(ans)[-2:]
    if left_side:
        if m > n:
            return triangular_solve_p.bind(a, matmul(g, ans), **params)
        return matmul(triangular_solve_p.bind(a, g, **params), ans)
    if m < n:
        return triangular_solve_p.bind(a, matmul(ans, g), **params)
    return matmul(ans, triangular_solve_p.bind(a, g, **params))


def _triangular_solve_transpose(cts, a, b, *, left_side, lower, transpose_a, conjugate_a,
                                unit_diagonal):
    if ad.is_undefined_primal(a):
        raise TypeError("triangular_solve is linear in b only; it cannot be transposed "
                        "with respect to a")
    (ct,) = cts
    if ct is None:
        return [None, None]
    ct_b = triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                   transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                   unit_diagonal=unit_diagonal)
    return [None, ct_b]


_triangular_solve_jvp.symbolic_zeros = True
abstract_eval_rules[triangular_solve_p] = _triangular_solve_abstract
impl_rules[triangular_solve_p] = _triangular_solve_impl
ad.jvp_rules[triangular_solve_p] = _triangular_solve_jvp
ad.transpose_rules[triangular_solve_p] = _triangular_solve_transpose
_batch_leading(triangular_solve_p)
_triangular_solve_batch_both = batching.batch_rules[triangular_solve_p]


def _triangular_solve_batch(vals, dims, **params):
    """With only ``b`` batched, the batch becomes extra right-hand sides: one solve with
    ``a`` rather than a copy of ``a`` per batch element."""
    (a, b), (ad_, bd) = vals, dims
    if ad_ is not None:
        return _triangular_solve_batch_both(vals, dims, **params)
    shape = tuple(get_aval(b).shape)
    nd = len(shape)
    size = shape[bd]
    if params["left_side"]:
        # (..., m, n) with the batch moved last -> (..., m, n * B): columns are independent.
        b = batching.moveaxis(b, bd, nd - 1)
        s = tuple(get_aval(b).shape)
        x = triangular_solve_p.bind(a, st.reshape(b, s[:-2] + (s[-2] * size,)), **params)
        return [st.reshape(x, s)], [nd - 1]
    # Right side: (..., n, m) with the batch moved before n -> (..., B * n, m).
    b = batching.moveaxis(b, bd, nd - 3)
    s = tuple(get_aval(b).shape)
    x = triangular_solve_p.bind(a, st.reshape(b, s[:-3] + (size * s[-2], s[-1])), **params)
    return [st.reshape(x, s)], [nd - 3]


batching.batch_rules[triangular_solve_p] = _triangular_solve_batch


# ---------------------------------------------------------------------------
# lu
# ---------------------------------------------------------------------------
lu_p = Primitive("lu", multiple_results=True)


def _lu_abstract(x):
    check_matrix_dtype("lu", x)
    if len(x.shape) < 2:
        raise ValueError(f"Argument to lu must have rank >= 2, got shape {tuple(x.shape)}")
    *batch, m, n = x.shape
    return [out_aval(x.shape, x.dtype), out_aval((*batch, dim_min(m, n)), np.int32),
            out_aval((*batch, m), np.int32)]


def pivots_to_permutation(piv: np.ndarray, m: int) -> np.ndarray:
    """NumPy reference: the row permutation that the swaps in ``piv`` apply."""
    perm = np.arange(m, dtype=np.int32)
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


def _lu_impl(x):
    """``lu_p``, the executable spec.

    LU factorization with partial pivoting of (..., m, n) matrices:
    ``a[..., permutation, :] = L @ U`` with ``L`` unit lower triangular (below the diagonal
    of ``lu``) and ``U`` upper triangular (on and above it).

    Outputs ``lu`` (..., m, n), ``pivots`` (..., min(m, n)) int32 (row ``i`` was swapped
    with row ``pivots[i]``, 0-based) and ``permutation`` (..., m) int32. Impl: LAPACK
    ``?getrf`` (``scipy.linalg.lapack``), one call per matrix; a singular matrix is
    factored anyway (zeros on ``U``'s diagonal), as in JAX.
    """
    *batch, m, n = x.shape
    k = min(m, n)
    lu = np.empty(x.shape, x.dtype)
    piv = np.empty((*batch, k), np.int32)
    perm = np.empty((*batch, m), np.int32)
    if x.size == 0:
        lu[...] = x
        perm[...] = np.arange(m, dtype=np.int32)
        piv[...] = np.arange(k, dtype=np.int32)
        return [lu, piv, perm]
    import scipy.linalg  # imported on first use: a slow import
    (getrf,) = scipy.linalg.get_lapack_funcs(("getrf",), (x,))

    def one(a):
        lu, p, _info = getrf(a)   # info > 0: exactly singular; kept, as in JAX
        return [lu, p.astype(np.int32), pivots_to_permutation(p, m)]
    return map_matrices(one, x)


def _row_indices(perm, nb):
    shape = shape_of(perm)
    return [st.iota(np.int32, shape, d) for d in range(nb)] + [perm]


def permute_rows(x, perm):
    """``x[..., perm, :]`` for (..., m, k) ``x`` and (..., m) ``perm`` with the same batch
    axes: one gather (a one-hot matrix product would cost O(m^2 k))."""
    nb = len(shape_of(x)) - 2
    return gather(x, _row_indices(perm, nb), tuple(range(nb + 1)))


def unpermute_rows(x, perm):
    """The inverse of :func:`permute_rows`: ``out[..., perm, :] = x`` (one scatter)."""
    nb = len(shape_of(x)) - 2
    return scatter(full(0, shape_of(x), dtype_of(x)), x, _row_indices(perm, nb),
                   tuple(range(nb + 1)))


def permutation_matrix(perm, m: int, dtype):
    """(..., m, m) one-hot matrices ``P`` with ``P @ x == x[..., perm, :]``."""
    shape = shape_of(perm) + (m,)
    nd = len(shape)
    rows = st.broadcast_in_dim(perm, shape, tuple(range(nd - 1)))
    return ew.convert_element_type(ew.eq(rows, st.iota(np.int32, shape, nd - 1)),
                                   np.dtype(dtype))


def _lu_jvp(primals, tangents):
    # Differentiate P A = L U: with X = P dA, solve L^{-1} X U^{-1} and split it into
    # its strictly lower part (for L) and upper part (for U), as in JAX.
    (a,), (da,) = primals, tangents
    lu, piv, perm = lu_p.bind(a)
    if da is None:
        return [lu, piv, perm], [None, None, None]
    shape, dt = shape_of(a), dtype_of(a)
    *batch, m, n = shape
    batch = tuple(batch)
    k = min(m, n)
    nb = len(batch)
    x = permute_rows(da, perm)
    # L: m x m unit lower (the first k columns of lu, padded with identity columns).
    l_part = tril(st.slice(lu, (0,) * len(shape), batch + (m, k)), -1)
    zero = np.array(0, dt)
    l_pad = [(0, 0, 0)] * nb + [(0, 0, 0), (0, m - k, 0)]
    l = ew.add(st.pad(l_part, zero, l_pad), eye(batch + (m, m), dt))
    # U: n x n upper (the first k rows of lu, padded with an identity block).
    u_part = triu(st.slice(lu, (0,) * len(shape), batch + (k, n)))
    u_pad = [(0, 0, 0)] * nb + [(0, n - k, 0), (0, 0, 0)]
    u = st.pad(u_part, zero, u_pad)
    if n > k:
        u_eye = st.pad(eye(batch + (n - k, n - k), dt), zero,
                       [(0, 0, 0)] * nb + [(k, 0, 0), (k, 0, 0)])
        u = ew.add(u, u_eye)
    la = triangular_solve_p.bind(l, x, left_side=True, lower=True, transpose_a=False,
                                 conjugate_a=False, unit_diagonal=True)
    lau = triangular_solve_p.bind(u, la, left_side=False, lower=False, transpose_a=False,
                                  conjugate_a=False, unit_diagonal=False)
    l_dot = matmul(l, tril(lau, -1))
    u_dot = matmul(triu(lau), u)
    return [lu, piv, perm], [ew.add(l_dot, u_dot), None, None]


_lu_jvp.symbolic_zeros = True
abstract_eval_rules[lu_p] = _lu_abstract
impl_rules[lu_p] = _lu_impl
ad.jvp_rules[lu_p] = _lu_jvp
_batch_leading(lu_p)
