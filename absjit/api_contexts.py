"""Context managers and small API helpers JAX programs use around their transformed
functions: ``disable_jit``, ``ensure_compile_time_eval``, ``named_scope``/``named_call``,
``typeof``, ``linear_transpose`` and ``print_environment_info``.

``disable_jit`` and ``ensure_compile_time_eval`` change how operations are interpreted,
so they live in context variables (per thread and per asyncio task, as the trace state
does); the process-wide ``config.update("disable_jit", True)`` is the same switch for
every thread.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import platform
import sys

import numpy as np

from . import tree_util
from ._version import __version__
from .api_transforms import vjp
from .config import config
from .core.avals import ShapedArray
from .core.trace import _STATE, EVAL_MAIN, _TraceState, get_aval
from .ops.values import full

__all__ = ["disable_jit", "jit_disabled", "ensure_compile_time_eval", "named_scope",
           "named_call", "typeof", "linear_transpose", "closure_convert",
           "print_environment_info"]

_JIT_DISABLED: contextvars.ContextVar = contextvars.ContextVar("absjit_jit_disabled",
                                                               default=False)


def jit_disabled() -> bool:
    """Whether ``jit`` runs functions as plain Python here (:func:`disable_jit`, or
    ``config.update("disable_jit", True)``)."""
    return config.disable_jit or _JIT_DISABLED.get()


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Run ``jit``-wrapped functions as plain Python inside the context: every operation
    executes eagerly (or under the enclosing transformation), so ``print`` shows values
    and a debugger can step through. Caches are neither read nor filled.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> @absjit.jit
    ... def f(x):
    ...     print("x is", x)
    ...     return x + 1
    >>> with absjit.disable_jit():
    ...     f(jnp.float32(1))
    x is 1.0
    Array(2., dtype=float32)
    """
    token = _JIT_DISABLED.set(bool(disable))
    # A state equal to the current one but not identical: jitted functions leave their
    # hit path (which checks identity with the base state) and see the switch.
    state = _STATE.get()
    state_token = _STATE.set(_TraceState(state.stack, state.dynamic))
    try:
        yield
    finally:
        _STATE.reset(state_token)
        _JIT_DISABLED.reset(token)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Evaluate operations on known values eagerly while tracing, instead of staging
    them into the program: inside ``jit``, ``jnp.arange(3) * 2`` is then a concrete
    array that Python ``if`` and ``int()`` can read. Operations on traced arguments are
    traced as usual.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> @absjit.jit
    ... def f(x):
    ...     with absjit.ensure_compile_time_eval():
    ...         n = int(jnp.arange(4).sum())
    ...     return x * n
    >>> f(jnp.float32(2))
    Array(12., dtype=float32)
    """
    state = _STATE.get()
    token = _STATE.set(_TraceState(state.stack, EVAL_MAIN))
    try:
        yield
    finally:
        _STATE.reset(token)


@contextlib.contextmanager
def named_scope(name: str):
    """Name a region of a traced program. absjit's programs carry no name stack, so the
    scope changes nothing that is computed or printed; it exists so code written for
    profilers of other systems runs unchanged.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> with named_scope("layer1"):
    ...     y = jnp.ones(2) * 2
    """
    if not isinstance(name, str):
        raise TypeError(f"named_scope: name must be a str, got {type(name).__name__}")
    yield


def named_call(fun, *, name: str | None = None):
    """``fun`` under a name (see :func:`named_scope`): the same results, no extra cost.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> named_call(jnp.sin, name="sine")(0.0)
    Array(0., dtype=float32, weak_type=True)
    """
    if not callable(fun):
        raise TypeError(f"named_call: fun must be callable, got {type(fun).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"named_call: name must be a str, got {type(name).__name__}")

    @functools.wraps(fun)
    def named(*args, **kwargs):
        return fun(*args, **kwargs)
    return named


def typeof(x) -> ShapedArray:
    """The abstract value of ``x``: its shape, dtype and weak type, whatever level it
    is traced at (a concrete value gives its ``ShapedArray``).

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> typeof(jnp.ones((2, 3)))
    ShapedArray(float32[2,3])
    >>> typeof(1.0)
    ShapedArray(float32[], weak_type=True)
    """
    aval = get_aval(x)
    if type(aval).__name__ == "ConcreteArray":
        return ShapedArray(aval.shape, aval.dtype, aval.weak_type)
    return aval


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function ``fun``: a function from a cotangent of
    ``fun``'s output to the cotangents of its inputs (a tuple, one per argument).

    ``primals`` give the inputs' shapes and dtypes (arrays or ``ShapeDtypeStruct``);
    their values are not used. ``fun`` must be linear in its inputs; it is
    differentiated at zero, so for a linear function the result is exact, and a
    function with a non-zero value at zero is refused.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> t = linear_transpose(lambda x: 2.0 * x[::-1], jnp.zeros(3))
    >>> t(jnp.array([1.0, 2.0, 3.0]))
    (Array([6., 4., 2.], dtype=float32),)
    """
    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes is not supported")
    flat, in_tree = tree_util.tree_flatten(primals)
    dts = [np.dtype(getattr(leaf, "dtype", None) or get_aval(leaf).dtype) for leaf in flat]
    for dt in dts:
        if not np.issubdtype(dt, np.inexact):
            raise TypeError(f"linear_transpose: inputs must be floating or complex, got "
                            f"{dt}")
    zero_leaves = [full(np.shape(leaf), 0, dt) for leaf, dt in zip(flat, dts)]
    zero_primals = tree_util.tree_unflatten(in_tree, zero_leaves)
    out, pullback = vjp(fun, *zero_primals)
    if any(np.any(np.asarray(leaf) != 0) for leaf in tree_util.tree_leaves(out)):
        raise ValueError("linear_transpose: fun is not linear (its value at zero is not "
                         "zero)")
    out_tree = tree_util.tree_structure(out)

    def transposed(*cotangents):
        ct = cotangents[0] if len(cotangents) == 1 else cotangents
        if tree_util.tree_structure(ct) != out_tree:
            raise TypeError(f"linear_transpose: cotangent structure "
                            f"{tree_util.tree_structure(ct)} does not match fun's output "
                            f"{out_tree}")
        return pullback(ct)
    return transposed


def closure_convert(fun, *example_args):
    """``fun`` with the floating-point values it closes over made explicit: returns
    ``(converted, consts)`` where ``converted(*args, *consts)`` equals ``fun(*args)``
    for arguments shaped like ``example_args``. Higher-order custom derivatives pass
    ``consts`` as ordinary arguments, so their cotangents are computed.

    Examples
    --------
    >>> import absjit, absjit.numpy as jnp
    >>> def outer(w):
    ...     f, consts = closure_convert(lambda x: x * w, 1.0)
    ...     return f(2.0, *consts)
    >>> absjit.grad(outer)(3.0)
    Array(2., dtype=float32, weak_type=True)
    """
    from .core.jaxpr import eval_jaxpr
    from .interpreters.staging import make_jaxpr
    box = []

    def flat_out(*args):
        out_leaves, tree = tree_util.tree_flatten(fun(*args))
        box.append(tree)
        return out_leaves
    closed = make_jaxpr(flat_out)(*example_args)
    in_tree = tree_util.tree_structure(example_args)
    out_tree = box[-1]
    consts = list(closed.consts)
    hoist = [i for i, c in enumerate(consts)
             if np.issubdtype(np.dtype(get_aval(c).dtype), np.inexact)]
    kept = {i: c for i, c in enumerate(consts) if i not in hoist}
    n_args = len(closed.jaxpr.invars)

    def converted(*args_and_consts):
        args, hoisted = args_and_consts[:len(example_args)], \
            args_and_consts[len(example_args):]
        if len(hoisted) != len(hoist):
            raise TypeError(f"closure_convert: expected {len(hoist)} constants after the "
                            f"arguments, got {len(hoisted)}")
        leaves, tree = tree_util.tree_flatten(tuple(args))
        if tree != in_tree or len(leaves) != n_args:
            raise TypeError(f"closure_convert: arguments {tree} do not match the example "
                            f"arguments {in_tree}")
        it = iter(hoisted)
        full = [kept[i] if i in kept else next(it) for i in range(len(consts))]
        return tree_util.tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, full, *leaves))

    return converted, [consts[i] for i in hoist]


def print_environment_info(return_string: bool = False):
    """The versions of absjit and of the libraries it runs on, for bug reports.

    Examples
    --------
    >>> "absjit:" in print_environment_info(return_string=True)
    True
    """
    lines = [f"{name + ':':<10}{v}" for name, v in library_versions().items()]
    lines.append(f"{'python:':<10}{sys.version.splitlines()[0]}")
    lines.append(f"{'machine:':<10}{platform.platform()} ({platform.machine()})")
    lines += [f"{what}: {value}" for what, value in backend_environment().items()]
    text = "\n".join(lines)
    if return_string:
        return text
    print(text)
    return None


# The libraries absjit runs on (ml_dtypes: bfloat16) and the optional one it is compared with.
_LIBRARIES = ("numpy", "numba", "llvmlite", "scipy", "ml_dtypes", "jax")


def library_versions() -> dict:
    """``{name: version}`` of absjit and the libraries it runs on (``"not installed"``
    for a missing one), read from the package metadata of those not imported yet, so
    asking imports none of them.

    Examples
    --------
    >>> list(library_versions())[:3]
    ['absjit', 'numpy', 'numba']
    """
    from importlib.metadata import PackageNotFoundError, version
    found = {"absjit": __version__}
    for name in _LIBRARIES:
        mod = sys.modules.get(name)
        if mod is not None:
            found[name] = getattr(mod, "__version__", "?")
            continue
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def backend_environment() -> dict:
    """What the backends available here report of their settings
    (:meth:`absjit.backends.base.Backend.environment`: the cpu backend's threading
    layer, for one)."""
    from .backends.base import get_backend, available_backends
    found = {}
    for name in available_backends():
        found.update(get_backend(name).environment())
    return found
