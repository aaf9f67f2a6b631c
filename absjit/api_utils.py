"""Smaller public transforms and utilities: ``eval_shape`` and ``ShapeDtypeStruct``,
``checkpoint``/``remat``, ``jacobian``, and the device queries of a one-device CPU
runtime (``devices``, ``device_count``, ``device_get``, ``default_backend`` …).
"""
from __future__ import annotations

import contextvars
import functools
import operator
import types

import numpy as np

from . import dtypes, tree_util
from ._device import Device
from .core.avals import ShapedArray
from .core.dims import is_dim
from .core.levels import get_level
from .core.trace import Tracer
from .interpreters.staging import DebugInfo, trace_to_jaxpr
from .ops.call import call_jit, hoist_consts

__all__ = ["ShapeDtypeStruct", "eval_shape", "checkpoint", "remat", "Device", "devices",
           "local_devices", "device_count", "local_device_count", "device_get",
           "process_index", "process_count", "default_backend"]


# ---------------------------------------------------------------------------
# eval_shape
# ---------------------------------------------------------------------------
class ShapeDtypeStruct:
    """A shape, a dtype and a weak type: what ``eval_shape`` returns and accepts.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.ShapeDtypeStruct((2, 3), jnp.float32)
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    """

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, *, weak_type: bool = False, sharding=None):
        try:
            self.shape = tuple(d if is_dim(d) else operator.index(d) for d in shape)
        except TypeError:
            raise TypeError(f"ShapeDtypeStruct: shape must be a sequence of integers, got "
                            f"{shape!r}") from None
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be given")
        self.dtype = dtypes.to_numpy_dtype(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding

    @classmethod
    def like(cls, x) -> "ShapeDtypeStruct":
        """The shape, dtype and weak type of ``x`` (an array, a tracer, a NumPy array or
        a Python scalar).

        Examples
        --------
        >>> import absjit, absjit.numpy as jnp
        >>> absjit.ShapeDtypeStruct.like(jnp.ones((2, 3)))
        ShapeDtypeStruct(shape=(2, 3), dtype=float32)
        """
        aval = _aval_of(x)
        return cls(tuple(aval.shape), aval.dtype, weak_type=aval.weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __eq__(self, other):
        return (type(other) is ShapeDtypeStruct and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


def _aval_of(leaf) -> ShapedArray:
    if isinstance(leaf, ShapeDtypeStruct):
        return ShapedArray(leaf.shape, dtypes.canonicalize_dtype(leaf.dtype), leaf.weak_type)
    if isinstance(leaf, Tracer):
        return leaf.aval.to_shaped()
    if not isinstance(leaf, (np.ndarray, np.generic, int, float, complex, bool)) \
            and hasattr(leaf, "shape") and hasattr(leaf, "dtype") \
            and not hasattr(leaf, "_value"):  # a jax.ShapeDtypeStruct or the like
        return ShapedArray(tuple(leaf.shape), dtypes.canonicalize_dtype(leaf.dtype), False)
    return get_level("shaped").abstractify(leaf)


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of ``fun(*args, **kwargs)``, by tracing only (nothing is
    computed or compiled).

    Arguments may be arrays, scalars or ``ShapeDtypeStruct`` (pytrees of them); the
    result is the output pytree with a ``ShapeDtypeStruct`` per leaf.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> x = absjit.ShapeDtypeStruct((1000, 3), jnp.float32)
    >>> absjit.eval_shape(lambda a: jnp.sum(a, axis=0), x)
    ShapeDtypeStruct(shape=(3,), dtype=float32)
    """
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    avals = [_aval_of(x) for x in leaves]
    box = []

    def flat_fun(*flat):
        a, kw = tree_util.tree_unflatten(in_tree, list(flat))
        out_leaves, out_tree = tree_util.tree_flatten(fun(*a, **kw))
        box.append(out_tree)
        return out_leaves

    debug = DebugInfo.of(fun, [f"args[{i}]" for i in range(len(leaves))], "eval_shape")
    _, out_avals = trace_to_jaxpr(flat_fun, avals, debug, transform="eval_shape")
    return tree_util.tree_unflatten(box[-1], [
        ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in out_avals])


# ---------------------------------------------------------------------------
# checkpoint / remat
# ---------------------------------------------------------------------------
# While a checkpointed function with a policy is traced: the values checkpoint_name
# tagged, {Var: name}, for the name-based policies.
checkpoint_names = contextvars.ContextVar("absjit_checkpoint_names", default=None)

# A pseudo-primitive a policy is asked about for each value tagged by checkpoint_name
# (JAX asks about its ``name`` primitive, with the param ``name``).
_NAME_PRIM = types.SimpleNamespace(name="name")


def residual_reads(jaxpr, n_primals) -> set:
    """In a JVP jaxpr whose first ``n_primals`` inputs are primals and the rest
    tangents: the primal values its tangent (linear) equations read, i.e. what reverse
    mode keeps from the forward pass."""
    from .core.jaxpr import Var
    linear = set(jaxpr.invars[n_primals:])
    read = set()
    for eqn in jaxpr.eqns:
        if any(type(x) is Var and x in linear for x in eqn.invars):
            linear.update(eqn.outvars)
            read.update(x for x in eqn.invars if type(x) is Var and x not in linear)
    return read


def _saved_under_policy(inner, saveable) -> list:
    """Of the variables ``saveable`` of ``inner``, those the derivative needs: walking
    back from what its tangent equations read (:func:`residual_reads`), through the
    primal computation, stopping at saveable values. The backward pass recomputes the
    rest from those values and the inputs, as under JAX's policies."""
    from .core.jaxpr import Literal, Var
    from .interpreters import ad
    jaxpr = inner.jaxpr
    avals = [v.aval for v in jaxpr.invars]
    mask = [ad._is_differentiable(a) for a in avals]
    n = len(avals)
    staged = {}

    def run(*xs):
        env = dict(zip(jaxpr.invars, xs))
        for eqn in jaxpr.eqns:
            outs = eqn.primitive.bind(*[ad._literal_value(x) if isinstance(x, Literal)
                                        else env[x] for x in eqn.invars], **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            for v, o in zip(eqn.outvars, outs):
                env[v] = staged[v] = o
        return [ad._literal_value(v) if isinstance(v, Literal) else env[v]
                for v in jaxpr.outvars]

    def jvp_fun(*flat):
        rest = iter(flat[n:])
        tangents = [next(rest) if m else None for m in mask]
        p_out, t_out = ad.jvp_flat(run, list(flat[:n]), tangents)
        return list(p_out) + [t for t in t_out if t is not None]

    def var_of(t):
        while t is not None and not hasattr(t, "_var"):
            t = getattr(t, "primal", None)
        return getattr(t, "_var", None)

    t_avals = [a.to_shaped() for a, m in zip(avals, mask) if m]
    closed, _ = trace_to_jaxpr(jvp_fun, avals + t_avals, None, transform="checkpoint")
    jvp = closed.jaxpr
    in_jvp = {}
    for v in saveable:
        u = var_of(staged.get(v))
        if u is not None:
            in_jvp[u] = v
    made_by = {u: eqn for eqn in jvp.eqns for u in eqn.outvars}
    saved, seen = set(), set()
    stack = list(residual_reads(jvp, n))
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        if u in in_jvp:
            saved.add(in_jvp[u])
            continue
        eqn = made_by.get(u)
        if eqn is not None:
            stack.extend(x for x in eqn.invars if type(x) is Var)
    return [v for v in saveable if v in saved]


def _split_by_policy(inner, policy, names):
    """``(first, second)`` ClosedJaxprs: ``first`` maps ``inner``'s inputs to the values
    ``policy`` saves, ``second`` maps the inputs and those values to ``inner``'s
    outputs; None when the policy saves nothing or ``inner`` has an effect (which would
    run twice)."""
    from .core.jaxpr import ClosedJaxpr, Jaxpr, Var
    from .core.passes import dce
    jaxpr = inner.jaxpr
    if any(e.primitive.effectful for e in jaxpr.eqns):
        return None
    saveable, seen = [], set(jaxpr.invars)
    for eqn in jaxpr.eqns:
        avals = [x.aval for x in eqn.invars]
        keep = bool(policy(eqn.primitive, *avals, **eqn.params))
        for v in eqn.outvars:
            if v in seen:
                continue
            if keep or (v in names and policy(_NAME_PRIM, v.aval, name=names[v])):
                saveable.append(v)
                seen.add(v)
    saved = _saved_under_policy(inner, saveable) if saveable else []
    if not saved:
        return None
    first = dce(Jaxpr((), jaxpr.invars, jaxpr.eqns, saved))
    cut = set(saved)
    rest = [e for e in jaxpr.eqns if not any(v in cut for v in e.outvars)]
    # An equation with some results saved and some not is recomputed whole.
    partly = [e for e in jaxpr.eqns if any(v in cut for v in e.outvars)
              and not all(v in cut for v in e.outvars)]
    if partly:
        return None
    second = dce(Jaxpr((), tuple(jaxpr.invars) + tuple(saved), rest, jaxpr.outvars))
    return ClosedJaxpr(first, []), ClosedJaxpr(second, [])


def checkpoint(fun, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """``fun`` whose intermediate values are recomputed in the backward pass instead of
    being stored by the forward pass.

    ``fun`` is staged as one call equation (``jit[name=checkpoint(fun)]``). Its JVP is
    a second call that takes the primal inputs and recomputes every intermediate from
    them, so the only residuals the forward pass keeps for the backward pass are
    ``fun``'s inputs (and the values it closes over); the transposed call recomputes
    ``fun``'s forward computation before running backwards. Gradients (and JVPs,
    Hessians, batching) equal those of ``fun`` itself. ``fun`` is traced at the ``shaped`` level
    (as in JAX): Python control flow on argument values needs ``static_argnums``.
    Under ``jit``, absjit's common-subexpression pass may merge the recomputation with
    the forward pass, trading the memory saving for speed; the values are unchanged.

    Parameters
    ----------
    fun : callable
    prevent_cse : bool
        Accepted for compatibility with JAX.
    policy : callable or None
        JAX's rematerialisation policy (``absjit.checkpoint_policies``). absjit saves
        only ``fun``'s inputs whatever the policy: every policy gives the same values
        and gradients, only the memory/recompute trade-off differs from JAX's.
    static_argnums : int or tuple of int
        Positional arguments passed as Python values (not differentiated).

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> f = absjit.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    >>> absjit.grad(f)(0.0)
    Array(1., dtype=float32, weak_type=True)
    """
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be a callable from checkpoint_policies "
                        f"or None, got {policy!r}")
    if not callable(fun):
        raise TypeError(f"checkpoint: expected a callable, got {fun!r}")
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    static_argnums = tuple(static_argnums)
    name = getattr(fun, "__name__", type(fun).__name__)

    @functools.wraps(fun)
    def remat_f(*args, **kwargs):
        n = len(args)
        for i in static_argnums:
            if not -n <= i < n:
                raise ValueError(f"checkpoint: static_argnums {i} is out of range for "
                                 f"{n} positional arguments")
        static = {i % n for i in static_argnums}
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        leaves, in_tree = tree_util.tree_flatten((dyn, kwargs))
        box = []

        def flat_fun(*flat):
            d, kw = tree_util.tree_unflatten(in_tree, list(flat))
            it = iter(d)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            out_leaves, out_tree = tree_util.tree_flatten(fun(*full, **kw))
            box.append(out_tree)
            return out_leaves

        avals = [_aval_of(x) for x in leaves]
        debug = DebugInfo.of(fun, [f"args[{i}]" for i in range(len(leaves))], "checkpoint")
        token = checkpoint_names.set({}) if policy is not None else None
        try:
            closed, _ = trace_to_jaxpr(flat_fun, avals, debug, transform="checkpoint")
            names = checkpoint_names.get()
        finally:
            if token is not None:
                checkpoint_names.reset(token)
        # Values ``fun`` closes over become explicit operands, so their cotangents flow
        # back to whoever traced them (an enclosing grad, say).
        inner, consts = hoist_consts(closed)
        split = _split_by_policy(inner, policy, names) if policy is not None else None
        if split is None:
            outs = call_jit(*consts, *leaves, jaxpr=inner, name=f"checkpoint({name})")
        else:
            # Two checkpointed calls: the first computes the values the policy saves,
            # the second the outputs from the inputs and those values. Differentiated,
            # each keeps only its inputs, so the saved values are kept and everything
            # else is recomputed.
            first, second = split
            saved = call_jit(*consts, *leaves, jaxpr=first, name=f"checkpoint({name})")
            outs = call_jit(*consts, *leaves, *saved, jaxpr=second,
                            name=f"checkpoint({name})")
        return tree_util.tree_unflatten(box[-1], list(outs))

    return remat_f


remat = checkpoint


# ---------------------------------------------------------------------------
# devices
# ---------------------------------------------------------------------------
def _platform_of(backend_name: str) -> str:
    from .backends.base import platform_of
    return platform_of(backend_name)


def _check_backend(backend):
    """The backend name ``backend`` resolves to (``None``: the default backend)."""
    from .backends.base import _ALIASES, _REGISTRY, available_backends
    if backend is None:
        return _default_backend_name()
    if not isinstance(backend, str) or _ALIASES.get(backend, backend) not in _REGISTRY:
        raise RuntimeError(f"Unknown backend {backend!r}; available backends: "
                           f"{', '.join(available_backends())}")
    if backend == "tpu":  # a platform, not only a backend: there must be a TPU
        from .backends.base import default_platforms
        if "tpu" not in default_platforms():
            raise RuntimeError("Unknown backend 'tpu': this machine has no TPU; available "
                               f"backends: {', '.join(available_backends())}")
    return _ALIASES.get(backend, backend)


def _default_backend_name() -> str:
    from .backends.base import select_backend
    return select_backend().name


def devices(backend=None) -> list:
    """The devices of ``backend`` (default: the default backend's).

    ``"cpu"`` and ``"interpret"`` have one CPU device; ``"cuda"`` (or ``"gpu"``) one
    device per GPU, and a ``RuntimeError`` saying what to install when there is none.

    Examples
    --------
    >>> import absjit
    >>> absjit.devices()[0].platform
    'cpu'
    >>> absjit.devices("cpu")
    [CpuDevice(id=0)]
    """
    from .backends.base import get_backend
    return get_backend(_check_backend(backend)).devices()


def local_devices(process_index=None, backend=None) -> list:
    """The devices of this process (all of them: absjit runs in one process).

    Examples
    --------
    >>> import absjit
    >>> absjit.local_devices()
    [CpuDevice(id=0)]
    """
    return devices(backend)


def device_count(backend=None) -> int:
    """How many devices ``backend`` has.

    Examples
    --------
    >>> import absjit
    >>> absjit.device_count()
    1
    """
    return len(devices(backend))


def local_device_count(backend=None) -> int:
    """How many devices this process has.

    Examples
    --------
    >>> import absjit
    >>> absjit.local_device_count()
    1
    """
    return len(local_devices(backend=backend))


def process_index(backend=None) -> int:
    """This process's index among the processes of a computation (0).

    Examples
    --------
    >>> import absjit
    >>> absjit.process_index()
    0
    """
    _check_backend(backend)
    return 0


def process_count(backend=None) -> int:
    """How many processes take part in the computation (1).

    Examples
    --------
    >>> import absjit
    >>> absjit.process_count()
    1
    """
    _check_backend(backend)
    return 1


def default_backend() -> str:
    """The platform of the default backend: ``'cpu'``, or the device's (``'gpu'``)
    when ``config.default_backend`` (or ``ABSJIT_DEFAULT_BACKEND``) names a backend
    whose arrays live on a device.

    Examples
    --------
    >>> import absjit
    >>> absjit.default_backend()
    'cpu'
    """
    return _platform_of(_default_backend_name())


def device_get(x):
    """A pytree with every array leaf as a NumPy array (other leaves unchanged).

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> absjit.device_get({"w": jnp.ones(2)})
    {'w': array([1., 1.], dtype=float32)}
    """
    def get(leaf):
        if isinstance(leaf, Tracer):
            from .errors import TracerArrayConversionError
            raise TracerArrayConversionError(leaf)
        if hasattr(leaf, "_value") or hasattr(leaf, "__array__") and not isinstance(
                leaf, (np.ndarray, np.generic)):
            return np.asarray(leaf)
        return leaf
    return tree_util.tree_map(get, x)
