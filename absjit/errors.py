"""Exceptions users see.

Every message names the function being traced, the argument the offending value came
from (when known), and the fix.
"""
from __future__ import annotations

__all__ = [
    "AbsjitError", "ConcretizationTypeError", "TracerBoolConversionError",
    "TracerIntegerConversionError", "TracerArrayConversionError",
    "NonConcreteBooleanIndexError", "UnexpectedTracerError", "CompilationError",
    "BackendUnavailableError",
]


class AbsjitError(Exception):
    """Base class for absjit's own errors that are not Python type/index errors."""


def _describe_origin(tracer) -> str:
    """Where a tracer's value came from, as the body of an error message."""
    describe = getattr(tracer._trace, "describe_origin", None)
    return describe(tracer) if describe is not None else ""


class ConcretizationTypeError(TypeError):
    """Python needed a concrete value, but the value is abstract at this level.

    Raised when ``bool()``, ``int()``, ``float()``, ``np.asarray()`` or a shape
    argument meets a tracer whose abstract value (``ShapedArray``) does not know its
    value. Fixes: mark the argument static (``static_argnames=[...]``), trace at the
    ``concrete`` level, use ``lax.cond``/``jnp.where`` for value-dependent choices, or
    NumPy for shape arithmetic.
    """

    _context = "The problem arose with the `{fn}` function."

    def __init__(self, tracer, context: str = ""):
        self.tracer = tracer
        origin = _describe_origin(tracer)
        msg = f"Abstract tracer value encountered where concrete value is expected: {tracer!r}\n"
        if context:
            msg += context + "\n"
        if origin:
            msg += origin
        super().__init__(msg)


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool()`` of an abstract tracer, e.g. ``if x > 0:`` under ``jit``."""

    def __init__(self, tracer):
        super().__init__(tracer, "The problem arose with the `bool` function.")


class TracerIntegerConversionError(ConcretizationTypeError):
    """``int()``/``__index__`` of an abstract tracer, e.g. ``range(n)`` under ``jit``."""

    def __init__(self, tracer, fn: str = "__index__"):
        super().__init__(tracer, f"The problem arose with the `{fn}` method.")


class TracerArrayConversionError(ConcretizationTypeError):
    """``np.asarray(tracer)``: NumPy cannot see a traced value; use ``absjit.numpy``."""

    def __init__(self, tracer):
        super().__init__(
            tracer,
            "The numpy.ndarray conversion method __array__() was called on a tracer. "
            "Use absjit.numpy (jnp) functions instead of numpy functions on traced values.")


class NonConcreteBooleanIndexError(IndexError):
    """Boolean-mask indexing ``x[mask]`` with a mask whose value is not known.

    The result's shape would depend on the mask's values. Use ``jnp.where(mask, x, 0)``
    or trace the mask at the ``concrete`` level.
    """

    def __init__(self, tracer):
        self.tracer = tracer
        super().__init__(
            "Array boolean indices must be concrete; got "
            f"{tracer!r}\n"
            "The size of the result would depend on the values of the mask. "
            "Use jnp.where(mask, x, fill) to keep a static shape, or make the mask "
            "concrete (abstraction={'mask': 'concrete'} or a static argument).\n"
            + _describe_origin(tracer))


class UnexpectedTracerError(Exception):
    """A tracer escaped the transformation that created it and was used later."""


class CompilationError(AbsjitError):
    """A backend failed to compile a jaxpr (the message names the primitive)."""


class BackendUnavailableError(ValueError, RuntimeError):
    """A backend that exists but cannot run on this machine was asked for (``"cuda"``
    without numba-cuda or without a GPU). The message lists the available backends and
    what to install. A ``RuntimeError``, and a ``ValueError`` as an unknown backend
    name is."""
