"""The compile worker: ``python -m absjit.backends.numba_cpu.compile_worker``.

Reads requests from standard input and answers on standard output, each a pickled
message behind its length (:func:`.compile_process.read_message`). A request is a
``spec`` dict describing one generated function exactly as the cpu backend would
compile it in process:

``module``
    the module name (``absjit_k_<digest>``), registered in ``sys.modules`` as the
    backend does, so the function's environment pickles by that name;
``text``
    the module's source; ``fn`` the function's name in it;
``flags``, ``sig``
    ``numba.njit`` flags and the Numba signature to compile;
``callees``
    specs of the functions it calls by name (outlined loop bodies), compiled first;
``pool``
    whether it links against absjit's thread pool.

The answer is ``("ok", payload)`` with ``payload`` the pickled tuple
``CompileResult._rebuild`` takes (unpickled by the caller once the module is in its
``sys.modules``: the function's environment refers to it by name), ``("numba-error", message)`` when Numba refused the
source (the caller raises ``CompilationError``), or ``("unavailable", reason)`` when
the result cannot travel (what Numba's disk cache cannot store either).
"""
from __future__ import annotations

import os
import pickle
import sys
import types


def kernel_module(name, path, text, callees, flags):
    """The module holding one generated function, as the cpu backend builds it here and
    in the worker: registered in ``sys.modules`` (object-mode blocks and pickled
    environments find it by name), its callees bound, the chunk functions of its pool
    loops jitted serially."""
    import numba

    from .kernels.blas_kernels import GEMM_CALLERS
    if any(f"{helper}(" in text for helper in GEMM_CALLERS):
        from .kernels.lapack_symbols import ensure_gemm
        ensure_gemm()  # the symbol its code links against (loaded from disk too)
    module = types.ModuleType(name)
    module.__file__ = path
    sys.modules.setdefault(name, module)
    module.__dict__.update(callees)  # outlined loop bodies this function calls
    exec(compile(text, path, "exec"), module.__dict__)  # noqa: S102 - our own source
    # chunks run as tasks of the pool, called from compiled code only
    chunk_flags = dict(flags, parallel=False, no_cpython_wrapper=True)
    for nm, obj in list(module.__dict__.items()):
        if nm.startswith("_loop") and isinstance(obj, types.FunctionType):
            module.__dict__[nm] = numba.njit(**chunk_flags)(obj)
    return module


def _compile(spec, done):
    import numba

    from ...compat import numba_opt_level
    from .parallel import pool, threads
    name = spec["module"]
    got = done.get(name)
    if got is not None:
        return got
    callees = {nm: _compile(sub, done) for nm, sub in spec["callees"].items()}
    if spec["flags"].get("parallel"):
        threads.configure_layer()
    if spec["pool"] and not pool.ensure():
        raise _NotHere(f"absjit's thread pool could not be built ({pool.failure()})")
    module = kernel_module(name, f"<absjit kernel {name}>", spec["text"], callees,
                           spec["flags"])
    disp = numba.njit(**spec["flags"])(module.__dict__[spec["fn"]])
    with numba_opt_level():  # as the caller's process would compile it
        disp.compile(spec["sig"])
    done[name] = disp
    return disp


#: Compiled functions kept for requests that call them again.
_KEEP = 256


class _NotHere(Exception):
    pass


def _payload(disp):
    (cres,) = disp.overloads.values()
    if any(not x.can_cache for x in cres.lifted):
        raise _NotHere("it has object-mode blocks")
    if cres.library.has_dynamic_globals:
        raise _NotHere("it uses dynamic globals")
    return cres._reduce()


def main() -> None:
    import numba

    from .compile_process import read_message, write_message
    # The protocol owns the original standard output; anything printed goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    done: dict = {}
    while True:
        try:
            spec = read_message(inp)
        except EOFError:
            return
        if len(done) > _KEEP:  # each request carries its callees: only a shortcut
            done.clear()
        try:
            payload = _payload(_compile(spec, done))
            answer = ("ok", pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
        except _NotHere as e:
            answer = ("unavailable", str(e))
        except numba.core.errors.NumbaError as e:
            answer = ("numba-error", str(e))
        except Exception as e:  # noqa: BLE001 - e.g. a payload that does not pickle
            answer = ("unavailable", f"{type(e).__name__}: {e}")
        write_message(out, answer)


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
