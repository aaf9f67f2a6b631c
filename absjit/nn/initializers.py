"""Parameter initializers, as in ``jax.nn.initializers``.

Each factory returns ``init(key, shape, dtype=...) -> Array`` drawing from
``absjit.random``, so initializers are pure functions of their key and trace like any
other code.

Examples
--------
>>> from absjit import random
>>> from absjit.nn import initializers
>>> w = initializers.glorot_normal()(random.PRNGKey(0), (3, 4))
>>> w.shape, w.dtype
((3, 4), dtype('float32'))
"""
from __future__ import annotations

import math
import operator
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .. import dtypes, random
from .. import numpy as jnp
from ..ops import elementwise as ew

__all__ = ["orthogonal", "zeros", "ones", "constant", "normal", "uniform", "truncated_normal",
           "variance_scaling", "glorot_normal", "glorot_uniform", "xavier_normal",
           "xavier_uniform", "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform",
           "lecun_normal", "lecun_uniform", "delta_orthogonal", "Initializer"]


@runtime_checkable
class Initializer(Protocol):
    """The type of an initializer: ``init(key, shape, dtype=...) -> Array`` (a
    structural protocol, as ``jax.nn.initializers.Initializer``; every factory here
    returns one).

    Examples
    --------
    >>> from absjit.nn import initializers
    >>> isinstance(initializers.zeros, initializers.Initializer)
    True
    """

    def __call__(self, key: Any, shape: Any, dtype: Any = None) -> Any:
        ...


def _dtype(dtype):
    dt = dtypes.default_float() if dtype is None else np.dtype(dtype)
    if not dtypes.is_float(dt):
        raise TypeError(f"initializers draw floating-point values; got dtype {dt.name}")
    return dtypes.canonicalize_dtype(dt)


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"an initializer's shape must be a sequence of integers, got "
                        f"{shape!r}") from None


def zeros(key, shape, dtype=None):
    """An array of zeros (``key`` is unused).

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> initializers.zeros(random.PRNGKey(0), (2,))
    Array([0., 0.], dtype=float32)
    """
    return jnp.zeros(_shape(shape), _dtype(dtype))


def ones(key, shape, dtype=None):
    """An array of ones (``key`` is unused).

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> initializers.ones(random.PRNGKey(0), (2,))
    Array([1., 1.], dtype=float32)
    """
    return jnp.ones(_shape(shape), _dtype(dtype))


def constant(value, dtype=None):
    """An initializer filling the array with ``value``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> initializers.constant(-7.0)(random.PRNGKey(0), (2,))
    Array([-7., -7.], dtype=float32)
    """
    def init(key, shape, dtype=dtype):
        return jnp.full(_shape(shape), value, _dtype(dtype))
    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer drawing from ``N(0, stddev**2)``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> initializers.normal(0.1)(random.PRNGKey(0), (2, 3)).shape
    (2, 3)
    """
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.normal(key, _shape(shape), dt) * jnp.asarray(stddev, dt)
    return init


def uniform(scale=1e-2, dtype=None):
    """An initializer drawing from ``U[0, scale)``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> w = initializers.uniform(2.0)(random.PRNGKey(0), (100,))
    >>> bool((w >= 0).all() and (w < 2).all())
    True
    """
    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return random.uniform(key, _shape(shape), dt) * jnp.asarray(scale, dt)
    return init


# Giles' single-precision approximation of erfinv ("Approximating the erfinv function",
# GPU Computing Gems, 2010): the same polynomial XLA uses for float32. Only the sampler
# below needs it.
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erfinv(x):
    w = -jnp.log1p(-x * x)
    central = w - 2.5
    tail = jnp.sqrt(jnp.maximum(w, 5.0)) - 3.0
    p_c = jnp.full_like(x, _ERFINV_CENTRAL[0])
    p_t = jnp.full_like(x, _ERFINV_TAIL[0])
    for c, t in zip(_ERFINV_CENTRAL[1:], _ERFINV_TAIL[1:]):
        p_c = c + p_c * central
        p_t = t + p_t * tail
    return jnp.where(w < 5.0, p_c, p_t) * x


def _truncated_normal(key, lower, upper, shape, dtype):
    """Standard normal truncated to ``[lower, upper]`` by inverting the CDF of a uniform
    draw between ``erf(lower / sqrt 2)`` and ``erf(upper / sqrt 2)`` (JAX's method)."""
    sqrt2 = math.sqrt(2.0)
    a, b = math.erf(lower / sqrt2), math.erf(upper / sqrt2)
    u = random.uniform(key, shape, dtype, minval=a, maxval=b)
    out = jnp.asarray(sqrt2, dtype) * _erfinv(u)
    lo = np.nextafter(np.asarray(lower, dtype), np.asarray(np.inf, dtype))
    hi = np.nextafter(np.asarray(upper, dtype), np.asarray(-np.inf, dtype))
    return ew.clamp(jnp.asarray(lo), out, jnp.asarray(hi))


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer drawing from a normal truncated to ``[lower, upper]`` standard
    deviations, then scaled by ``stddev``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> w = initializers.truncated_normal(1.0)(random.PRNGKey(0), (1000,))
    >>> bool((abs(w) <= 2).all())
    True
    """
    lower, upper = float(lower), float(upper)
    if not lower < upper:
        raise ValueError(f"truncated_normal needs lower < upper, got {lower} and {upper}")

    def init(key, shape, dtype=dtype):
        dt = _dtype(dtype)
        return _truncated_normal(key, lower, upper, _shape(shape), dt) * \
            jnp.asarray(stddev, dt)
    return init


def _prod(xs) -> int:
    return math.prod(xs)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """``(fan_in, fan_out)``: axes outside in/out/batch are the receptive field."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-"
                         "dimensional weights tensor with default in_axis. Must be at "
                         "least 2D or specify in_axis explicitly.")

    def size(axes):
        return shape[axes] if isinstance(axes, int) else _prod(shape[i] for i in axes)
    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive = _prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """An initializer with variance ``scale / n``, ``n`` set by ``mode`` from the fans.

    Parameters
    ----------
    scale : float
    mode : {"fan_in", "fan_out", "fan_avg", "fan_geo_avg"}
    distribution : {"truncated_normal", "normal", "uniform"}
        ``truncated_normal`` cuts at two standard deviations before scaling.
    in_axis, out_axis, batch_axis : int or sequence of int
        The axes of the inputs, outputs and batch; the others are the receptive field.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> init = initializers.variance_scaling(2.0, "fan_in", "normal")
    >>> init(random.PRNGKey(0), (64, 32)).shape
    (64, 32)
    """
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    def init(key, shape, dtype=dtype):
        shape = _shape(shape)
        dt = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out,
                       "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = np.asarray(scale / denominator, dt)
        if distribution == "truncated_normal":
            # 0.8796... is the standard deviation of a standard normal cut at +-2.
            stddev = np.sqrt(variance) / np.asarray(.87962566103423978, dt)
            return _truncated_normal(key, -2.0, 2.0, shape, dt) * jnp.asarray(stddev)
        if distribution == "normal":
            return random.normal(key, shape, dt) * jnp.asarray(np.sqrt(variance))
        return random.uniform(key, shape, dt, -1, 1) * jnp.asarray(np.sqrt(3 * variance))
    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(1.0, "fan_avg", "uniform")`` (Glorot & Bengio, 2010).

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> initializers.glorot_uniform()(random.PRNGKey(0), (2, 3)).shape
    (2, 3)
    """
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(1.0, "fan_avg", "truncated_normal")``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> initializers.glorot_normal()(random.PRNGKey(0), (2, 3)).shape
    (2, 3)
    """
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(1.0, "fan_in", "uniform")``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> initializers.lecun_uniform()(random.PRNGKey(0), (2, 3)).shape
    (2, 3)
    """
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(1.0, "fan_in", "truncated_normal")``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> initializers.lecun_normal()(random.PRNGKey(0), (2, 3)).shape
    (2, 3)
    """
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(2.0, "fan_in", "uniform")`` (He et al., 2015).

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> initializers.he_uniform()(random.PRNGKey(0), (2, 3)).shape
    (2, 3)
    """
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """``variance_scaling(2.0, "fan_in", "truncated_normal")``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> initializers.he_normal()(random.PRNGKey(0), (2, 3)).shape
    (2, 3)
    """
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis,
                            batch_axis, dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Initializer of (stacks of) matrices with orthonormal columns or rows, scaled.

    The matrix is the ``Q`` of a QR decomposition of a standard normal matrix, with
    its columns' signs fixed by ``R``'s diagonal so that the result is uniformly
    distributed over orthogonal matrices (as ``jax.nn.initializers.orthogonal``).
    ``shape[column_axis]`` is the number of columns; the other axes are flattened into
    rows.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> q = initializers.orthogonal()(random.PRNGKey(0), (3, 3))
    >>> bool(jnp.allclose(q @ q.T, jnp.eye(3), atol=1e-5))
    True
    """
    def init(key, shape, dtype=dtype):
        shape = _shape(shape)
        dt = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError(f"orthogonal initializer requires at least a 2-D shape, "
                             f"got {shape}")
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols if n_cols else 0
        tall = n_rows >= n_cols
        a = random.normal(key, (n_rows, n_cols) if tall else (n_cols, n_rows), dt)
        q, r = jnp.linalg.qr(a)
        q = q * jnp.sign(jnp.diagonal(r))[None, :]
        if not tall:
            q = q.T
        rest = tuple(d for k, d in enumerate(shape) if k != column_axis % len(shape))
        q = jnp.moveaxis(jnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return (scale * q).astype(dt)
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """Initializer for convolution kernels of shape ``(*spatial, in, out)`` (1 to 3
    spatial axes) that are zero except at the spatial centre, which holds an
    orthogonal ``(in, out)`` matrix (Xiao et al., 2018), as
    ``jax.nn.initializers.delta_orthogonal``. Needs ``in <= out``. The centre of an
    axis of size ``k`` is ``(k - 1) // 2``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.nn import initializers
    >>> w = initializers.delta_orthogonal()(random.PRNGKey(0), (3, 2, 2))
    >>> [float(abs(w[i]).sum()) > 0 for i in range(3)]
    [False, True, False]
    """
    def init(key, shape, dtype=dtype):
        shape = _shape(shape)
        dt = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-2] > shape[-1]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale, column_axis, dt)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dt).at[centre].set(ortho)
    return init
