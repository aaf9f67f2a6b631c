"""Host callbacks from traced code: ``pure_callback`` and ``debug.callback``.

Both stage one equation whose param is the Python callable; its impl rule calls it on
NumPy values. Under ``jit`` the Numba backend has no lowering for these equations, so
the jaxpr holding one runs on the NumPy interpret backend (with one warning).

``pure_callback`` returns values of the declared ``result_shape_dtypes`` and may be
dropped or merged when its results are unused or repeated; it is not differentiable
(wrap it in ``custom_jvp``/``custom_vjp``). ``io_callback`` is the same call made
effectful: never dropped, merged or evaluated at trace time, not differentiable, and
under ``vmap`` called once per element (an ``ordered`` one cannot be batched). ``debug.callback`` has no results and is
effectful: it runs every time the computation runs, on primal values only under
autodiff, once per batch element under ``vmap``.
"""
from __future__ import annotations

import itertools

import numpy as np

from . import dtypes, tree_util
from .core.avals import ShapedArray
from .core.primitive import Primitive, abstract_eval_rules, impl_rules
from .core.trace import get_aval
from .interpreters import ad, batching
from .ops.values import asarray

__all__ = ["pure_callback", "debug_callback", "io_callback", "pure_callback_p",
           "debug_callback_p", "io_callback_p"]

_SERIAL = itertools.count()


class _HostFn:
    """A callable as an equation param. It prints with a serial number, so two
    different callbacks never give the same jaxpr text (the compile cache keys on it)."""

    __slots__ = ("fn", "in_tree", "serial")

    def __init__(self, fn, in_tree):
        self.fn, self.in_tree, self.serial = fn, in_tree, next(_SERIAL)

    def __call__(self, *vals):
        args, kwargs = tree_util.tree_unflatten(self.in_tree, [np.asarray(v) for v in vals])
        return self.fn(*args, **kwargs)

    def __repr__(self):
        return f"{getattr(self.fn, '__name__', type(self.fn).__name__)}#{self.serial}"


# ---------------------------------------------------------------------------
# pure_callback
# ---------------------------------------------------------------------------
pure_callback_p = Primitive("pure_callback", multiple_results=True,
                            param_order=("callback",))


def _pure_callback_abstract(*avals, callback, result_avals, vmap_method):
    return list(result_avals)


def _pure_callback_impl(*vals, callback, result_avals, vmap_method):
    out = callback(*vals)
    leaves, tree = tree_util.tree_flatten(out)
    if len(leaves) != len(result_avals):
        raise TypeError(f"pure_callback {callback!r} returned {len(leaves)} arrays, but "
                        f"result_shape_dtypes declares {len(result_avals)}")
    res = []
    for leaf, aval in zip(leaves, result_avals):
        arr = np.asarray(leaf)
        if arr.shape != tuple(aval.shape):
            raise ValueError(f"pure_callback {callback!r} returned an array of shape "
                             f"{arr.shape}, but result_shape_dtypes declares "
                             f"{tuple(aval.shape)}")
        if arr.dtype != aval.dtype:
            raise TypeError(f"pure_callback {callback!r} returned an array of dtype "
                            f"{arr.dtype}, but result_shape_dtypes declares {aval.dtype}")
        res.append(arr)
    return res


abstract_eval_rules[pure_callback_p] = _pure_callback_abstract
impl_rules[pure_callback_p] = _pure_callback_impl


def _pure_callback_jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. Please use `absjit.custom_jvp` "
                     "to use callbacks while taking gradients.")


ad.jvp_rules[pure_callback_p] = _pure_callback_jvp


class _Batched:
    """The callback of a batched ``pure_callback``: calls the user's function once per
    batch element (``sequential``) or once on the whole batch."""

    __slots__ = ("inner", "dims", "size", "method", "serial")

    def __init__(self, inner, dims, size, method):
        self.inner, self.dims, self.size, self.method = inner, dims, size, method
        self.serial = next(_SERIAL)

    def __call__(self, *vals):
        if self.method == "sequential":
            outs = []
            for i in range(self.size):
                args = [v[i] if d is not None else v for v, d in zip(vals, self.dims)]
                outs.append(tree_util.tree_leaves(self.inner(*args)))
            return [np.stack(col) for col in zip(*outs)]
        if self.method == "expand_dims":
            args = [v if d is not None else v[None] for v, d in zip(vals, self.dims)]
        else:  # broadcast_all
            args = [v if d is not None else np.broadcast_to(v[None], (self.size,) + v.shape)
                    for v, d in zip(vals, self.dims)]
        return self.inner(*args)

    def __repr__(self):
        return f"vmap({self.inner!r})#{self.serial}"


def _pure_callback_batch(vals, dims, *, callback, result_avals, vmap_method):
    if vmap_method is None:
        raise NotImplementedError(
            "vmap of pure_callback needs vmap_method: 'sequential' (one call per batch "
            "element), 'expand_dims' or 'broadcast_all' (one call on the whole batch)")
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    moved = [batching.moveaxis(v, d, 0) if d is not None and d != 0 else v
             for v, d in zip(vals, dims)]
    batched_avals = tuple(ShapedArray((size,) + tuple(a.shape), a.dtype, a.weak_type)
                          for a in result_avals)
    outs = pure_callback_p.bind(*moved, callback=_Batched(callback, dims, size, vmap_method),
                                result_avals=batched_avals, vmap_method=vmap_method)
    return outs, [0] * len(outs)


batching.batch_rules[pure_callback_p] = _pure_callback_batch


def _result_aval(x) -> ShapedArray:
    try:
        shape, dt = tuple(x.shape), np.dtype(x.dtype)
    except (AttributeError, TypeError):
        raise TypeError("pure_callback: result_shape_dtypes must be a pytree of objects "
                        f"with .shape and .dtype (e.g. ShapeDtypeStruct); got {x!r}") from None
    return ShapedArray(shape, dtypes.canonicalize_dtype(dt), False)


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """Call the Python function ``callback`` on concrete values from traced code.

    Parameters
    ----------
    callback : callable
        Receives NumPy arrays (the pytrees of ``args`` and ``kwargs``) and returns
        arrays matching ``result_shape_dtypes``. It must be pure: absjit may skip or
        merge calls.
    result_shape_dtypes : pytree of ShapeDtypeStruct (or anything with shape, dtype)
    vmap_method : {None, "sequential", "expand_dims", "broadcast_all"}
        How ``vmap`` calls it; ``None`` makes ``vmap`` an error.

    Examples
    --------
    >>> import numpy as np
    >>> import absjit, absjit.numpy as jnp
    >>> def host_sin(x):
    ...     return np.sin(x)
    >>> @absjit.jit
    ... def f(x):
    ...     spec = absjit.ShapeDtypeStruct(x.shape, x.dtype)
    ...     return absjit.pure_callback(host_sin, spec, x) + 1
    >>> f(jnp.zeros(2))
    Array([1., 1.], dtype=float32)
    """
    if not callable(callback):
        raise TypeError(f"pure_callback: callback must be callable, got {callback!r}")
    if vmap_method not in (None, "sequential", "expand_dims", "broadcast_all"):
        raise ValueError(f"pure_callback: unknown vmap_method {vmap_method!r}; use "
                         "'sequential', 'expand_dims' or 'broadcast_all'")
    if sharding is not None:
        raise ValueError("pure_callback: absjit runs on one device; sharding must be None")
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    res_leaves, res_tree = tree_util.tree_flatten(result_shape_dtypes)
    result_avals = tuple(_result_aval(x) for x in res_leaves)
    leaves = [x if hasattr(x, "aval") else asarray(x) for x in leaves]
    outs = pure_callback_p.bind(*leaves, callback=_HostFn(callback, in_tree),
                                result_avals=result_avals, vmap_method=vmap_method)
    return tree_util.tree_unflatten(res_tree, outs)


# ---------------------------------------------------------------------------
# io_callback: pure_callback's call, as an effect
# ---------------------------------------------------------------------------
io_callback_p = Primitive("io_callback", multiple_results=True, effectful=True,
                          param_order=("callback",))


def _io_callback_abstract(*avals, callback, result_avals, ordered):
    return list(result_avals)


def _io_callback_impl(*vals, callback, result_avals, ordered):
    return _pure_callback_impl(*vals, callback=callback, result_avals=result_avals,
                               vmap_method="sequential")


abstract_eval_rules[io_callback_p] = _io_callback_abstract
impl_rules[io_callback_p] = _io_callback_impl


def _io_callback_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


ad.jvp_rules[io_callback_p] = _io_callback_jvp


def _io_callback_batch(vals, dims, *, callback, result_avals, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    moved = [batching.moveaxis(v, d, 0) if d is not None and d != 0 else v
             for v, d in zip(vals, dims)]
    batched_avals = tuple(ShapedArray((size,) + tuple(a.shape), a.dtype, a.weak_type)
                          for a in result_avals)
    outs = io_callback_p.bind(*moved, callback=_Batched(callback, dims, size, "sequential"),
                              result_avals=batched_avals, ordered=False)
    return outs, [0] * len(outs)


batching.batch_rules[io_callback_p] = _io_callback_batch


def io_callback(callback, result_shape_dtypes, *args, ordered=False, **kwargs):
    """``pure_callback``'s call as an effect (see the module's note); the public
    function is :func:`absjit.experimental.io_callback`."""
    if not callable(callback):
        raise TypeError(f"io_callback: callback must be callable, got {callback!r}")
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    res_leaves, res_tree = tree_util.tree_flatten(result_shape_dtypes)
    result_avals = tuple(_result_aval(x) for x in res_leaves)
    if not result_avals and ad.tangent_copy.get():
        return tree_util.tree_unflatten(res_tree, [])  # the primal copy makes the call
    leaves = [x if hasattr(x, "aval") else asarray(x) for x in leaves]
    outs = io_callback_p.bind(*leaves, callback=_HostFn(callback, in_tree),
                              result_avals=result_avals, ordered=bool(ordered))
    return tree_util.tree_unflatten(res_tree, outs)


# ---------------------------------------------------------------------------
# debug.callback
# ---------------------------------------------------------------------------
debug_callback_p = Primitive("debug_callback", multiple_results=True, effectful=True,
                             param_order=("callback",))

abstract_eval_rules[debug_callback_p] = lambda *avals, callback: []


def _debug_callback_impl(*vals, callback):
    callback(*vals)
    return []


impl_rules[debug_callback_p] = _debug_callback_impl


def _debug_callback_jvp(primals, tangents, *, callback):
    if not ad.tangent_copy.get():  # the tangent copy of a loop body does not call again
        debug_callback_p.bind(*primals, callback=callback)
    return [], []


_debug_callback_jvp.symbolic_zeros = True
ad.jvp_rules[debug_callback_p] = _debug_callback_jvp
ad.transpose_rules[debug_callback_p] = lambda cts, *args, **params: [None] * len(args)


class _PerElement:
    """A batched debug callback: the user's function once per batch element."""

    __slots__ = ("inner", "dims", "size", "serial")

    def __init__(self, inner, dims, size):
        self.inner, self.dims, self.size = inner, dims, size
        self.serial = next(_SERIAL)

    def __call__(self, *vals):
        for i in range(self.size):
            self.inner(*[v[i] if d is not None else v for v, d in zip(vals, self.dims)])

    def __repr__(self):
        return f"vmap({self.inner!r})#{self.serial}"


def _debug_callback_batch(vals, dims, *, callback):
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    moved = [batching.moveaxis(v, d, 0) if d is not None and d != 0 else v
             for v, d in zip(vals, dims)]
    debug_callback_p.bind(*moved, callback=_PerElement(callback, dims, size))
    return [], []


batching.batch_rules[debug_callback_p] = _debug_callback_batch


def debug_callback(callback, *args, ordered=False, **kwargs):
    """Call ``callback(*args, **kwargs)`` with run-time values, for its side effect.

    It runs whenever the computation runs: eagerly, every call of a jitted function,
    on primal values under ``grad``, once per element under ``vmap``. Returns ``None``.
    Effectful equations keep their program order, so ``ordered`` (accepted for
    compatibility) changes nothing.

    Examples
    --------
    >>> import absjit
    >>> seen = []
    >>> @absjit.jit
    ... def f(x):
    ...     absjit.debug.callback(lambda v: seen.append(float(v)), x)
    ...     return x * 2
    >>> _ = f(3.0)
    >>> seen
    [3.0]
    """
    if not callable(callback):
        raise TypeError(f"debug.callback: callback must be callable, got {callback!r}")
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    leaves = [x if hasattr(x, "aval") else asarray(x) for x in leaves]
    debug_callback_p.bind(*leaves, callback=_HostFn(callback, in_tree))
