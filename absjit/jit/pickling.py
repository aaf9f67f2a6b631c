"""What :func:`absjit.jit` returns, and how it pickles.

A jitted function pickles as *what to compile*, never as compiled code: the function it
wraps and the options ``jit`` was given. The receiving process rebuilds the wrapper
with ``jit`` and traces and compiles on its first call there (loading the kernels from
the disk cache when they are in it), so a pickle stays small and never carries machine
code between processes.

* **By reference** when the wrapper can be imported by name from a module (a
  module-level ``@jit`` function): the pickle holds ``module.name`` and loading it
  imports the module, exactly as for a plain function.
* **By value** otherwise — closures, lambdas, functions of ``__main__`` when
  ``cloudpickle`` pickles them (as Dask does): the pickle holds the wrapped function
  (pickled by ``cloudpickle`` when it is a closure) and the ``jit`` options. Every
  wrapper pickled this way carries a token, and a process keeps the wrappers it
  rebuilt by token (the last :data:`MAX_RECEIVED`): unpickling the same wrapper again —
  one pickle per Dask task — returns the wrapper already rebuilt, with its compiled
  entries.

>>> import pickle, absjit
>>> f = absjit.jit(lambda x: x + 1)
>>> import cloudpickle                     # what Dask uses for closures and lambdas
>>> g = pickle.loads(cloudpickle.dumps(f))
>>> g._cache_size(), g(1.0), g._cache_size()
(0, Array(2., dtype=float32, weak_type=True), 1)
"""
from __future__ import annotations

import collections
import functools
import sys
import threading
import types
import uuid

__all__ = ["JitFunction", "MAX_RECEIVED"]

#: How many wrappers pickled by value a process keeps after unpickling them.
MAX_RECEIVED = 256

_RECEIVED: "collections.OrderedDict[str, JitFunction]" = collections.OrderedDict()
_RECEIVED_LOCK = threading.Lock()


class JitFunction(functools.partial):
    """A jitted function: call it like the function it wraps.

    It is a ``functools.partial`` with no bound arguments around the dispatch closure,
    so that a call runs that closure without an extra Python frame (the cache-hit path
    stays as short as calling the closure itself). Beside the call it offers
    ``lower``, ``trace``, ``cache_info``, ``clear_cache`` and ``_cache_size``, the
    wrapped function's ``__name__``, ``__doc__``, ``__module__``, ``__qualname__`` and
    ``__wrapped__``, and pickling (see :mod:`absjit.jit.pickling`).
    """

    __slots__ = ()

    def __new__(cls, dispatch, fun, jit_options: dict):
        self = super().__new__(cls, dispatch)
        functools.update_wrapper(self, fun)
        self.__dict__.pop("_pickle_token", None)  # copied from a jitted ``fun``
        self.__dict__["_jit_options"] = jit_options
        return self

    def __get__(self, obj, objtype=None):
        # A plain function is a descriptor: a jitted function stored on a class binds
        # ``self`` the same way.
        return self if obj is None else types.MethodType(self, obj)

    def __repr__(self):
        return f"<jitted function {self.__qualname__} at {id(self):#x}>"

    def __reduce__(self):
        if _importable(self) and not _by_value(self.__module__):
            return self.__qualname__  # pickle stores module.qualname
        token = self.__dict__.get("_pickle_token")
        if token is None:
            token = self.__dict__.setdefault("_pickle_token", uuid.uuid4().hex)
        return (_rebuild, (token, self.__wrapped__, self._jit_options))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _importable(obj) -> bool:
    """``obj`` is what importing ``obj.__module__`` and reading ``obj.__qualname__``
    gives (so ``pickle`` can store it by name)."""
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    qualname = getattr(obj, "__qualname__", "")
    if module is None or "<locals>" in qualname:
        return False
    found = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
        if found is None:
            return False
    return found is obj


def _by_value(module_name: str) -> bool:
    """Whether ``cloudpickle`` is pickling right now and would pickle a function of
    ``module_name`` by value (``__main__``, or a module registered with
    ``cloudpickle.register_pickle_by_value``): the receiving process may not be able to
    import it. Plain ``pickle`` always refers to module-level functions by name."""
    cp = sys.modules.get("cloudpickle")
    if cp is None:
        return False
    registered = getattr(cp, "list_registry_pickle_by_value", lambda: ())()
    if module_name != "__main__" and module_name not in registered:
        return False
    frame = sys._getframe(2)
    for _ in range(32):  # the pickler's dump() is a few frames up
        if frame is None:
            return False
        if frame.f_globals.get("__name__", "").startswith("cloudpickle"):
            return True
        frame = frame.f_back
    return False


def _rebuild(token: str, fun, jit_options: dict):
    """Unpickle a wrapper pickled by value: the one this process rebuilt for ``token``
    before, or ``jit(fun, **jit_options)`` (nothing is traced or compiled here)."""
    with _RECEIVED_LOCK:
        got = _RECEIVED.get(token)
        if got is not None:
            _RECEIVED.move_to_end(token)
            return got
    from .api import jit
    wrapper = jit(fun, **jit_options)
    with _RECEIVED_LOCK:
        got = _RECEIVED.setdefault(token, wrapper)
        _RECEIVED.move_to_end(token)
        while len(_RECEIVED) > MAX_RECEIVED:
            _RECEIVED.popitem(last=False)
    if got is wrapper and isinstance(wrapper, JitFunction):
        wrapper.__dict__.setdefault("_pickle_token", token)
    return got


def received() -> list:
    """The wrappers this process rebuilt from by-value pickles, oldest first."""
    with _RECEIVED_LOCK:
        return list(_RECEIVED.values())
