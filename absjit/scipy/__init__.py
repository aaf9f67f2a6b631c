"""``absjit.scipy``: SciPy's API with JAX's semantics (``jax.scipy``): ``linalg``,
``special`` functions and ``stats`` distributions, written on ``absjit.numpy`` and
``absjit.lax``."""
from . import linalg, special, stats  # noqa: F401

__all__ = ["linalg", "special", "stats"]
