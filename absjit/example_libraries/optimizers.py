"""First-order optimizers, as in ``jax.example_libraries.optimizers``.

An optimizer is a triple ``(init_fun, update_fun, get_params)``::

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    opt_state = opt_init(params)
    opt_state = opt_update(step, grads, opt_state)
    params = get_params(opt_state)

Each optimizer is written for one array; :func:`optimizer` lifts it to pytrees of
parameters. The state is an :class:`OptimizerState`, itself a pytree, so it can be
passed into and out of ``jit``.

Examples
--------
>>> import absjit.numpy as jnp
>>> from absjit.example_libraries import optimizers
>>> opt_init, opt_update, get_params = optimizers.sgd(0.1)
>>> state = opt_update(0, {"w": jnp.ones(2)}, opt_init({"w": jnp.zeros(2)}))
>>> get_params(state)["w"]
Array([-0.1, -0.1], dtype=float32)
"""
from __future__ import annotations

import functools
from collections import namedtuple

from .. import numpy as jnp
from .. import tree_util

__all__ = ["Optimizer", "OptimizerState", "optimizer", "sgd", "momentum", "nesterov",
           "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3", "constant",
           "exponential_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "make_schedule", "l2_norm", "clip_grads", "JoinPoint",
           "pack_optimizer_state", "unpack_optimizer_state"]

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
tree_util.register_pytree_node(
    OptimizerState,
    lambda xs: ((xs.packed_state,), (xs.tree_def, xs.subtree_defs)),
    lambda data, xs: OptimizerState(xs[0], data[0], data[1]))

Optimizer = namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])


def _unzip2(pairs):
    firsts, seconds = [], []
    for a, b in pairs:
        firsts.append(a)
        seconds.append(b)
    return tuple(firsts), tuple(seconds)


def optimizer(opt_maker):
    """Decorator: lift an optimizer for single arrays to pytrees of parameters.

    ``opt_maker(*args)`` returns ``(init, update, get_params)`` where ``init(x0)``
    builds the per-array state (any pytree), ``update(i, g, state)`` steps it and
    ``get_params(state)`` reads the array back.

    Examples
    --------
    >>> from absjit.example_libraries.optimizers import optimizer
    >>> @optimizer
    ... def halving():
    ...     return (lambda x: x), (lambda i, g, x: x - g / 2), (lambda x: x)
    >>> init, update, get = halving()
    >>> get(update(0, [2.0], init([1.0])))
    [0.0]
    """
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_util.tree_flatten(x0_tree)
            initial_states = [init(x0) for x0 in x0_flat]
            states_flat, subtrees = _unzip2(map(tree_util.tree_flatten, initial_states))
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_util.tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError("optimizer update function was passed a gradient tree that "
                                "did not match the parameter tree structure with which it "
                                f"was initialized: parameter tree {tree} and grad tree "
                                f"{tree2}.")
            states = map(tree_util.tree_unflatten, subtrees, states_flat)
            new_states = map(functools.partial(update, i), grad_flat, states)
            new_states_flat, subtrees2 = _unzip2(map(tree_util.tree_flatten, new_states))
            for subtree, subtree2 in zip(subtrees, subtrees2):
                if subtree2 != subtree:
                    raise TypeError("optimizer update function produced an output structure "
                                    "that did not match its input structure: input "
                                    f"{subtree} and output {subtree2}.")
            return OptimizerState(new_states_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            states = map(tree_util.tree_unflatten, subtrees, states_flat)
            params = map(get_params, states)
            return tree_util.tree_unflatten(tree, params)

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# ---------------------------------------------------------------------------
# optimizers
# ---------------------------------------------------------------------------
@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x -= step_size(i) * g``.

    Examples
    --------
    >>> from absjit.example_libraries import optimizers
    >>> init, update, get_params = optimizers.sgd(0.5)
    >>> get_params(update(0, 2.0, init(1.0)))
    0.0
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x
    return init, update, get_params


@optimizer
def momentum(step_size, mass):
    """Gradient descent with momentum ``mass``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import optimizers
    >>> init, update, get_params = optimizers.momentum(0.1, mass=0.9)
    >>> get_params(update(0, jnp.ones(1), init(jnp.zeros(1))))
    Array([-0.1], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def nesterov(step_size, mass):
    """Nesterov's accelerated gradient.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import optimizers
    >>> init, update, get_params = optimizers.nesterov(0.1, mass=0.9)
    >>> get_params(update(0, jnp.ones(1), init(jnp.zeros(1))))
    Array([-0.19], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al., 2011) with momentum.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import optimizers
    >>> init, update, get_params = optimizers.adagrad(1.0)
    >>> get_params(update(0, jnp.full(1, 4.0), init(jnp.zeros(1))))
    Array([-0.1], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: steps scaled by a running average of squared gradients.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import optimizers
    >>> init, update, get_params = optimizers.rmsprop(0.1, gamma=0.0, eps=0.0)
    >>> get_params(update(0, jnp.full(1, 3.0), init(jnp.zeros(1))))
    Array([-0.1], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import optimizers
    >>> init, update, get_params = optimizers.rmsprop_momentum(0.1, gamma=0.0, eps=0.0)
    >>> get_params(update(0, jnp.full(1, 3.0), init(jnp.zeros(1))))
    Array([-0.1], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba, 2015), with bias-corrected moment estimates.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import optimizers
    >>> init, update, get_params = optimizers.adam(0.1)
    >>> get_params(update(0, jnp.full(1, 3.0), init(jnp.zeros(1))))
    Array([-0.09999934], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam's infinity-norm variant.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import optimizers
    >>> init, update, get_params = optimizers.adamax(0.1, eps=0.0)
    >>> get_params(update(0, jnp.full(1, 3.0), init(jnp.zeros(1))))
    Array([-0.09999999], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u

    def get_params(state):
        return state[0]
    return init, update, get_params


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al., 2019): Adagrad with one accumulator per axis slice.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import optimizers
    >>> init, update, get_params = optimizers.sm3(1.0, momentum=0.0)
    >>> get_params(update(0, jnp.full((1, 2), 2.0), init(jnp.zeros((1, 2)))))
    Array([[-1., -1.]], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def splice(seq, i, x):
        lst = list(seq)
        lst[i:i + 1] = x
        return lst

    def broadcast_into(ndim, x, axis):
        idx = splice([None] * ndim, axis, [slice(None)])
        return x[tuple(idx)]

    def init(x0):
        x_shape = jnp.shape(x0)
        x0 = jnp.atleast_1d(x0)
        vs = [jnp.zeros(sz, dtype=x0.dtype) for sz in x0.shape]
        return x0, jnp.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        g = jnp.atleast_1d(g)
        vs = [broadcast_into(g.ndim, v, k) for k, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, vs) + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1. / jnp.sqrt(accum), 0)
        m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(tuple(splice(range(x.ndim), j, []))) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return x.reshape(tuple(int(d) for d in x_shape))
    return init, update, get_params


# ---------------------------------------------------------------------------
# learning-rate schedules
# ---------------------------------------------------------------------------
def constant(step_size):
    """The schedule ``i -> step_size``.

    Examples
    --------
    >>> from absjit.example_libraries import optimizers
    >>> optimizers.constant(0.1)(100)
    0.1
    """
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """``step_size * decay_rate ** (i / decay_steps)``.

    Examples
    --------
    >>> from absjit.example_libraries import optimizers
    >>> float(optimizers.exponential_decay(1.0, 10, 0.5)(20))
    0.25
    """
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """``step_size / (1 + decay_rate * i / decay_steps)`` (``floor`` of the ratio with
    ``staircase``).

    Examples
    --------
    >>> from absjit.example_libraries import optimizers
    >>> float(optimizers.inverse_time_decay(1.0, 10, 1.0, staircase=True)(15))
    0.5
    """
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From ``step_size`` to ``final_step_size`` over ``decay_steps`` along
    ``(1 - i / decay_steps) ** power``, then constant.

    Examples
    --------
    >>> from absjit.example_libraries import optimizers
    >>> float(optimizers.polynomial_decay(1.0, 10, 0.0)(5))
    0.5
    """
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """``values[k]`` for steps in the ``k``-th interval of ``boundaries``.

    Examples
    --------
    >>> from absjit.example_libraries import optimizers
    >>> sched = optimizers.piecewise_constant([10, 20], [1.0, 0.5, 0.1])
    >>> sched(5), sched(25)
    (Array(1., dtype=float32), Array(0.1, dtype=float32))
    """
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule):
    """A schedule from a callable (returned as is) or a scalar (a constant schedule).

    Examples
    --------
    >>> from absjit.example_libraries import optimizers
    >>> optimizers.make_schedule(0.5)(3)
    0.5
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---------------------------------------------------------------------------
# utilities
# ---------------------------------------------------------------------------
def l2_norm(tree):
    """The l2 norm of all leaves of ``tree`` together.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import optimizers
    >>> optimizers.l2_norm({"a": jnp.array([3.0]), "b": jnp.array([4.0])})
    Array(5., dtype=float32)
    """
    leaves, _ = tree_util.tree_flatten(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale ``grad_tree`` down so its l2 norm is at most ``max_norm``.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import optimizers
    >>> optimizers.clip_grads([jnp.array([3.0, 4.0])], 1.0)[0]
    Array([0.6, 0.8], dtype=float32)
    """
    norm = l2_norm(grad_tree)

    def normalize(g):
        return jnp.where(norm < max_norm, g, g * (max_norm / norm))
    return tree_util.tree_map(normalize, grad_tree)


class JoinPoint:
    """Marks where an optimizer's per-parameter state joins the parameter tree."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An ``OptimizerState`` as a pytree of ``JoinPoint`` (e.g. for pickling).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import optimizers
    >>> init, _, _ = optimizers.momentum(0.1, 0.9)
    >>> state = init({"w": jnp.ones(2)})
    >>> unpacked = optimizers.unpack_optimizer_state(state)
    >>> optimizers.pack_optimizer_state(unpacked) == state
    True
    """
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = map(tree_util.tree_unflatten, subtree_defs, states_flat)
    sentinels = [JoinPoint(subtree) for subtree in subtrees]
    return tree_util.tree_unflatten(tree_def, sentinels)


def pack_optimizer_state(marked_pytree):
    """The inverse of :func:`unpack_optimizer_state`.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> from absjit.example_libraries import optimizers
    >>> init, _, get_params = optimizers.sgd(0.1)
    >>> state = init([jnp.ones(1)])
    >>> get_params(optimizers.pack_optimizer_state(
    ...     optimizers.unpack_optimizer_state(state)))
    [Array([1.], dtype=float32)]
    """
    sentinels, tree_def = tree_util.tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state expects a pytree whose leaves are JoinPoint "
                        "(as made by unpack_optimizer_state)")
    subtrees = [s.subtree for s in sentinels]
    states_flat, subtree_defs = _unzip2(map(tree_util.tree_flatten, subtrees))
    return OptimizerState(states_flat, tree_def, subtree_defs)
