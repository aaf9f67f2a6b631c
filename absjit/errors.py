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
    "InconclusiveDimensionError", "IncompatibleShapesError",
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


class IncompatibleShapesError(TypeError, ValueError):
    """Operand shapes that do not fit together: arrays that do not broadcast, a reshape
    to another size, a concatenation or a matrix product of mismatched shapes, a slice
    out of range. A ``TypeError``, as JAX raises, and a ``ValueError``, as NumPy does.

    Examples
    --------
    >>> import absjit.numpy as jnp
    >>> try:
    ...     jnp.ones(3) + jnp.ones(4)
    ... except TypeError as e:
    ...     print(type(e).__name__)
    IncompatibleShapesError
    """


class InconclusiveDimensionError(ConcretizationTypeError):
    """Python needed a concrete size from a symbolic dimension of the ``ranked`` level:
    ``range(x.shape[0])``, ``if x.shape[0] > 3``, ``int(n)``.

    The message names the argument and axis the size comes from. Fixes: trace that
    argument at the ``shaped`` level (``abstraction={"x": "shaped"}``), whose sizes are
    Python ints, or express the computation with array operations
    (``jnp.arange(n)``, ``lax.fori_loop(0, n, ...)``, ``jnp.where``).
    """

    def __init__(self, dim, what: str = ""):
        self.dim = dim
        try:
            origins = dim.origins()
        except Exception:  # noqa: BLE001 - a malformed dim still gets a message
            origins = []
        args = sorted({o.split(".shape")[0] for o in origins})
        where = ", ".join(origins) or str(dim)
        fix = (f"abstraction={{{', '.join(repr(a) + ': ' + repr('shaped') for a in args)}}}"
               if args else "abstraction='shaped'")
        TypeError.__init__(
            self,
            f"The size {dim} ({where}) is symbolic at the 'ranked' level, but Python "
            f"needed a concrete value for `{what}`. Sizes of arguments traced at the "
            "'ranked' level are not known while tracing (one compiled program serves "
            "every size). Possible fixes: trace the argument at the 'shaped' level "
            f"({fix}), which compiles once per shape; or express the size-dependent "
            "part with array operations (jnp.arange(n), lax.fori_loop(0, n, ...), "
            "jnp.where).")
