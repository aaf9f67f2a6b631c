"""``absjit.scipy``: SciPy's API with JAX's semantics, written on ``absjit.numpy`` and
``absjit.lax``."""
from . import linalg  # noqa: F401
