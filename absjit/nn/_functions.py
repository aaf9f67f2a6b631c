"""Activation functions and friends, as in ``jax.nn``, written with ``absjit.numpy``.

Every function is a composite of existing primitives, so it traces, differentiates,
batches and compiles like user code. ``relu`` and ``relu6`` carry a custom JVP that
gives JAX's derivative at the kinks (0 at ``x == 0``, and at ``x == 6`` for ``relu6``);
``softmax`` and ``log_softmax`` subtract the (gradient-stopped) maximum first, so they
are finite for large inputs.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from .. import numpy as jnp
from ..core.dims import is_dim
from ..core.trace import Tracer
from ..custom_derivatives import custom_jvp
from ..errors import ConcretizationTypeError
from ..ops import elementwise as ew
from ..ops.elementwise import stop_gradient

__all__ = ["relu", "relu6", "gelu", "silu", "swish", "sigmoid", "log_sigmoid", "softplus",
           "elu", "selu", "celu", "leaky_relu", "hard_tanh", "hard_sigmoid", "hard_silu",
           "hard_swish", "soft_sign", "identity", "tanh", "glu", "softmax", "log_softmax",
           "one_hot", "standardize", "mish", "squareplus", "log1mexp", "logmeanexp",
           "sparse_plus", "sparse_sigmoid"]


@custom_jvp
def relu(x):
    """Rectified linear unit, ``max(x, 0)``; its derivative at 0 is 0 (as in JAX).

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.nn.relu(jnp.array([-1.0, 0.0, 2.0]))
    Array([0., 0., 2.], dtype=float32)
    >>> absjit.grad(absjit.nn.relu)(0.0)
    Array(0., dtype=float32, weak_type=True)
    """
    return jnp.maximum(x, 0)


@relu.defjvp
def _relu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return relu(x), jnp.where(x > 0, t, jnp.zeros_like(t))


@custom_jvp
def relu6(x):
    """``min(max(x, 0), 6)``; the derivative is 0 at both kinks (as in JAX).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.relu6(jnp.array([-1.0, 3.0, 7.0]))
    Array([0., 3., 6.], dtype=float32)
    """
    return jnp.minimum(jnp.maximum(x, 0), 6.)


@relu6.defjvp
def _relu6_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return relu6(x), jnp.where((x > 0) & (x < 6), t, jnp.zeros_like(t))


def sigmoid(x):
    """The logistic function ``1 / (1 + exp(-x))`` (floating inputs only, as in JAX).

    Examples
    --------
    >>> from absjit import nn
    >>> nn.sigmoid(0.0)
    Array(0.5, dtype=float32, weak_type=True)
    """
    return ew.logistic(jnp.asarray(x))


def silu(x):
    """Sigmoid linear unit ``x * sigmoid(x)`` (also called ``swish``).

    Examples
    --------
    >>> from absjit import nn
    >>> nn.silu(0.0)
    Array(0., dtype=float32, weak_type=True)
    """
    x = jnp.asarray(x)
    return x * sigmoid(x)


swish = silu


def log_sigmoid(x):
    """``log(sigmoid(x))``, computed as ``-softplus(-x)`` (stable for large ``|x|``).

    Examples
    --------
    >>> from absjit import nn
    >>> nn.log_sigmoid(0.0)
    Array(-0.6931472, dtype=float32, weak_type=True)
    """
    return -softplus(-jnp.asarray(x))


def softplus(x):
    """``log(1 + exp(x))``, computed as ``logaddexp(x, 0)``.

    Examples
    --------
    >>> from absjit import nn
    >>> nn.softplus(0.0)
    Array(0.6931472, dtype=float32, weak_type=True)
    """
    return jnp.logaddexp(x, 0)


def gelu(x, approximate: bool = True):
    """Gaussian error linear unit: the tanh approximation, or with ``approximate=False``
    the exact ``x * Phi(x)``, computed as ``x * erfc(-x / sqrt(2)) / 2`` (accurate for
    large negative ``x`` too).

    Examples
    --------
    >>> from absjit import nn
    >>> nn.gelu(1.0)
    Array(0.841192, dtype=float32)
    """
    x = jnp.asarray(x)
    if not approximate:
        from ..lax._erf_gamma import erfc
        half = np.asarray(np.sqrt(0.5), x.dtype)
        return x * (erfc(-x * half) / 2)
    sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x.dtype)
    cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
    return x * cdf


def elu(x, alpha=1.0):
    """Exponential linear unit: ``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.elu(jnp.array([1.0, -1.0]))
    Array([ 1.        , -0.63212055], dtype=float32)
    """
    x = jnp.asarray(x)
    # The unused branch sees 0, not x, so its gradient never carries exp(huge).
    safe_x = jnp.where(x > 0, 0., x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(safe_x))


def selu(x):
    """Scaled exponential linear unit (the constants of Klambauer et al., 2017).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.selu(jnp.array([1.0]))
    Array([1.050701], dtype=float32)
    """
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def celu(x, alpha=1.0):
    """Continuously differentiable ELU: ``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``.

    Examples
    --------
    >>> from absjit import nn
    >>> nn.celu(2.0)
    Array(2., dtype=float32, weak_type=True)
    """
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def leaky_relu(x, negative_slope=1e-2):
    """``x`` where ``x >= 0``, else ``negative_slope * x``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.leaky_relu(jnp.array([1.0, -2.0]))
    Array([ 1.  , -0.02], dtype=float32)
    """
    x = jnp.asarray(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x):
    """``x`` clipped to ``[-1, 1]``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.hard_tanh(jnp.array([-2.0, 0.5, 3.0]))
    Array([-1. ,  0.5,  1. ], dtype=float32)
    """
    x = jnp.asarray(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def hard_sigmoid(x):
    """``relu6(x + 3) / 6``.

    Examples
    --------
    >>> from absjit import nn
    >>> nn.hard_sigmoid(0.0)
    Array(0.5, dtype=float32, weak_type=True)
    """
    return relu6(jnp.asarray(x) + 3.) / 6.


def hard_silu(x):
    """``x * hard_sigmoid(x)`` (also called ``hard_swish``).

    Examples
    --------
    >>> from absjit import nn
    >>> nn.hard_silu(3.0)
    Array(3., dtype=float32, weak_type=True)
    """
    x = jnp.asarray(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def soft_sign(x):
    """``x / (|x| + 1)``.

    Examples
    --------
    >>> from absjit import nn
    >>> nn.soft_sign(1.0)
    Array(0.5, dtype=float32, weak_type=True)
    """
    x = jnp.asarray(x)
    return x / (jnp.abs(x) + 1)


def identity(x):
    """``x`` unchanged (as an array).

    Examples
    --------
    >>> from absjit import nn
    >>> nn.identity(2.0)
    Array(2., dtype=float32, weak_type=True)
    """
    return jnp.asarray(x)


def tanh(x):
    """Hyperbolic tangent (``jnp.tanh``).

    Examples
    --------
    >>> from absjit import nn
    >>> nn.tanh(0.0)
    Array(0., dtype=float32, weak_type=True)
    """
    return jnp.tanh(x)


def glu(x, axis: int = -1):
    """Gated linear unit: split ``x`` in two halves along ``axis``; ``a * sigmoid(b)``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.glu(jnp.array([2.0, 0.0]))
    Array([1.], dtype=float32)
    """
    x = jnp.asarray(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: the size of axis {axis} must be even, got {size}")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x), axis)``, with the maximum subtracted first for stability.

    Parameters
    ----------
    x : array_like
    axis : int, tuple of int or None
        The axes normalised over (``None``: all).
    where : array_like of bool, optional
        Elements to include; the output is 0 elsewhere.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.softmax(jnp.array([1.0, 2.0]))
    Array([0.2689414, 0.7310586], dtype=float32)
    """
    x = jnp.asarray(x)
    x_max = jnp.max(x, axis, where=where, initial=-jnp.inf, keepdims=True)
    unnormalized = jnp.exp(x - stop_gradient(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


def log_softmax(x, axis=-1, where=None):
    """``x - log(sum(exp(x), axis))``, computed stably.

    Masked-out elements (``where`` False) are ``-inf``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.log_softmax(jnp.array([0.0, 0.0]))
    Array([-0.6931472, -0.6931472], dtype=float32)
    """
    x = jnp.asarray(x)
    x_max = jnp.max(x, axis, where=where, initial=-jnp.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -jnp.inf)
    shifted = x_safe - stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    if where is not None:
        result = jnp.where(where, result, -jnp.inf)
    return result


def _concrete_int(value, what):
    if isinstance(value, Tracer):
        try:
            value = value.aval.val
        except AttributeError:
            raise ConcretizationTypeError(
                f"{what} must be a concrete integer; got a traced value. Pass it as a "
                "static argument (static_argnames=[...]).") from None
    if isinstance(value, (bool, np.bool_)) or (
            hasattr(value, "dtype") and not dtypes.is_integer(np.dtype(value.dtype))):
        raise TypeError(f"{what} must be an integer, got {value!r}")
    try:
        return operator.index(value if not hasattr(value, "shape") or value.shape
                              else np.asarray(value).item())
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {value!r} of type "
                        f"{type(value).__name__}") from None


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """One-hot encode integer indices; an out-of-range index encodes as all zeros.

    Parameters
    ----------
    x : array_like of int
    num_classes : int
        A concrete Python integer (``TypeError`` otherwise).
    dtype : dtype, optional
        Default: the default float type.
    axis : int
        Where the new axis goes in the result.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.one_hot(jnp.array([1, 0]), 3)
    Array([[0., 1., 0.],
           [1., 0., 0.]], dtype=float32)
    """
    if not is_dim(num_classes):  # a symbolic size (ranked level) is used as it is
        num_classes = _concrete_int(num_classes, "one_hot: num_classes")
        if num_classes < 0:
            raise ValueError(f"one_hot: num_classes must be non-negative, got {num_classes}")
    x = jnp.asarray(x)
    dtype = dtypes.default_float() if dtype is None else dtype
    nd = x.ndim + 1
    axis = operator.index(axis)
    if not -nd <= axis < nd:
        raise ValueError(f"one_hot: axis {axis} is out of bounds for a result of rank {nd}")
    axis %= nd
    lhs = jnp.expand_dims(x, axis)
    shape = [1] * x.ndim
    shape.insert(axis, num_classes)
    rhs = jnp.arange(num_classes, dtype=x.dtype).reshape(shape)
    return (lhs == rhs).astype(dtype)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """``(x - mean) / sqrt(variance + epsilon)`` along ``axis`` (statistics computed
    when not given).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.standardize(jnp.array([1.0, 2.0, 4.0]))
    Array([-1.0690414 , -0.26726028,  1.3363018 ], dtype=float32)
    """
    x = jnp.asarray(x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        # E[x^2] - E[x]^2 is JAX's formula; it needs no second pass over centred data.
        variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) \
            - jnp.square(mean)
    return jnp.subtract(x, jnp.asarray(mean)) * ew.rsqrt(jnp.asarray(variance + epsilon))


def mish(x):
    """``x * tanh(softplus(x))`` (Misra, 2019).

    Examples
    --------
    >>> from absjit import nn
    >>> round(float(nn.mish(2.0)), 5)
    1.94396
    """
    x = jnp.asarray(x)
    return x * jnp.tanh(softplus(x))


def squareplus(x, b=4):
    """``(x + sqrt(x**2 + b)) / 2``, a smooth ReLU with algebraic tails (So, 2021).

    Examples
    --------
    >>> from absjit import nn
    >>> nn.squareplus(1.0)
    Array(1.618034, dtype=float32, weak_type=True)
    """
    x = jnp.asarray(x)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def log1mexp(x):
    """``log(1 - exp(-x))`` for ``x >= 0``, accurate everywhere: ``log(-expm1(-x))``
    for ``x`` below ``log 2`` and ``log1p(-exp(-x))`` above (Maechler, 2012). NaN for
    negative ``x``, ``-inf`` at 0.

    Examples
    --------
    >>> from absjit import nn
    >>> nn.log1mexp(2.0)
    Array(-0.14541346, dtype=float32, weak_type=True)
    """
    x = jnp.asarray(x)
    if not dtypes.is_inexact(x.dtype):  # a Python int stays weakly typed
        x = x * 1.0 if x.weak_type else x.astype(dtypes.default_float())
    small = x < np.log(2)
    # Each branch sees a value where it is finite, so gradients stay finite too.
    xs = jnp.where(small, x, 1.0)
    xl = jnp.where(small, 1.0, x)
    return jnp.where(small, jnp.log(-jnp.expm1(-xs)), jnp.log1p(-jnp.exp(-xl)))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """``log(mean(exp(x), axis))``, computed stably as ``logsumexp`` minus the log of
    the number of elements (those where ``where`` is True).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.logmeanexp(jnp.array([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    Array([2.433781 , 3.4337807], dtype=float32)
    """
    from ..scipy.special import logsumexp
    x = jnp.asarray(x)
    if not dtypes.is_inexact(x.dtype):
        x = x.astype(dtypes.default_float())
    elif x.weak_type:
        x = x.astype(x.dtype)  # a reduction gives a strong type, as in JAX
    lse = logsumexp(x, axis=axis, b=None, keepdims=keepdims,
                    **({} if where is None else {"where": where}))
    if where is None:
        ones = jnp.ones(x.shape, x.dtype)
    else:
        ones = jnp.broadcast_to(jnp.asarray(where), x.shape).astype(x.dtype)
    count = jnp.sum(ones, axis=axis, keepdims=keepdims)
    return lse - jnp.log(count)


def sparse_plus(x):
    """Sparse plus (Blondel et al., 2020): 0 for ``x <= -1``, ``(x + 1)**2 / 4`` on
    ``(-1, 1)``, ``x`` for ``x >= 1``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.sparse_plus(jnp.array([-2.0, 0.0, 2.0]))
    Array([0.  , 0.25, 2.  ], dtype=float32)
    """
    x = jnp.asarray(x)
    return jnp.where(x <= -1, 0.0, jnp.where(x >= 1, x, jnp.square(x + 1) / 4))


def sparse_sigmoid(x):
    """Sparse sigmoid, the derivative of ``sparse_plus``: ``clip(x + 1, 0, 2) / 2``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import nn
    >>> nn.sparse_sigmoid(jnp.array([-2.0, 0.0, 0.5, 2.0]))
    Array([0.  , 0.5 , 0.75, 1.  ], dtype=float32)
    """
    x = jnp.asarray(x)
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)
