"""Scalar spellings for CUDA kernels: the cpu backend's table with device overrides.

The shared table (:mod:`absjit.backends.numba_cpu.lower_elementwise`) spells each
elementwise primitive as a Python expression for Numba. On the device a few spellings
change:

* ``exp``, ``log`` and ``logistic`` call ``math.exp``/``math.log`` (CUDA's intrinsics
  through libdevice) instead of the cpu backend's vectorisable kernels, which exist only
  because the CPU has no vector libm;
* transcendental functions with a float-to-float ``math`` version (``sqrt``, ``sin``,
  ``tanh``, ``log1p`` ...) use it: Numba types ``math.f(float32)`` as float32 on the
  device, so float32 code stays in single precision;
* ``rem`` on floats is ``math.fmod``, ``is_finite`` is ``math.isfinite``, ``exp2`` is
  ``math.pow(2, x)``;
* integer division calls the ``_idiv_<dtype>`` device functions of :mod:`.runtime`.

Everything else (arithmetic, comparisons, casts, ``select_n``, shifts, ``floor``,
``sign``, ``round``...) is the shared rule unchanged. ``math.floor``/``math.ceil`` are
not used: Numba types them as integer-valued, which loses ``inf`` and ``nan``.

Under Numba's CUDA simulator kernels run as Python, where ``math.log(0.0)`` raises
instead of returning ``-inf``; the simulator's kernel namespace therefore binds the
name ``math`` to :data:`SIM_MATH`, the same functions as NumPy ufuncs (IEEE results,
dtype preserved). The kernel source is identical either way.
"""
from __future__ import annotations

import types

import numpy as np

from ...ops import elementwise as ew
from ..numba_cpu.lower_elementwise import literal_expr, scalar_rules

__all__ = ["device_scalar_rules", "DEVICE_OVERRIDES", "SIM_MATH"]

_MATH_CALLS = {
    ew.expm1_p: "expm1", ew.log1p_p: "log1p", ew.sqrt_p: "sqrt", ew.sin_p: "sin",
    ew.cos_p: "cos", ew.tan_p: "tan", ew.asin_p: "asin", ew.acos_p: "acos",
    ew.atan_p: "atan", ew.sinh_p: "sinh", ew.cosh_p: "cosh", ew.tanh_p: "tanh",
    ew.asinh_p: "asinh", ew.acosh_p: "acosh", ew.atanh_p: "atanh", ew.atan2_p: "atan2",
    ew.is_finite_p: "isfinite", ew.exp_p: "exp", ew.log_p: "log",
}


def _math_call(fn):
    def rule(args, in_avals, out_aval, **params):
        return f"math.{fn}({', '.join(args)})"
    rule.__name__ = f"lower_{fn}_device"
    return rule


def lower_logistic_device(args, in_avals, out_aval, **params):
    one = literal_expr(1, in_avals[0].dtype)
    return f"({one} / ({one} + math.exp(-{args[0]})))"


def lower_rsqrt_device(args, in_avals, out_aval, **params):
    one = literal_expr(1, in_avals[0].dtype)
    return f"({one} / math.sqrt({args[0]}))"


def lower_exp2_device(args, in_avals, out_aval, **params):
    return f"math.pow({literal_expr(2, in_avals[0].dtype)}, {args[0]})"


def lower_rem_device(args, in_avals, out_aval, **params):
    if np.dtype(in_avals[0].dtype).kind == "f":
        return f"math.fmod({args[0]}, {args[1]})"
    return scalar_rules[ew.rem_p](args, in_avals, out_aval, **params)


DEVICE_OVERRIDES: dict = {p: _math_call(fn) for p, fn in _MATH_CALLS.items()}
DEVICE_OVERRIDES.update({ew.logistic_p: lower_logistic_device,
                         ew.rsqrt_p: lower_rsqrt_device,
                         ew.exp2_p: lower_exp2_device,
                         ew.rem_p: lower_rem_device})

# The table kernels are rendered with: the shared rules, then the device overrides.
device_scalar_rules: dict = {**scalar_rules, **DEVICE_OVERRIDES}

# ``math`` as the simulator's kernels see it (see the module docstring).
SIM_MATH = types.SimpleNamespace(
    exp=np.exp, log=np.log, expm1=np.expm1, log1p=np.log1p, sqrt=np.sqrt, sin=np.sin,
    cos=np.cos, tan=np.tan, asin=np.arcsin, acos=np.arccos, atan=np.arctan,
    sinh=np.sinh, cosh=np.cosh, tanh=np.tanh, asinh=np.arcsinh, acosh=np.arccosh,
    atanh=np.arctanh, atan2=np.arctan2, isfinite=np.isfinite, pow=np.power,
    fmod=np.fmod)
