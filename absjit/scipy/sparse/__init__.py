"""``absjit.scipy.sparse``: ``linalg``, the iterative solvers of
``jax.scipy.sparse.linalg`` (``cg``, ``gmres``, ``bicgstab``)."""
from . import linalg  # noqa: F401

__all__ = ["linalg"]
