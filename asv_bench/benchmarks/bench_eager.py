"""Eager (op-by-op) overhead: one absjit.numpy op on a small array against NumPy and
JAX's eager mode, measured side by side in one run."""
import numpy as np

import absjit.numpy as jnp

try:
    import jax
    import jax.numpy as jax_numpy
except ImportError:  # pragma: no cover - jax is a benchmark extra
    jax = None


class EagerSmallOps:
    """``x + y`` and ``sin(x)`` on 10 float32 elements."""

    params = ["absjit", "numpy", "jax"]
    param_names = ["library"]

    def setup(self, library):
        data = np.arange(10, dtype=np.float32)
        if library == "absjit":
            self.x = jnp.asarray(data)
            self.add = lambda a, b: a + b
            self.sin = jnp.sin
            self.scalar = lambda a: a * 2.0
        elif library == "numpy":
            self.x = data
            self.add = np.add
            self.sin = np.sin
            self.scalar = lambda a: a * 2.0
        else:
            if jax is None:
                raise NotImplementedError("jax is not installed")
            self.x = jax_numpy.asarray(data)
            self.add = lambda a, b: (a + b).block_until_ready()
            self.sin = lambda a: jax_numpy.sin(a).block_until_ready()
            self.scalar = lambda a: (a * 2.0).block_until_ready()
        self.add(self.x, self.x)
        self.sin(self.x)
        self.scalar(self.x)

    def time_add(self, library):
        self.add(self.x, self.x)

    def time_sin(self, library):
        self.sin(self.x)

    def time_mul_python_scalar(self, library):
        self.scalar(self.x)
