"""``absjit.scipy.cluster``: vector quantisation (``jax.scipy.cluster``)."""
from . import vq  # noqa: F401

__all__ = ["vq"]
