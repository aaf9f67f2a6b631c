"""absjit: JAX's programming model, compiled with Numba.

Write NumPy-style code against ``absjit.numpy`` and ``absjit.lax``, trace it into a
jaxpr at a chosen abstraction level, and run it eagerly or compiled.

Examples
--------
>>> import absjit, absjit.numpy as jnp
>>> print(absjit.make_jaxpr(lambda x: jnp.log(x) / jnp.log(2.0))(3.0))
{ lambda ; a:f32[]. let
    b:f32[] = log a
    c:f32[] = log 2.0
    d:f32[] = div b c
  in (d,) }
"""
from __future__ import annotations

from ._version import __version__  # noqa: F401
from .config import config  # noqa: E402
from . import errors, tree_util, tree, dtypes  # noqa: E402,F401
from .array import Array  # noqa: E402
from .core.levels import Level, get_level, register_level, registered_levels  # noqa: E402,F401
from .core.avals import ConcreteArray, ShapedArray  # noqa: E402,F401
from .interpreters.staging import make_jaxpr  # noqa: E402
from . import numpy, lax  # noqa: E402,F401
from .api_transforms import (grad, value_and_grad, jvp, vjp, linearize, jacfwd,  # noqa: E402
                             jacrev, hessian, vmap)
jacobian = jacrev  # JAX's name for the reverse-mode Jacobian
from .custom_derivatives import custom_jvp, custom_vjp, custom_gradient  # noqa: E402
from .api_utils import (ShapeDtypeStruct, eval_shape, checkpoint, remat, Device,  # noqa: E402
                        devices, local_devices, device_count, local_device_count,
                        device_get, process_index, process_count, default_backend)
from ._callbacks import pure_callback  # noqa: E402
from .api_contexts import (disable_jit, ensure_compile_time_eval, named_scope,  # noqa: E402
                           named_call, typeof, linear_transpose, closure_convert,
                           print_environment_info)
from .dtypes import float0  # noqa: E402
from . import debug  # noqa: E402,F401
# Callable: absjit.backends() lists them. Each backend's module is imported the first
# time it is asked for (absjit.backends.base.register_backend_module), not here.
from . import backends  # noqa: E402,F401
from .jit import jit, clear_caches  # noqa: E402
from .jit.pmap import pmap  # noqa: E402
from .jit import compile_cache as _compile_cache  # noqa: E402
from .jit.runtime import block_until_ready, device_put  # noqa: E402
from . import typing, sharding, flatten_util, ad_checkpoint, experimental  # noqa: E402,F401
from .ad_checkpoint import checkpoint_policies  # noqa: E402

jit.compile_cache = _compile_cache  # ``absjit.jit`` names the function, not the package

# Submodules imported on first use (PEP 562), so that ``import absjit`` stays fast:
# ``absjit.nn.relu`` works without ``import absjit.nn``, as in JAX.
_LAZY_SUBMODULES = ("random", "nn", "scipy", "cache", "example_libraries", "dask", "extend")


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))

__all__ = ["Array", "config", "errors", "tree_util", "dtypes", "make_jaxpr", "numpy", "lax",
           "register_level", "get_level", "Level", "ShapedArray", "ConcreteArray", "random",
           "grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "hessian",
           "vmap", "custom_jvp", "custom_vjp", "custom_gradient", "debug", "jacobian", "eval_shape",
           "ShapeDtypeStruct", "checkpoint", "remat", "pure_callback", "Device", "devices",
           "local_devices", "device_count", "local_device_count", "device_get",
           "process_index", "process_count", "default_backend", "nn", "tree",
           "jit", "clear_caches", "block_until_ready", "device_put", "backends",
           "disable_jit", "ensure_compile_time_eval", "named_scope", "named_call", "typeof",
           "linear_transpose", "print_environment_info", "pmap", "closure_convert",
           "float0", "typing", "sharding", "flatten_util", "ad_checkpoint", "experimental",
           "checkpoint_policies"]
