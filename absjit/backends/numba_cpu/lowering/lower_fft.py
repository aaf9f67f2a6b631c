"""``fft`` lowered to compiled transforms (:mod:`.fft_kernels`) for loop and branch bodies,
where the alternative is an object-mode block. At a program's top level it runs between
pieces instead (:data:`.lower_arrays.TOP_LEVEL_ON_HOST`): DUCC's threaded transforms are
faster there and need no compile.

Static shapes only; symbolic sizes keep the object-mode call of the NumPy implementation.
"""
from __future__ import annotations

from ....core.dims import Dim
from ....core.shapes import shape_code as _shape
from ....ops.fft import FftType, fft_p
from ...numba.lower_elementwise import dtype_ctor
from .lower_host import host_rule

__all__ = ["RULES", "lower_fft"]


def _prod(xs) -> int:
    out = 1
    for d in xs:
        out *= int(d)
    return out


def _around(shape, axis) -> str:
    """``(outer, n, inner)`` of ``shape`` around ``axis``, as source."""
    return f"({_prod(shape[:axis])}, {int(shape[axis])}, {_prod(shape[axis + 1:])})"


def lower_fft(ctx, outs, ins, in_avals, out_avals, *, fft_type, fft_lengths):
    (x,), (out,) = ins, outs
    xa, oa = in_avals[0], out_avals[0]
    if any(type(d) is Dim for a in (xa, oa) for d in a.shape):
        return host_rule(fft_p)(ctx, outs, ins, in_avals, out_avals, fft_type=fft_type,
                                fft_lengths=fft_lengths)
    nd, k = len(xa.shape), len(fft_lengths)
    axes = list(range(nd - k, nd))
    lines = [f"{out} = _empty({_shape(oa.shape)}, {dtype_ctor(oa.dtype)})"]

    def c2c(src, dst, shape, axes, inverse):
        """Transforms along ``axes`` (last first): the first reads ``src`` into ``dst``,
        the others work in place (no whole-array copy)."""
        code = []
        for ax in reversed(axes):
            code.append(f"_fft_c2c_axis({src}.reshape({_around(shape, ax)}), "
                        f"{dst}.reshape({_around(shape, ax)}), np.bool_({inverse}))")
            src = dst
        return code
    if fft_type in (FftType.FFT, FftType.IFFT):
        lines += c2c(x, out, oa.shape, axes, fft_type == FftType.IFFT)
    elif fft_type == FftType.RFFT:
        rows = _prod(xa.shape[:-1])
        lines.append(f"_fft_r2c_last({x}.reshape(({rows}, {int(xa.shape[-1])})), "
                     f"{out}.reshape(({rows}, {int(oa.shape[-1])})))")
        lines += c2c(out, out, oa.shape, axes[:-1], False)
    else:  # IRFFT: the other axes first, then the real transform of the last
        rows = _prod(xa.shape[:-1])
        half = x
        if k > 1:
            half = ctx.fresh("t")
            lines.append(f"{half} = _empty({_shape(xa.shape)}, {dtype_ctor(xa.dtype)})")
            lines += c2c(x, half, xa.shape, axes[:-1], True)
        lines.append(f"_fft_c2r_last({half}.reshape(({rows}, {int(xa.shape[-1])})), "
                     f"{out}.reshape(({rows}, {int(oa.shape[-1])})))")
    return lines


RULES = {fft_p: lower_fft}
