"""``absjit.scipy``: ``special`` functions and ``stats`` distributions, as
``jax.scipy`` provides them (same names, dtypes and edge cases)."""
from . import special, stats  # noqa: F401

__all__ = ["special", "stats"]
