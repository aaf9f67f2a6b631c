"""``absjit.numpy``: NumPy's API with JAX's semantics (immutable arrays, JAX type
promotion, 32-bit defaults), written on top of ``absjit.lax``.

Examples
--------
>>> import absjit.numpy as jnp
>>> jnp.add(1, 1.0)
Array(2., dtype=float32, weak_type=True)
"""
from __future__ import annotations

import sys as _sys

# The submodules import one another downwards only, in this order (docs/architecture.md);
# ``_array_api`` comes last: its creation functions (with ``device=``) are the public ones.
# ``_array_methods`` (the methods of Array and Tracer) is above them all.
from ._creation import *  # noqa: F401,F403
from ._ufuncs import *  # noqa: F401,F403
from ._linalg import *  # noqa: F401,F403
from ._dtypes import *  # noqa: F401,F403
from ._reductions import *  # noqa: F401,F403
from ._shape import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403
from ._ranges import *  # noqa: F401,F403
from ._misc import *  # noqa: F401,F403
from ._padding import *  # noqa: F401,F403
from ._searching import *  # noqa: F401,F403
from ._numeric import *  # noqa: F401,F403
from ._polynomial import *  # noqa: F401,F403
from ._setops import *  # noqa: F401,F403
from ._editing import *  # noqa: F401,F403
from ._index_tricks import *  # noqa: F401,F403
from ._mathfuncs import *  # noqa: F401,F403
from ._array_api import *  # noqa: F401,F403
from . import (_array_api, _array_methods, _creation, _dtypes, _editing,  # noqa: E402
               _index_tricks, _linalg, _mathfuncs, _misc, _numeric, _padding, _polynomial,
               _ranges, _reductions, _searching, _setops, _shape, _sorting, _ufuncs)

_array_methods.install_all(_sys.modules[__name__])

pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")
newaxis = None
euler_gamma = 0.5772156649015329
__array_api_version__ = "2023.12"
__array_namespace_info__ = _array_api.__array_namespace_info__

# The public names: each submodule's ``__all__``, the constants above and ``linalg``
# (built from the modules, so names imported for internal use never leak).
__all__ = sorted({name for m in (_dtypes, _creation, _ufuncs, _reductions, _shape, _linalg,
                                 _sorting, _ranges, _padding, _searching, _numeric,
                                 _index_tricks, _misc, _setops, _editing, _mathfuncs,
                                 _polynomial, _array_api)
                  for name in m.__all__}
                 | {"pi", "e", "inf", "nan", "newaxis", "euler_gamma", "linalg", "fft",
                    "bfloat16"})


def __getattr__(name):
    # ``linalg`` and ``fft`` are imported on first use (PEP 562): ``import absjit`` stays
    # fast. So is ``bfloat16``, whose dtype comes from ml_dtypes (see absjit.dtypes).
    if name in ("linalg", "fft"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    if name == "bfloat16":
        globals()["bfloat16"] = _dtypes.bfloat16
        return _dtypes.bfloat16
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"linalg", "fft", "bfloat16"})
