"""Scalar spellings for CUDA kernels: the cpu backend's table with device overrides.

The shared table (:mod:`absjit.backends.numba.lower_elementwise`) spells each
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
* integer division calls the ``_idiv_<dtype>`` device functions of :mod:`.runtime`;
* ``cbrt``, ``floor``, ``ceil`` and ``round`` on floats call libdevice (``cbrtf``,
  ``floorf``, ``rintf``, ``roundf`` …): numba-cuda has no ``np.cbrt``/``np.floor``/
  ``np.rint`` on the device, and ``math.floor`` is integer-valued; ``sign`` is a
  conditional expression (NaN and signed zeros are their own sign).

Everything else (arithmetic, comparisons, casts, ``select_n``, shifts...) is the shared
rule unchanged.

Under Numba's CUDA simulator kernels run as Python, where ``math.log(0.0)`` raises
instead of returning ``-inf``; the simulator's kernel namespace therefore binds the
name ``math`` to :data:`SIM_MATH`, the same functions as NumPy ufuncs (IEEE results,
dtype preserved). The kernel source is identical either way.
"""
from __future__ import annotations

import types

import numpy as np

from ...ops import elementwise as ew
from ..numba.lower_elementwise import literal_expr, scalar_rules

__all__ = ["device_scalar_rules", "DEVICE_OVERRIDES", "SIM_MATH", "LIBDEVICE_CALLS"]

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


# Float functions NumPy spells as ufuncs numba-cuda cannot call: libdevice's
# ``cbrtf``/``cbrt`` … through the ``_ld_<name>_<dtype>`` names of the kernel namespace
# (:func:`.runtime.kernel_namespace`; NumPy's ufuncs under the simulator).
LIBDEVICE_CALLS = {"cbrt": np.cbrt, "floor": np.floor, "ceil": np.ceil, "rint": np.rint,
                   "round": lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x)}


def _libdevice_call(fn):
    def rule(args, in_avals, out_aval, **params):
        dt = np.dtype(in_avals[0].dtype)
        if dt.kind != "f":
            return scalar_rules[_LIBDEVICE_PRIMS[fn]](args, in_avals, out_aval, **params)
        return f"_ld_{fn}_{dt.name}({args[0]})"
    rule.__name__ = f"lower_{fn}_device"
    return rule


_LIBDEVICE_PRIMS = {"cbrt": ew.cbrt_p, "floor": ew.floor_p, "ceil": ew.ceil_p}


def lower_round_device(args, in_avals, out_aval, *, rounding_method):
    fn = "rint" if rounding_method == ew.ROUND_TO_NEAREST_EVEN else "round"
    return f"_ld_{fn}_{np.dtype(in_avals[0].dtype).name}({args[0]})"


def lower_sign_device(args, in_avals, out_aval, **params):
    x, dt = args[0], np.dtype(in_avals[0].dtype)
    one, zero = literal_expr(1, dt), literal_expr(0, dt)
    if dt.kind == "u" or dt == np.bool_:
        return f"({one} if {x} > {zero} else {zero})"
    mone = literal_expr(-1, dt)
    # NaN, 0.0 and -0.0 are their own sign, as in np.sign
    rest = x if dt.kind == "f" else zero
    return f"({one} if {x} > {zero} else ({mone} if {x} < {zero} else {rest}))"


DEVICE_OVERRIDES: dict = {p: _math_call(fn) for p, fn in _MATH_CALLS.items()}


def lower_signbit_device(args, in_avals, out_aval, **params):
    # copysign carries a NaN's sign too; CUDA has no np.signbit.
    return f"(math.copysign(1.0, {args[0]}) < 0.0)"


DEVICE_OVERRIDES[ew.signbit_p] = lower_signbit_device
DEVICE_OVERRIDES.update({p: _libdevice_call(fn) for fn, p in _LIBDEVICE_PRIMS.items()})
DEVICE_OVERRIDES.update({ew.round_p: lower_round_device, ew.sign_p: lower_sign_device})
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
    fmod=np.fmod, copysign=np.copysign)
