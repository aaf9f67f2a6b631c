"""``absjit.example_libraries``: small reference libraries, as in
``jax.example_libraries``: ``optimizers`` (first-order optimizers as
``(init, update, get_params)`` triples) and ``stax`` (a neural-network layer library of
``(init_fun, apply_fun)`` pairs). Programs written for JAX's versions run with the
import changed.
"""
from . import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
