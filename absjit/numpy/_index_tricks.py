"""Index helpers (``tril_indices`` and friends) and ``vectorize``."""
from __future__ import annotations

import functools
import operator
import re

import numpy as np

from .. import dtypes
from ..array import Array
from ..core.dims import is_dim, unify_sizes
from ..core.shapes import broadcast_shapes
from ..errors import InconclusiveDimensionError
from ._creation import arange, array, asarray, meshgrid, zeros
from ._promote import check_arraylike
from ._ranges import linspace
from ._searching import nonzero
from ._shape import broadcast_to, concatenate, reshape, stack, transpose

__all__ = ["tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
           "diag_indices", "diag_indices_from", "vectorize", "ix_", "mgrid", "ogrid", "r_",
           "c_", "s_", "index_exp"]


def _as_int_arrays(arrays):
    dt = dtypes.default_int()
    return tuple(Array._new(np.asarray(a).astype(dt), False) for a in arrays)


def _int(name, v):
    if is_dim(v):  # the indices' count depends on it (ranked level)
        raise InconclusiveDimensionError(v, f"{name} of a triangle's indices")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{name} must be a concrete integer, got {v!r}") from None


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle of an ``(n, m)`` array.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.tril_indices(2)
    (Array([0, 1, 1], dtype=int32), Array([0, 0, 1], dtype=int32))
    """
    m = n if m is None else m
    return _as_int_arrays(np.tril_indices(_int("n", n), _int("k", k), _int("m", m)))


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle of an ``(n, m)`` array.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.triu_indices(2)
    (Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))
    """
    m = n if m is None else m
    return _as_int_arrays(np.triu_indices(_int("n", n), _int("k", k), _int("m", m)))


def _shape2(arr, name):
    shape = np.shape(arr)
    if len(shape) != 2:
        raise ValueError(f"{name} requires a 2-dimensional array, got shape {shape}")
    return shape


def tril_indices_from(arr, k=0):
    """``tril_indices`` for the shape of the 2-D ``arr``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.tril_indices_from(jnp.ones((2, 3)))[1]
    Array([0, 0, 1], dtype=int32)
    """
    n, m = _shape2(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    """``triu_indices`` for the shape of the 2-D ``arr``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.triu_indices_from(jnp.ones((2, 2)))[1]
    Array([0, 1, 1], dtype=int32)
    """
    n, m = _shape2(arr, "triu_indices_from")
    return triu_indices(n, k, m)


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an ``(n,) * ndim`` array.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.diag_indices(2)
    (Array([0, 1], dtype=int32), Array([0, 1], dtype=int32))
    """
    if is_dim(n):  # ranked: ``arange(n)`` per axis
        return (arange(n),) * _int("ndim", ndim)
    n, ndim = _int("n", n), _int("ndim", ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return _as_int_arrays(np.diag_indices(n, ndim))


def diag_indices_from(arr):
    """``diag_indices`` of the square array ``arr``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> jnp.diag_indices_from(jnp.ones((2, 2)))[0]
    Array([0, 1], dtype=int32)
    """
    shape = np.shape(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if not all(unify_sizes(d, shape[0], "jnp.diag_indices_from") for d in shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


_DIM = r"\w+"
_CORE = rf"\((?:{_DIM}(?:,{_DIM})*)?\)"
_ARGS = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(signature):
    sig = signature.replace(" ", "")
    if not _SIGNATURE.match(sig):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = sig.split("->")

    def parse(part):
        return [tuple(d for d in grp.split(",") if d) for grp in re.findall(r"\((.*?)\)", part)]
    return parse(ins), parse(outs)


class vectorize:  # noqa: N801 - NumPy's name
    """A function of scalars (or of core arrays, with ``signature``) mapped over the
    broadcast leading dimensions of its arguments with ``vmap``.

    Parameters
    ----------
    pyfunc : callable
    excluded : set of int or str
        Positional indices or keyword names passed through unchanged.
    signature : str, optional
        A generalised-ufunc signature such as ``"(n),(n)->()"``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> clip_at = jnp.vectorize(lambda a, b: jnp.minimum(a, b))
    >>> clip_at(jnp.array([1.0, 7.0]), 5.0)
    Array([1., 5.], dtype=float32)
    >>> dot = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
    >>> dot(jnp.ones((3, 2)), jnp.ones(2))
    Array([2., 2., 2.], dtype=float32)
    """

    def __init__(self, pyfunc, *, excluded=frozenset(), signature=None):
        self.pyfunc = pyfunc
        self.excluded = frozenset(excluded)
        self.signature = signature
        self._parsed = _parse_signature(signature) if signature is not None else None
        functools.update_wrapper(self, pyfunc)

    def __call__(self, *args, **kwargs):
        from ..api_transforms import vmap  # loads after absjit.numpy
        excluded_kw = {k: v for k, v in kwargs.items() if k in self.excluded}
        dyn_kw = {k: v for k, v in kwargs.items() if k not in self.excluded}
        if dyn_kw:
            # keyword arguments are mapped too: make them positional
            names = sorted(dyn_kw)
            n_pos = len(args)

            def f_pos(*all_args):
                pos, kw = all_args[:n_pos], dict(zip(names, all_args[n_pos:]))
                return self.pyfunc(*pos, **kw, **excluded_kw)
            inner = vectorize(f_pos, excluded=self.excluded & set(range(n_pos)),
                              signature=self.signature)
            return inner(*args, *[dyn_kw[k] for k in names])
        dyn_pos = [i for i in range(len(args)) if i not in self.excluded]
        arrays = [asarray(args[i]) for i in dyn_pos]
        if self._parsed is not None:
            in_core, out_core = self._parsed
            if len(in_core) != len(arrays):
                raise TypeError(f"wrong number of positional arguments: expected "
                                f"{len(in_core)}, got {len(arrays)}")
        else:
            in_core, out_core = [()] * len(arrays), None
        sizes = {}
        loop_shapes = []
        for a, core in zip(arrays, in_core):
            if a.ndim < len(core):
                raise ValueError(f"input with shape {a.shape} does not have enough "
                                 f"dimensions for its core dimensions {core}")
            core_shape = a.shape[a.ndim - len(core):]
            for name, size in zip(core, core_shape):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"inconsistent size for core dimension {name!r}: "
                                     f"{size} vs {sizes[name]}")
            loop_shapes.append(a.shape[:a.ndim - len(core)])
        loop = broadcast_shapes(*loop_shapes) if loop_shapes else ()
        arrays = [broadcast_to(a, loop + a.shape[a.ndim - len(core):])
                  for a, core in zip(arrays, in_core)]

        def core_fn(*core_args):
            full = list(args)
            for i, v in zip(dyn_pos, core_args):
                full[i] = v
            out = self.pyfunc(*full, **excluded_kw)
            if out_core is not None:
                outs = out if isinstance(out, tuple) else (out,)
                if len(outs) != len(out_core):
                    raise ValueError(f"wrong number of outputs from pyfunc: expected "
                                     f"{len(out_core)}, got {len(outs)}")
                for o, core in zip(outs, out_core):
                    if np.ndim(o) != len(core):
                        raise ValueError(f"output of rank {np.ndim(o)} does not match its "
                                         f"core dimensions {core}")
            return out
        f = core_fn
        for _ in range(len(loop)):
            f = vmap(f)
        if not loop:
            return core_fn(*arrays)
        return f(*arrays)


# ---------------------------------------------------------------------------
# ix_, mgrid, ogrid, r_, c_, s_, index_exp
# ---------------------------------------------------------------------------
def ix_(*args):
    """Open-mesh index arrays from 1-D sequences: the ``i``-th has its entries along
    axis ``i`` and size 1 elsewhere.

    Boolean sequences become their non-zero indices, as in NumPy (so they must be
    concrete); JAX does not accept them.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> rows, cols = jnp.ix_(jnp.array([0, 2]), jnp.array([1, 2, 3]))
    >>> rows.shape, cols.shape
    ((2, 1), (1, 3))
    """
    check_arraylike("ix_", *args)
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = asarray(a)
        if a.ndim != 1:
            raise ValueError(f"Cross index must be 1 dimensional, got {a.ndim}")
        if a.dtype == np.bool_:
            a = nonzero(a)[0]
        out.append(reshape(a, (1,) * i + (a.shape[0],) + (1,) * (n - i - 1)))
    return tuple(out)


def _grid_1d(s, name):
    """The 1-D grid a slice stands for: ``arange(start, stop, step)``, or ``|step|``
    points from ``start`` to ``stop`` inclusive when ``step`` is imaginary."""
    parts = []
    for v in (s.start, s.stop, s.step):
        if v is not None and not isinstance(v, (int, float, complex, np.number)):
            raise TypeError(f"{name}: slice bounds must be concrete Python numbers, got "
                            f"{v!r}")
        parts.append(v)
    start, stop, step = parts
    start = 0 if start is None else start
    step = 1 if step is None else step
    if isinstance(step, (complex, np.complexfloating)):
        return linspace(start, stop, int(abs(step)))
    return arange(start, stop, step)


class _Grid:
    """``mgrid`` (dense, stacked) and ``ogrid`` (open, a list) index helpers."""

    def __init__(self, sparse, name):
        self.sparse, self.name = sparse, name

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_1d(key, self.name)
        grids = [_grid_1d(k, self.name) for k in key]
        if not grids:
            return [] if self.sparse else arange(0)
        grids = meshgrid(*grids, indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else stack(grids, 0)

    def __repr__(self):
        return f"absjit.numpy.{self.name}"


mgrid = _Grid(False, "mgrid")
mgrid.__doc__ = """Dense index grids from slices: ``mgrid[0:2, 0:3]`` is a ``(2, 2, 3)``
array; an imaginary step ``5j`` means five points, end included.

Examples
--------
>>> import absjit.numpy as jnp
>>> jnp.mgrid[0:2, 0:2]
Array([[[0, 0],
        [1, 1]],
<BLANKLINE>
       [[0, 1],
        [0, 1]]], dtype=int32)
"""
ogrid = _Grid(True, "ogrid")
ogrid.__doc__ = """Open (broadcastable) index grids from slices.

Examples
--------
>>> import absjit.numpy as jnp
>>> jnp.ogrid[0:2, 0:3]
[Array([[0],
       [1]], dtype=int32), Array([[0, 1, 2]], dtype=int32)]
"""


class _AxisConcat:
    """``r_`` and ``c_``: concatenate slices, scalars and arrays along an axis.

    A leading string ``"axis[,ndmin[,trans1d]]"`` overrides the defaults: arrays get at
    least ``ndmin`` dimensions, and ``trans1d`` says where an upgraded array's own axes go
    (NumPy's rule). The matrix directives ``'r'`` and ``'c'`` are not supported (there is
    no matrix class), as in JAX.
    """

    def __init__(self, axis, ndmin, trans1d, name):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive in ("r", "c"):
                raise ValueError(f"{self.name}: matrix directives 'r' and 'c' are not "
                                 "supported")
            try:
                vec = [int(v) for v in directive.split(",")]
            except ValueError:
                raise ValueError(f"{self.name}: could not parse the directive "
                                 f"{directive!r}") from None
            if len(vec) > 3:
                raise ValueError(f"{self.name}: a directive has at most three integers, "
                                 f"got {directive!r}")
            axis, ndmin, trans1d = (vec + [axis, ndmin, trans1d][len(vec):])
        parts = []
        for item in items:
            if isinstance(item, slice):
                x, item_ndim = _grid_1d(item, self.name), 1
            elif isinstance(item, str):
                raise ValueError(f"{self.name}: a string directive must come first")
            else:
                x = asarray(item)
                item_ndim = x.ndim
            x = array(x, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin > item_ndim:
                # NumPy's rule: the padded array's axes are ``k`` new ones then the
                # item's own; the new ones from ``t`` on move after the item's axes
                # (``t`` counted from ``k + 1`` back when negative).
                k = ndmin - item_ndim
                t = trans1d + k + 1 if trans1d < 0 else trans1d
                ax = list(range(ndmin))
                x = transpose(x, tuple(ax[:t] + ax[k:] + ax[t:k]))
            parts.append(x)
        if not parts:
            return zeros((0,))
        return concatenate(parts, axis=axis)

    def __len__(self):
        return 0

    def __repr__(self):
        return f"absjit.numpy.{self.name}"


r_ = _AxisConcat(0, 1, -1, "r_")
r_.__doc__ = """Concatenate slices, scalars and arrays along the first axis.

Examples
--------
>>> import absjit.numpy as jnp
>>> jnp.r_[jnp.array([1, 2]), 0, 3:5]
Array([1, 2, 0, 3, 4], dtype=int32)
"""
c_ = _AxisConcat(-1, 2, 0, "c_")
c_.__doc__ = """Concatenate along the last axis, 1-D arrays as columns.

Examples
--------
>>> import absjit.numpy as jnp
>>> jnp.c_[jnp.array([1, 2]), jnp.array([3, 4])]
Array([[1, 3],
       [2, 4]], dtype=int32)
"""
# Plain index-expression builders: nothing array-specific, NumPy's own serve.
s_ = np.s_
index_exp = np.index_exp
