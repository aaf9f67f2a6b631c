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
from ._creation import asarray

__all__ = ["tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from",
           "diag_indices", "diag_indices_from", "vectorize"]


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
        from ._creation import arange
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
        from ..api_transforms import vmap
        from ._shape import broadcast_to
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
