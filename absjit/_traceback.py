"""Tracebacks without absjit's own frames.

An error raised inside a user's function while absjit traces it passes through a dozen
frames of absjit's tracer, caches and primitives before it reaches the user. Like JAX,
absjit removes those frames from the traceback at its API boundary (``jit``, the
transformations, the control-flow functions), so that the user sees their own code:

    File "model.py", line 12, in <module>
      loss = step(params, batch)
    File "absjit/_traceback.py", line 61, in wrapper      (the one frame left)
    File "model.py", line 7, in step
      if x > 0:
    TracerBoolConversionError: ...

``absjit.config.update("traceback_filtering", "off")`` (or
``ABSJIT_TRACEBACK_FILTERING=off``) keeps every frame, for debugging absjit itself.
"""
from __future__ import annotations

import functools
import os
import types

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_NOTE = ("--------------------\n"
         "absjit left its own frames out of this traceback; to see them, set "
         "absjit.config.update('traceback_filtering', 'off').")


def _is_internal(frame) -> bool:
    """absjit's own modules, and the code it generates (kernels and drivers, whether
    compiled from memory, ``<absjit ...>``, or loaded from the disk cache)."""
    filename = frame.f_code.co_filename
    return (filename.startswith(_PACKAGE_DIR) or filename.startswith("<absjit")
            or os.path.basename(filename).startswith("absjit_k_"))


def user_frame_summary():
    """``(filename, line, column, qualified function name)`` of the innermost frame
    outside absjit and the standard library's ``functools``/``contextlib``, or None.
    The column is 0-based and points at the call being made, as in JAX's source info."""
    import sys
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (_is_internal(frame) or name.endswith(("functools.py", "contextlib.py"))):
            code = frame.f_code
            line, col = frame.f_lineno, 0
            try:
                pos = list(code.co_positions())[frame.f_lasti // 2]
                line, col = pos[0] or line, pos[2] or 0
            except (AttributeError, IndexError):  # before Python 3.11
                pass
            return (name, line, col, getattr(code, "co_qualname", code.co_name))
        frame = frame.f_back
    return None


def filter_traceback(tb):
    """``tb`` without the frames of absjit's own modules (``None`` if nothing is left)."""
    kept = []
    while tb is not None:
        if not _is_internal(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def should_filter(err) -> bool:
    """Whether ``err``, caught at an API boundary, gets a filtered traceback."""
    from .config import config
    return config.traceback_filtering != "off" and _has_user_frame(err.__traceback__)


def filtered(err):
    """``err`` with absjit's frames removed from its traceback and a note saying so."""
    notes = getattr(err, "__notes__", ())
    if _NOTE not in notes and hasattr(err, "add_note"):
        err.add_note(_NOTE)
    return err.with_traceback(filter_traceback(err.__traceback__))


def api_boundary(fun):
    """Wrap a public entry point: an exception leaving it has absjit's frames removed
    from its traceback (unless filtering is off). Nested boundaries filter once each;
    filtering an already filtered traceback changes nothing."""
    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as err:
            if not should_filter(err):
                raise
            raise filtered(err)
    return wrapper


def _has_user_frame(tb) -> bool:
    """Filter only when the error passed through user code (a user function that
    raised while being traced): an error raised by absjit itself, e.g. on bad input,
    keeps its frames so that the raising line is visible."""
    while tb is not None:
        if not _is_internal(tb.tb_frame):
            return True
        tb = tb.tb_next
    return False
