"""Sizes as text: how a :class:`~absjit.core.dims.Dim` prints (``3*x0 + 1``) and how
generated code spells it (``(3 * _n_x0 + 1)``, with :func:`code_name` naming atoms).
"""
from __future__ import annotations

from .dim_poly import SizePolynomial, _Atom

__all__ = ["code_name"]


def _atom_name(a) -> str:
    return a.name


def code_name(a) -> str:
    """The local name generated code gives a root atom's value."""
    return f"_n_{a.name}"


def _format(x, name, code=False) -> str:
    if isinstance(x, int):
        return str(x)
    parts = []
    consts = []
    for m, c in sorted(x._terms.items(), key=lambda mc: (len(mc[0]) == 0, mc[1] < 0,
                                                        str(mc[0]))):
        if m == ():
            consts.append(c)
            continue
        factors = [_format_factor(f, name, code) for f in m]
        body = "*".join(factors) if not code else " * ".join(factors)
        if c == 1:
            parts.append(("+", body))
        elif c == -1:
            parts.append(("-", body))
        else:
            joiner = "*" if not code else " * "
            parts.append(("+" if c > 0 else "-", f"{abs(c)}{joiner}{body}"))
    for c in consts:
        parts.append(("+" if c > 0 else "-", str(abs(c))))
    text = ""
    for k, (sign, body) in enumerate(parts):
        if k == 0:
            text = body if sign == "+" else f"-{body}"
        else:
            text += f" {sign} {body}"
    if code and len(parts) > 1:
        text = f"({text})"
    return text


def _format_factor(f, name, code):
    if isinstance(f, _Atom):
        return name(f)
    a = _format(f.a, name, code) if isinstance(f.a, SizePolynomial) else str(f.a)
    b = _format(f.b, name, code) if isinstance(f.b, SizePolynomial) else str(f.b)
    if f.op == "floordiv":  # (as source, each operand bracketed: ``a // (x0*x1)``)
        return f"(({a}) // ({b}))" if code else f"floordiv({a}, {b})"
    return f"{f.op}({a}, {b})"
