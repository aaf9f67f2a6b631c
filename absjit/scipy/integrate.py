"""``absjit.scipy.integrate``: the trapezoidal rule (``jax.scipy.integrate``)."""
from __future__ import annotations

from .. import numpy as jnp

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` along ``axis`` by the trapezoidal rule, at sample points ``x``
    or with uniform spacing ``dx`` (``absjit.numpy.trapezoid``, under SciPy's name).

    Examples
    --------
    >>> from absjit.scipy import integrate
    >>> integrate.trapezoid(jnp.array([1., 2., 3.]))
    Array(4., dtype=float32)
    """
    return jnp.trapezoid(y, x=x, dx=dx, axis=axis)
