"""``absjit.scipy.interpolate``: interpolation on a rectilinear grid
(``jax.scipy.interpolate.RegularGridInterpolator``)."""
from __future__ import annotations

import itertools

from .. import dtypes
from .. import numpy as jnp
from ..numpy._promote import check_arraylike
from ..tree_util import register_pytree_node_class

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _as_points(xi, ndim):
    """``xi`` as one array of shape ``(..., ndim)``; a tuple of arrays is broadcast and
    stacked along a new last axis."""
    if isinstance(xi, tuple):
        check_arraylike("RegularGridInterpolator", *xi)
        if len(xi) != ndim:
            raise ValueError(f"the tuple xi has {len(xi)} coordinate arrays, but the grid "
                             f"has {ndim} dimensions")
        parts = jnp.broadcast_arrays(*xi)
        return jnp.stack(parts, axis=-1)
    check_arraylike("RegularGridInterpolator", xi)
    xi = jnp.asarray(xi)
    if xi.ndim == 1 and xi.shape[0] % ndim == 0:
        xi = xi.reshape(-1, ndim)   # one point, or points on a 1-D grid (as JAX)
    if xi.ndim == 0 or xi.shape[-1] != ndim:
        raise ValueError(f"the requested sample points xi have dimension "
                         f"{xi.shape[-1] if xi.ndim else 0}, but this "
                         f"RegularGridInterpolator has dimension {ndim}")
    return xi


@register_pytree_node_class
class RegularGridInterpolator:
    """Interpolation of ``values`` given on the grid ``points`` (one increasing 1-D array
    per dimension), linear or nearest-neighbour, with ``fill_value`` outside the grid
    (``None`` extrapolates). A pytree: the grid, the values and ``fill_value`` are its
    leaves, so an instance passes through ``jit`` and ``vmap``.

    ``bounds_error=True`` raises ``NotImplementedError`` (as in JAX: an error depending on
    values cannot be raised under ``jit``). Integer values are interpolated as the
    default float type.

    Examples
    --------
    >>> from absjit.scipy.interpolate import RegularGridInterpolator
    >>> f = RegularGridInterpolator((jnp.array([0., 1.]),), jnp.array([0., 10.]))
    >>> f(jnp.array([[0.25], [2.0]]))
    Array([2.5, nan], dtype=float32)
    """

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=float("nan")):
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        self.method = method
        self.bounds_error = bounds_error
        check_arraylike("RegularGridInterpolator", values)
        values = jnp.asarray(values)
        if not dtypes.is_inexact(values.dtype):
            values = values.astype(dtypes.default_float())
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        grid = []
        for i, p in enumerate(points):
            check_arraylike("RegularGridInterpolator", p)
            p = jnp.asarray(p)
            if p.ndim != 1:
                raise ValueError(f"the points in dimension {i} must be 1-dimensional")
            if p.shape[0] != values.shape[i]:
                raise ValueError(f"there are {p.shape[0]} points and {values.shape[i]} "
                                 f"values in dimension {i}")
            grid.append(p)
        self.grid = tuple(grid)
        self.values = values
        self.fill_value = None if fill_value is None else jnp.asarray(fill_value)

    def __call__(self, xi, method=None):
        """Interpolated values at ``xi`` (shape ``(..., ndim)`` or a tuple of ``ndim``
        coordinate arrays); ``method`` overrides the one given at construction."""
        method = self.method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _as_points(xi, ndim)
        lead = xi.shape[:-1]
        xi = xi.reshape(-1, ndim)
        indices, weights, outside = [], [], None
        for d, g in enumerate(self.grid):
            x = xi[:, d]
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, max(g.shape[0] - 2, 0))
            upper = jnp.minimum(i + 1, g.shape[0] - 1)
            span = g[upper] - g[i]
            t = jnp.where(span != 0, (x - g[i]) / jnp.where(span != 0, span, 1), 0)
            indices.append(i)
            weights.append(t)
            out = (x < g[0]) | (x > g[-1])
            outside = out if outside is None else outside | out
        trailing = self.values.shape[ndim:]
        expand = (slice(None),) + (None,) * len(trailing)
        if method == "linear":
            result = None
            for corner in itertools.product((0, 1), repeat=ndim):
                idx = tuple(jnp.minimum(i + c, n - 1) for i, c, n in
                            zip(indices, corner, self.values.shape))
                w = None
                for t, c in zip(weights, corner):
                    wd = t if c else 1 - t
                    w = wd if w is None else w * wd
                term = self.values[idx] * w.astype(self.values.dtype)[expand]
                result = term if result is None else result + term
        else:
            idx = tuple(jnp.where(t <= 0.5, i, jnp.minimum(i + 1, n - 1))
                        for i, t, n in zip(indices, weights, self.values.shape))
            result = self.values[idx]
        if self.fill_value is not None:
            result = jnp.where(outside[expand], self.fill_value.astype(result.dtype), result)
        return result.reshape(lead + trailing)

    def tree_flatten(self):
        return (self.grid, self.values, self.fill_value), (self.method, self.bounds_error)

    @classmethod
    def tree_unflatten(cls, aux, children):
        grid, values, fill_value = children
        self = object.__new__(cls)
        self.method, self.bounds_error = aux
        self.grid, self.values, self.fill_value = grid, values, fill_value
        return self
