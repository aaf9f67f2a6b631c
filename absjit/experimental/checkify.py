"""Functional error checks (``jax.experimental.checkify``), minimal.

``checkify(f)`` returns a function giving ``(error, out)``; inside ``f``,
``check(pred, msg, *fmt_args)`` records ``msg`` (formatted with the run-time values)
as the error when ``pred`` is false. The check runs with run-time values, so it works
eagerly, under ``grad`` and inside ``jit``-compiled code called by the checkified
function (``checkify(jit(f))``). Only user checks exist (``errors=user_checks``); the
automatic NaN, division and index checks of JAX are not provided, and
``jit(checkify(f))`` is not supported (the error is not an array pytree here).

Examples
--------
>>> import absjit, absjit.numpy as jnp
>>> from absjit.experimental import checkify
>>> def f(x):
...     checkify.check(x > 0, "x must be positive, got {}", x)
...     return jnp.log(x)
>>> err, out = checkify.checkify(absjit.jit(f))(-1.0)
>>> err.get()
'x must be positive, got -1.0'
"""
from __future__ import annotations

import contextvars

import numpy as np

from .._callbacks import debug_callback

__all__ = ["checkify", "check", "Error", "JaxRuntimeError", "user_checks", "all_checks",
           "ErrorCategory"]


class JaxRuntimeError(ValueError):
    """Raised by :meth:`Error.throw` and by a failing :func:`check` outside
    :func:`checkify`."""


class ErrorCategory:
    """Kinds of errors; absjit has only user checks."""


class _UserCheck(ErrorCategory):
    pass


user_checks = frozenset({_UserCheck})
all_checks = user_checks
automatic_checks = frozenset()

_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("absjit_checkify", default=None)


class Error:
    """The outcome of a checkified call: the first failed check's message, or none."""

    __slots__ = ("_message",)

    def __init__(self, message=None):
        self._message = message

    def get(self):
        """The error message, or ``None`` when every check passed."""
        return self._message

    def throw(self) -> None:
        """Raise :class:`JaxRuntimeError` with the message if a check failed."""
        if self._message is not None:
            raise JaxRuntimeError(self._message)

    def __repr__(self):
        return f"Error({self._message!r})"


def _record(pred, msg, fmt):
    def host(p, *vals):
        if np.all(p):
            return
        box = _ACTIVE.get()
        text = msg.format(*[v.item() if np.ndim(v) == 0 else v for v in vals]) \
            if fmt else msg
        if box is None:
            raise JaxRuntimeError(text)
        if not box:
            box.append(text)
    return host


def check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
    """Record ``msg`` as the checkified function's error where ``pred`` is false.

    ``msg`` is formatted with ``str.format`` and the run-time values of ``fmt_args``.
    Outside :func:`checkify` a failing check raises :class:`JaxRuntimeError`.
    """
    if not isinstance(msg, str):
        raise TypeError(f"check: msg must be a string, got {msg!r}")
    if fmt_kwargs:
        raise TypeError("check: absjit formats the message with positional arguments only")
    from .. import numpy as jnp
    p = jnp.asarray(pred)
    if p.dtype != np.bool_:
        raise TypeError(f"check takes a scalar or array of type bool, got {p.dtype}")
    debug_callback(_record(pred, msg, bool(fmt_args)), p, *fmt_args)


def checkify(f, errors=user_checks):
    """``f`` returning ``(Error, out)``: the error of the first failing :func:`check`
    during the call (``Error(None)`` when none failed)."""
    if not callable(f):
        raise TypeError(f"checkify: expected a callable, got {f!r}")
    if not isinstance(errors, (set, frozenset)) or not errors <= all_checks:
        raise NotImplementedError("checkify: absjit supports errors=user_checks only")

    def checked(*args, **kwargs):
        box: list = []
        token = _ACTIVE.set(box)
        try:
            out = f(*args, **kwargs)
        finally:
            _ACTIVE.reset(token)
        return Error(box[0] if box else None), out
    checked.__name__ = f"checkify({getattr(f, '__name__', 'f')})"
    checked.__wrapped__ = f
    return checked
