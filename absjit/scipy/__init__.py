"""``absjit.scipy``: SciPy's API with JAX's semantics (``jax.scipy``): ``linalg``,
``special`` functions, ``stats`` distributions, ``signal`` convolutions, ``fft`` cosine
transforms, ``integrate``, ``optimize`` (BFGS), ``ndimage``, ``interpolate``,
``cluster`` and ``sparse.linalg`` (Krylov solvers), written on ``absjit.numpy`` and
``absjit.lax``."""
from . import (cluster, fft, integrate, interpolate, linalg, ndimage, optimize,  # noqa: F401
               signal, sparse, special, stats)

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
           "signal", "sparse", "special", "stats"]
