"""SciPy's special matrices (``scipy.linalg.toeplitz`` … ``hadamard``) with JAX's
semantics.

Matrices built from array arguments are one gather: the entries the matrix can hold
(the arguments' values, a zero, a one) are laid out in a vector along the last axis, and
a constant index matrix, computed in NumPy from the static shapes, picks them. So they
differentiate, batch over leading axes and compile like any indexing. Matrices that
depend only on a size (``dft``, ``hilbert``, ``pascal`` …) are computed in NumPy at
trace time from that Python integer, exactly where an exact formula exists, and become
constants.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .. import dtypes
from ..core.trace import get_aval
from ..numpy import _creation as cr
from ..numpy._promote import asarray_weak, broadcast_shapes, check_arraylike
from ..numpy._shape import broadcast_to, concatenate
from ..numpy._ufuncs import abs as _abs, conj, negative

__all__ = ["block_diag", "toeplitz", "hankel", "circulant", "companion", "dft", "hilbert",
           "invhilbert", "pascal", "invpascal", "helmert", "leslie", "fiedler",
           "fiedler_companion", "convolution_matrix", "hadamard"]


def _arrays(name, *args, inexact=False):
    """The arguments at their common dtype (the default float for integer input when
    ``inexact``), at least 1-D, strongly typed."""
    check_arraylike(name, *args)
    dt, _ = dtypes.result_type_and_weak(*args)
    if inexact and not dtypes.is_inexact(dt):
        dt = dtypes.default_float()
    out = []
    for a in args:
        a = asarray_weak(a, dt, False)
        if len(get_aval(a).shape) == 0:
            a = a.reshape(1)
        out.append(a)
    return out


def _bcast_last(*arrs):
    """Broadcast the leading (batch) axes of arrays whose last axes differ."""
    batch = broadcast_shapes("broadcast", *[tuple(a.shape[:-1]) for a in arrs])
    return [broadcast_to(a, batch + (a.shape[-1],)) if tuple(a.shape[:-1]) != batch
            else a for a in arrs]


def _pick(parts, idx):
    """``concatenate(parts, -1)[..., idx]``: each part (..., k_i) after broadcasting its
    batch axes, ``idx`` a NumPy integer array into the concatenation."""
    parts = _bcast_last(*parts)
    vals = parts[0] if len(parts) == 1 else concatenate(parts, axis=-1)
    return vals[..., np.asarray(idx, np.int32)]


def _consts(like, *values):
    """(..., len(values)) constants of ``like``'s dtype and batch axes."""
    dt = get_aval(like).dtype
    c = cr.asarray(np.array(values, dt))
    return broadcast_to(c, tuple(like.shape[:-1]) + (len(values),))


def _size(n, name, what="n"):
    try:
        return operator.index(n)
    except TypeError:
        if isinstance(n, (float, np.floating)) and float(n).is_integer():
            return int(n)
        raise


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column ``c`` and first row ``r``.

    ``r`` defaults to ``conj(c)``; ``r[0]`` is ignored (the diagonal is ``c[0]``).
    Leading axes of ``c`` and ``r`` are batch axes (SciPy flattens them instead).

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.toeplitz(jnp.array([1, 2, 3]), jnp.array([1, 4, 5]))
    Array([[1, 4, 5],
           [2, 1, 4],
           [3, 2, 1]], dtype=int32)
    """
    if r is None:
        (c,) = _arrays("toeplitz", c)
        r = conj(c)
    else:
        c, r = _arrays("toeplitz", c, r)
    m, n = c.shape[-1], r.shape[-1]
    # vals = r[n-1], ..., r[1], c[0], ..., c[m-1]; entry (i, j) is vals[n-1+i-j].
    i, j = np.indices((m, n))
    return _pick([r[..., :0:-1], c], n - 1 + i - j)


def hankel(c, r=None):
    """The Hankel matrix with first column ``c`` and last row ``r``.

    ``r`` defaults to zeros (a square matrix); ``r[0]`` is ignored (the anti-diagonal
    starts at ``c[-1]``). Leading axes are batch axes.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.hankel(jnp.array([1, 2, 3]), jnp.array([9, 4, 5]))
    Array([[1, 2, 3],
           [2, 3, 4],
           [3, 4, 5]], dtype=int32)
    """
    if r is None:
        (c,) = _arrays("hankel", c)
        r = cr.zeros(tuple(c.shape), get_aval(c).dtype)
    else:
        c, r = _arrays("hankel", c, r)
    m, n = c.shape[-1], r.shape[-1]
    i, j = np.indices((m, n))
    return _pick([c, r[..., 1:]], i + j)


def circulant(c):
    """The circulant matrix with first column ``c`` (leading axes are batch axes).

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.circulant(jnp.array([1, 2, 3]))
    Array([[1, 3, 2],
           [2, 1, 3],
           [3, 2, 1]], dtype=int32)
    """
    (c,) = _arrays("circulant", c)
    n = c.shape[-1]
    i, j = np.indices((n, n))
    return _pick([c], (i - j) % n if n else i)


def companion(a):
    """The companion matrix of the polynomial with coefficients ``a`` (highest degree
    first): (n-1, n-1), first row ``-a[1:] / a[0]``, ones below the diagonal. Always
    floating point; leading axes are batch axes.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.companion(jnp.array([1, -3, 2]))
    Array([[ 3., -2.],
           [ 1.,  0.]], dtype=float32)
    """
    (a,) = _arrays("companion", a, inexact=True)
    n = a.shape[-1]
    if n < 2:
        raise ValueError("The length of `a` along the last axis must be at least 2; got "
                         f"shape {tuple(a.shape)}.")
    row = negative(a[..., 1:]) / a[..., :1]
    k = n - 1
    # vals = row (k entries), 0, 1.
    idx = np.full((k, k), k)
    idx[0] = np.arange(k)
    idx[np.arange(1, k), np.arange(k - 1)] = k + 1
    return _pick([row, _consts(row, 0, 1)], idx)


def fiedler(a):
    """The Fiedler matrix ``|a[i] - a[j]|`` (leading axes are batch axes).

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.fiedler(jnp.array([1, 4, 2]))
    Array([[0, 3, 1],
           [3, 0, 2],
           [1, 2, 0]], dtype=int32)
    """
    (a,) = _arrays("fiedler", a)
    return _abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients ``a`` (highest
    degree first): a pentadiagonal (n-1, n-1) matrix with the same eigenvalues as
    :func:`companion`. Always floating point; leading axes are batch axes. ``a[0] == 0``
    gives infinities or NaN (SciPy skips the normalisation then).

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.fiedler_companion(jnp.array([1, -3, 2]))
    Array([[ 3., -2.],
           [ 1.,  0.]], dtype=float32)
    """
    (a,) = _arrays("fiedler_companion", a, inexact=True)
    # One coefficient gives a (0, 0) matrix, as JAX (SciPy returns shape (0,)).
    n = a.shape[-1] - 1
    if n < 1:
        return cr.zeros(tuple(a.shape[:-1]) + (0, 0), get_aval(a).dtype)
    # vals = -a[1]/a[0], ..., -a[n]/a[0] (entry k-1 holds coefficient k), 0, 1.
    neg = negative(a[..., 1:]) / a[..., :1]
    zero, one = n, n + 1
    idx = np.full((n, n), zero)
    # Odd coefficients a[3], a[5], ... below the subdiagonal pattern; even ones above.
    for k in range(2, n + 1):
        if k % 2 == 0:             # a[k] at (k-2, k-1), a one at (k-2, k)
            idx[k - 2, k - 1] = k - 1
            if k < n:
                idx[k - 2, k] = one
        else:                      # a[k] at (k-1, k-2), a one at (k, k-2)
            idx[k - 1, k - 2] = k - 1
            if k < n:
                idx[k, k - 2] = one
    idx[0, 0] = 0
    if n > 1:
        idx[1, 0] = one
    return _pick([neg, _consts(neg, 0, 1)], idx)


def leslie(f, s):
    """The Leslie matrix: fecundities ``f`` (n,) in the first row, survival rates ``s``
    (n-1,) on the subdiagonal. Leading axes are batch axes.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.leslie(jnp.array([0.5, 1.0, 2.0]), jnp.array([0.25, 0.75]))
    Array([[0.5 , 1.  , 2.  ],
           [0.25, 0.  , 0.  ],
           [0.  , 0.75, 0.  ]], dtype=float32)
    """
    f, s = _arrays("leslie", f, s)
    n = f.shape[-1]
    if s.shape[-1] != n - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last "
                         "axis must be one less than the length of f; got f shape "
                         f"{tuple(f.shape)} and s shape {tuple(s.shape)}.")
    if n < 2:
        raise ValueError("The length of f along the last axis must be at least 2; got "
                         f"shape {tuple(f.shape)}.")
    zero = 2 * n - 1
    idx = np.full((n, n), zero)
    idx[0] = np.arange(n)
    idx[np.arange(1, n), np.arange(n - 1)] = n + np.arange(n - 1)
    return _pick([f, s, _consts(f, 0)], idx)


def convolution_matrix(a, n, mode="full"):
    """The matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for ``v`` of length ``n``.

    ``mode`` is 'full' (m+n-1 rows), 'valid' (max(m, n) - min(m, n) + 1) or 'same'
    (max(m, n)), as ``numpy.convolve``. ``n`` is a Python integer; leading axes of ``a``
    are batch axes.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.convolution_matrix(jnp.array([1, 2]), 2)
    Array([[1, 0],
           [2, 1],
           [0, 2]], dtype=int32)
    """
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    n = _size(n, "convolution_matrix")
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    (a,) = _arrays("convolution_matrix", a)
    m = a.shape[-1]
    if m == 0:
        raise ValueError("convolution_matrix: a must have at least one element")
    i, j = np.indices((m + n - 1, n))
    d = i - j
    idx = np.where((d >= 0) & (d < m), d, m)
    if mode == "valid":
        idx = idx[min(m, n) - 1:max(m, n)]
    elif mode == "same":
        trim = min(m, n) - 1
        idx = idx[trim // 2:m + n - 1 - (trim - trim // 2)]
    return _pick([a, _consts(a, 0)], idx)


def block_diag(*arrs):
    """The block-diagonal matrix of the arguments (scalars and vectors are 1 x 1 and
    1 x k blocks), at their common dtype. No arguments give a (1, 0) float matrix, as
    SciPy and JAX.

    Examples
    --------
    >>> import absjit.numpy as jnp, absjit.scipy.linalg as sla
    >>> sla.block_diag(jnp.array([[1, 2], [3, 4]]), jnp.array([5]))
    Array([[1, 2, 0],
           [3, 4, 0],
           [0, 0, 5]], dtype=int32)
    """
    if not arrs:
        return cr.zeros((1, 0), dtypes.default_float())
    check_arraylike("block_diag", *arrs)
    dt, _ = dtypes.result_type_and_weak(*arrs)
    blocks = []
    for k, a in enumerate(arrs):
        a = asarray_weak(a, dt, False)
        nd = len(get_aval(a).shape)
        if nd > 2:
            raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                             f"dimensions, got shape {tuple(a.shape)} at argument {k}.")
        blocks.append(a.reshape((1,) * (2 - nd) + tuple(a.shape)))
    total = sum(b.shape[1] for b in blocks)
    rows, col = [], 0
    for b in blocks:
        r, c = b.shape
        parts = [cr.zeros((r, col), dt), b, cr.zeros((r, total - col - c), dt)]
        rows.append(concatenate(parts, axis=1))
        col += c
    return concatenate(rows, axis=0)


# ---------------------------------------------------------------------------
# Matrices of a size alone (computed in NumPy from the Python integer n)
# ---------------------------------------------------------------------------
def _const(value, dtype):
    return cr.asarray(np.asarray(value).astype(dtypes.canonicalize_dtype(dtype)))


def dft(n, scale=None, *, dtype=None):
    """The discrete Fourier transform matrix ``exp(-2j pi jk / n)``, divided by
    ``sqrt(n)`` (``scale='sqrtn'``) or ``n`` (``'n'``). The phases are reduced modulo
    ``n`` first, so the entries are exact to rounding of one ``exp``.

    Examples
    --------
    >>> import absjit.scipy.linalg as sla
    >>> sla.dft(2).real
    Array([[ 1.,  1.],
           [ 1., -1.]], dtype=float32)
    """
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    n = _size(n, "dft")
    jk = np.outer(np.arange(n), np.arange(n)) % max(n, 1)
    m = np.exp(-2j * np.pi * jk / max(n, 1))
    if scale == "sqrtn":
        m = m / math.sqrt(n)
    elif scale == "n":
        m = m / n
    dt = dtypes.default_complex() if dtype is None else dtype
    return _const(m, dt)


def hilbert(n):
    """The Hilbert matrix ``1 / (i + j + 1)`` of size ``n``.

    Examples
    --------
    >>> import absjit.scipy.linalg as sla
    >>> 1 / sla.hilbert(3)
    Array([[1., 2., 3.],
           [2., 3., 4.],
           [3., 4., 5.]], dtype=float32)
    """
    n = _size(n, "hilbert")
    i, j = np.indices((n, n))
    return _const(1.0 / (i + j + 1.0), dtypes.default_float())


def invhilbert(n):
    """The inverse of the Hilbert matrix of size ``n``, from its closed form in exact
    integer arithmetic (JAX evaluates it in floating point; the entries here are the
    exact integers rounded once).

    Examples
    --------
    >>> import absjit.scipy.linalg as sla
    >>> sla.invhilbert(2)
    Array([[ 4., -6.],
           [-6., 12.]], dtype=float32)
    """
    n = _size(n, "invhilbert")
    c = math.comb
    m = np.empty((n, n), object)
    for i in range(n):
        for j in range(n):
            m[i, j] = ((-1) ** (i + j) * (i + j + 1) * c(n + i, n - j - 1)
                       * c(n + j, n - i - 1) * c(i + j, i) ** 2)
    return _const(m.astype(np.float64), dtypes.default_float())


def _pascal_lower(n):
    m = np.zeros((n, n), object)
    for i in range(n):
        for j in range(i + 1):
            m[i, j] = math.comb(i, j)
    return m


def _kind(kind):
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError("Expected kind to be one of: ['symmetric', 'lower', 'upper']; "
                         f"got {kind}")
    return kind


def pascal(n, kind=None):
    """The Pascal matrix of size ``n``: 'symmetric' (the default, ``C(i+j, i)``),
    'lower' (``C(i, j)``) or 'upper', from exact binomial coefficients. Floating point
    as JAX (SciPy returns integers).

    Examples
    --------
    >>> import absjit.scipy.linalg as sla
    >>> sla.pascal(3)
    Array([[1., 1., 1.],
           [1., 2., 3.],
           [1., 3., 6.]], dtype=float32)
    """
    kind = _kind(kind)
    n = _size(n, "pascal")
    low = _pascal_lower(n)
    m = {"lower": low, "upper": low.T, "symmetric": low.dot(low.T) if n else low}[kind]
    return _const(m.astype(np.float64), dtypes.default_float())


def invpascal(n, kind=None):
    """The inverse of :func:`pascal` ``(n, kind)``, in exact integer arithmetic (the
    lower factor's inverse is ``(-1)^(i-j) C(i, j)``).

    Examples
    --------
    >>> import absjit.scipy.linalg as sla
    >>> sla.invpascal(3)
    Array([[ 3., -3.,  1.],
           [-3.,  5., -2.],
           [ 1., -2.,  1.]], dtype=float32)
    """
    kind = _kind(kind)
    n = _size(n, "invpascal")
    low = _pascal_lower(n)
    i, j = np.indices((n, n))
    inv_low = np.where((i - j) % 2 == 0, low, -low) if n else low
    m = {"lower": inv_low, "upper": inv_low.T,
         "symmetric": inv_low.T.dot(inv_low) if n else low}[kind]
    return _const(np.asarray(m, np.float64), dtypes.default_float())


def helmert(n, full=False):
    """The Helmert matrix of size ``n``: orthonormal rows, the first (kept only with
    ``full``) constant ``1 / sqrt(n)``, row ``i`` holding ``i`` entries
    ``1 / sqrt(i (i + 1))`` then ``-i / sqrt(i (i + 1))``.

    Examples
    --------
    >>> import absjit.scipy.linalg as sla
    >>> (sla.helmert(2, full=True) * 2 ** 0.5).round(3)
    Array([[ 1.,  1.],
           [ 1., -1.]], dtype=float32)
    """
    n = _size(n, "helmert")
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i, j = np.indices((n, n))
    d = np.sqrt(np.maximum(i * (i + 1), 1).astype(np.float64))
    m = np.where(j < i, 1.0, np.where(j == i, -i, 0.0)) / d
    m[0] = 1.0 / math.sqrt(n)
    return _const(m if full else m[1:], dtypes.default_float())


def hadamard(n, dtype=int):
    """The Sylvester-construction Hadamard matrix of size ``n`` (a power of 2).

    Examples
    --------
    >>> import absjit.scipy.linalg as sla
    >>> sla.hadamard(2)
    Array([[ 1,  1],
           [ 1, -1]], dtype=int32)
    """
    n = _size(n, "hadamard")
    if n < 1 or n & (n - 1):
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    m = np.ones((1, 1), np.int64)
    while m.shape[0] < n:
        m = np.block([[m, m], [m, -m]])
    return _const(m, dtype)
