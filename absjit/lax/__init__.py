"""``absjit.lax``: the strict primitive API.

No implicit promotion: ``lax.add(1, 1.0)`` raises ``TypeError: lax.add requires
arguments to have the same dtypes, got int32, float32``. Each function binds one
primitive (or a few, for conveniences like ``lax.select``).
"""
from __future__ import annotations

from ..ops.elementwise import (  # noqa: F401
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_not,
    bitwise_or, bitwise_xor, cbrt, ceil, clamp, conj, convert_element_type, cos, cosh, div,
    eq, exp, exp2, expm1, floor, ge, gt, imag, integer_pow, is_finite, le, log, log1p,
    logistic, lt, max, min, mul, ne, neg, nextafter, pow, real, rem, round, rsqrt, select,
    select_n, shift_left, shift_right_arithmetic, shift_right_logical, sign, sin, sinh,
    sqrt, stop_gradient, sub, tan, tanh, ROUND_AWAY_FROM_ZERO, ROUND_TO_NEAREST_EVEN)
from ..ops.structural import broadcast, broadcast_in_dim, reshape  # noqa: F401

# NumPy-style aliases that JAX's lax also offers.
bitwise_and = bitwise_and
and_ = bitwise_and
or_ = bitwise_or
xor = bitwise_xor
not_ = bitwise_not
