"""A small neural-network library, as in ``jax.example_libraries.stax``.

A layer is a pair ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape)`` returns
``(output_shape, params)`` and ``apply_fun(params, inputs, **kwargs)`` the outputs.
Combinators (``serial``, ``parallel``, ``FanOut`` …) build networks from layers.

Examples
--------
>>> from absjit import random
>>> from absjit.example_libraries import stax
>>> init_fun, apply_fun = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(2))
>>> out_shape, params = init_fun(random.PRNGKey(0), (-1, 4))
>>> out_shape
(-1, 2)
"""
from __future__ import annotations

import functools
import operator as op

from .. import lax, random
from .. import numpy as jnp
from ..api_utils import ShapeDtypeStruct, eval_shape
from ..nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                  softplus, standardize)
from ..nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["Dense", "GeneralConv", "Conv", "GeneralConvTranspose", "Conv1DTranspose",
           "ConvTranspose", "BatchNorm", "elementwise", "Tanh", "Relu",
           "Exp", "LogSoftmax", "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu",
           "Selu", "Gelu", "MaxPool", "SumPool", "AvgPool", "Flatten", "Identity", "FanOut",
           "FanInSum", "FanInConcat", "Dropout", "serial", "parallel", "shape_dependent",
           "logsoftmax"]

logsoftmax = log_softmax  # stax's old name for the function (the layer is LogSoftmax)


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):  # noqa: N802,N803 - JAX's names
    """A fully connected layer ``inputs @ W + b``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.example_libraries import stax
    >>> init_fun, apply_fun = stax.Dense(3)
    >>> init_fun(random.PRNGKey(0), (5, 4))[0]
    (5, 3)
    """
    def init_fun(rng, input_shape):
        output_shape = input_shape[:-1] + (out_dim,)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))  # noqa: N806
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _shape_for_tracing(shape):
    """An input shape with stax's ``-1`` batch placeholder replaced by a size to trace."""
    return tuple(1 if d == -1 else d for d in shape)


def _restore_batch(in_shape, out_shape, axis):
    """Put a ``-1`` batch placeholder of ``in_shape`` back at ``axis`` of ``out_shape``."""
    if in_shape[axis] == -1:
        out_shape = out_shape[:axis] + (-1,) + out_shape[axis + 1:]
    return out_shape


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None,  # noqa: N802
                padding="VALID", W_init=None, b_init=normal(1e-6)):  # noqa: N803
    """A convolution with the layouts ``dimension_numbers = (lhs, rhs, out)`` (e.g.
    ``('NHWC', 'HWIO', 'NHWC')``), through ``lax.conv_general_dilated``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.example_libraries import stax
    >>> init_fun, _ = stax.Conv(4, (3, 3), padding="SAME")
    >>> init_fun(random.PRNGKey(0), (2, 8, 8, 1))[0]
    (2, 8, 8, 4)
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806

    def init_fun(rng, input_shape):
        filter_shape_iter = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else
                        input_shape[lhs_spec.index("C")] if c == "I" else
                        next(filter_shape_iter) for c in rhs_spec]
        out = eval_shape(
            lambda x, w: lax.conv_general_dilated(x, w, strides, padding, one, one,
                                                  dimension_numbers=dimension_numbers),
            ShapeDtypeStruct(_shape_for_tracing(input_shape), jnp.float32),
            ShapeDtypeStruct(tuple(kernel_shape), jnp.float32))
        n_lhs, n_out = lhs_spec.index("N"), out_spec.index("N")
        output_shape = out.shape if input_shape[n_lhs] != -1 else \
            out.shape[:n_out] + (-1,) + out.shape[n_out + 1:]
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, tuple(kernel_shape)), b_init(k2, tuple(bias_shape))  # noqa: N806
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,  # noqa: N802
                         padding="VALID", W_init=None, b_init=normal(1e-6)):  # noqa: N803
    """A transposed convolution (``lax.conv_transpose``) with the layouts
    ``dimension_numbers``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.example_libraries import stax
    >>> init_fun, _ = stax.ConvTranspose(4, (3, 3), strides=(2, 2), padding="SAME")
    >>> init_fun(random.PRNGKey(0), (2, 5, 5, 1))[0]
    (2, 10, 10, 4)
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))  # noqa: N806

    def init_fun(rng, input_shape):
        filter_shape_iter = iter(filter_shape)
        kernel_shape = [out_chan if c == "O" else
                        input_shape[lhs_spec.index("C")] if c == "I" else
                        next(filter_shape_iter) for c in rhs_spec]
        out = eval_shape(
            lambda x, w: lax.conv_transpose(x, w, strides, padding,
                                            dimension_numbers=dimension_numbers),
            ShapeDtypeStruct(_shape_for_tracing(input_shape), jnp.float32),
            ShapeDtypeStruct(tuple(kernel_shape), jnp.float32))
        n_lhs, n_out = lhs_spec.index("N"), out_spec.index("N")
        output_shape = out.shape if input_shape[n_lhs] != -1 else \
            out.shape[:n_out] + (-1,) + out.shape[n_out + 1:]
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, tuple(kernel_shape)), b_init(k2, tuple(bias_shape))  # noqa: N806
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params  # noqa: N806
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True,  # noqa: N802
              beta_init=zeros, gamma_init=ones):
    """Normalise over ``axis`` with the batch's statistics, then scale and shift.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.example_libraries import stax
    >>> init_fun, _ = stax.BatchNorm(axis=(0,))
    >>> [p.shape for p in init_fun(random.PRNGKey(0), (8, 3))[1]]
    [(3,), (3,)]
    """
    def _beta_init(rng, shape):
        return beta_init(rng, shape) if center else ()

    def _gamma_init(rng, shape):
        return gamma_init(rng, shape) if scale else ()
    axis = (axis,) if jnp.ndim(axis) == 0 else axis

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta, gamma = _beta_init(k1, shape), _gamma_init(k2, shape)
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying ``fun(inputs, **fun_kwargs)``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import stax
    >>> _, apply_fun = stax.elementwise(jnp.abs)
    >>> apply_fun((), jnp.array([-1.0]))
    Array([1.], dtype=float32)
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):  # noqa: N802
        """A pooling layer over the spatial axes (``spec`` names the layout, default
        ``NHWC``-like: batch first, channels last).

        Examples
        --------
        >>> from absjit import random
        >>> from absjit.example_libraries import stax
        >>> init_fun, _ = stax.MaxPool((2, 2), strides=(2, 2))
        >>> init_fun(random.PRNGKey(0), (1, 8, 8, 3))[0]
        (1, 4, 4, 3)
        """
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        if spec is None:
            non_spatial_axes = 0, len(window_shape) + 1
        else:
            non_spatial_axes = spec.index("N"), spec.index("C")
        for i in sorted(non_spatial_axes):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng, input_shape):
            out = eval_shape(
                lambda x: lax.reduce_window(x, init_val, reducer, window_shape, strides,
                                            padding),
                ShapeDtypeStruct(_shape_for_tracing(input_shape), jnp.float32))
            return _restore_batch(input_shape, out.shape, non_spatial_axes[0]), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides,
                                    padding)
            return rescale(out, inputs, spec) if rescale else out
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.)


def _normalize_by_window_size(dims, strides, padding):
    def rescale(outputs, inputs, spec):
        if spec is None:
            non_spatial_axes = 0, inputs.ndim - 1
        else:
            non_spatial_axes = spec.index("N"), spec.index("C")
        spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim)
                              if i not in non_spatial_axes)
        one = jnp.ones(spatial_shape, dtype=inputs.dtype)
        window_sizes = lax.reduce_window(one, 0., lax.add, dims, strides, padding)
        for i in sorted(non_spatial_axes):
            window_sizes = jnp.expand_dims(window_sizes, i)
        return outputs / window_sizes
    return rescale


AvgPool = _pooling_layer(lax.add, 0., _normalize_by_window_size)


def _flatten():
    def init_fun(rng, input_shape):
        output_shape = input_shape[0], functools.reduce(op.mul, input_shape[1:], 1)
        return output_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()


def _identity():
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs
    return init_fun, apply_fun


Identity = _identity()


def FanOut(num):  # noqa: N802
    """A layer copying its input ``num`` times (a list).

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.example_libraries import stax
    >>> stax.FanOut(2)[0](random.PRNGKey(0), (3,))[0]
    [(3,), (3,)]
    """
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis=-1):  # noqa: N802
    """A layer concatenating its list of inputs along ``axis``.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.example_libraries import stax
    >>> stax.FanInConcat()[0](random.PRNGKey(0), [(2, 3), (2, 4)])[0]
    (2, 7)
    """
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        out_shape = input_shape[0][:ax] + (concat_size,) + input_shape[0][ax + 1:]
        return out_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate, mode="train"):  # noqa: N802
    """Dropout: in ``train`` mode keep each input with probability ``rate`` (JAX's
    meaning) and scale by ``1 / rate``; ``apply_fun`` needs ``rng=``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import random
    >>> from absjit.example_libraries import stax
    >>> _, apply_fun = stax.Dropout(1.0)
    >>> apply_fun((), jnp.ones(2), rng=random.PRNGKey(0))
    Array([1., 1.], dtype=float32)
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG "
                             "key argument. That is, instead of `apply_fun(params, "
                             "inputs)`, call it like `apply_fun(params, inputs, rng)` "
                             "where `rng` is a PRNG key (e.g. from "
                             "`absjit.random.PRNGKey`).")
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs
    return init_fun, apply_fun


def serial(*layers):
    """Layers in sequence.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit import random
    >>> from absjit.example_libraries import stax
    >>> init_fun, apply_fun = stax.serial(stax.Dense(3), stax.Tanh)
    >>> _, params = init_fun(random.PRNGKey(0), (-1, 2))
    >>> apply_fun(params, jnp.ones((4, 2))).shape
    (4, 3)
    """
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for fn in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = fn(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, r in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=r, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """Layers side by side: a list of inputs to a list of outputs.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.example_libraries import stax
    >>> init_fun, _ = stax.parallel(stax.Dense(2), stax.Identity)
    >>> init_fun(random.PRNGKey(0), [(1, 3), (1, 5)])[0]
    ((1, 2), (1, 5))
    """
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        return tuple(zip(*[init(r, shape) for init, r, shape
                           in zip(init_funs, rngs, input_shape)]))

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in
                zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built by ``make_layer(input_shape)`` when its input shape is known.

    Examples
    --------
    >>> from absjit import random
    >>> from absjit.example_libraries import stax
    >>> init_fun, _ = stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2))
    >>> init_fun(random.PRNGKey(0), (1, 3))[0]
    (1, 6)
    """
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
