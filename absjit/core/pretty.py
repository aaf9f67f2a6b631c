"""Printing jaxprs in the seeds' format.

A small Wadler/Oppen-style document printer: ``text``, ``brk`` (a space, or a newline
plus indentation when its group does not fit), ``nest`` (indentation relative to the
enclosing nest, not the column) and ``group`` (printed flat when its own content fits
in the remaining width). A jaxpr is a group, so short ones print on one line::

    { lambda ; a:f32[]. let b:f32[] = max 0.0 a in (b,) }

and long ones break, one equation per line.
"""
from __future__ import annotations

import numpy as np

__all__ = ["pp_jaxpr", "var_namer"]

_TEXT, _BRK, _CAT, _NEST, _GROUP = range(5)


def text(s):
    return (_TEXT, s)


def brk(s=" "):
    return (_BRK, s)


def cat(*docs):
    return (_CAT, docs)


def nest(n, doc):
    return (_NEST, n, doc)


def group(doc):
    return (_GROUP, doc)


def join(sep, docs):
    out = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return cat(*out)


def _fits(doc, width: int) -> bool:
    todo = [doc]
    while todo and width >= 0:
        d = todo.pop()
        kind = d[0]
        if kind == _TEXT or kind == _BRK:
            width -= len(d[1])
        elif kind == _CAT:
            todo.extend(reversed(d[1]))
        elif kind == _NEST:
            todo.append(d[2])
        else:
            todo.append(d[1])
    return width >= 0


def render(doc, width: int = 80) -> str:
    out: list[str] = []
    col = 0
    # agenda entries: (indent, flat?, doc)
    todo = [(0, False, doc)]
    while todo:
        indent, flat, d = todo.pop()
        kind = d[0]
        if kind == _TEXT:
            out.append(d[1])
            col += len(d[1])
        elif kind == _BRK:
            if flat:
                out.append(d[1])
                col += len(d[1])
            else:
                out.append("\n" + " " * indent)
                col = indent
        elif kind == _CAT:
            todo.extend((indent, flat, c) for c in reversed(d[1]))
        elif kind == _NEST:
            todo.append((indent + d[1], flat, d[2]))
        else:  # group
            todo.append((indent, flat or _fits(d[1], width - col), d[1]))
    return "".join(out)


# ---------------------------------------------------------------------------
# Jaxprs
# ---------------------------------------------------------------------------
def _encode_name(n: int) -> str:
    """0 -> a, 25 -> z, 26 -> ba, 27 -> bb (base-26 digits, 'a' is zero)."""
    s = ""
    while True:
        n, r = divmod(n, 26)
        s = chr(ord("a") + r) + s
        if n == 0:
            return s


def var_namer():
    names: dict = {}
    fresh = [0]

    def name(v):
        got = names.get(v)
        if got is None:
            got = names[v] = _encode_name(fresh[0])
            fresh[0] += 1
        return got
    return name


def _pp_atom(x, name) -> str:
    from .jaxpr import Literal
    if isinstance(x, Literal):
        return str(x)
    return name(x)


def _pp_binder(v, name) -> str:
    return f"{name(v)}:{v.aval.str_short()}"


def _pp_param_value(v, name, width):
    from .jaxpr import ClosedJaxpr, Jaxpr
    if isinstance(v, (Jaxpr, ClosedJaxpr)):
        return _pp_jaxpr_doc(v.jaxpr if isinstance(v, ClosedJaxpr) else v, name)
    if isinstance(v, tuple) and v and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in v):
        docs = [_pp_jaxpr_doc(j.jaxpr if isinstance(j, ClosedJaxpr) else j, name) for j in v]
        return cat(text("("), nest(1, join(brk(), docs)), text(")"))
    if isinstance(v, np.dtype):
        return text(v.name)
    if isinstance(v, type) and issubclass(v, np.generic):
        return text(np.dtype(v).name)
    if callable(v) and hasattr(v, "__name__"):
        return text(v.__name__)
    return text(str(v))


def _broadcast_in_dim_params(params):
    # As JAX prints it: the shape is the binder's; no broadcast dimensions, no param.
    shown = {k: v for k, v in params.items() if k != "shape"}
    if not shown.get("broadcast_dimensions", True):
        del shown["broadcast_dimensions"]
    return shown


# Params a primitive leaves out of its printed form (they repeat what the binder says).
_PRINTED_PARAMS = {"broadcast_in_dim": _broadcast_in_dim_params}


def _pp_params(eqn, name, width):
    params = eqn.params
    shown = _PRINTED_PARAMS.get(eqn.primitive.name)
    if shown is not None:
        params = shown(params)
    if not params:
        return text("")
    order = [k for k in eqn.primitive.param_order if k in params]
    order += sorted(k for k in params if k not in order)
    pairs = [cat(text(f"{k}="), _pp_param_value(params[k], name, width)) for k in order]
    return group(cat(nest(2, cat(text("["), brk(""), join(brk(), pairs))), brk(""), text("]")))


def _pp_eqn(eqn, name, width, used=None):
    # A result nothing reads prints as ``_`` (as JAX prints it) and takes no name.
    lhs = " ".join(_pp_binder(v, name) if used is None or v in used
                   else f"_:{v.aval.str_short()}" for v in eqn.outvars)
    doc = [text(lhs + " = " + eqn.primitive.name), _pp_params(eqn, name, width)]
    if eqn.invars:
        doc.append(text(" " + " ".join(_pp_atom(x, name) for x in eqn.invars)))
    return cat(*doc)


def _pp_jaxpr_doc(jaxpr, name, width=80):
    constvars = " ".join(_pp_binder(v, name) for v in jaxpr.constvars)
    invars = " ".join(_pp_binder(v, name) for v in jaxpr.invars)
    from .jaxpr import Var
    used = {x for e in jaxpr.eqns for x in e.invars if isinstance(x, Var)}
    used.update(v for v in jaxpr.outvars if isinstance(v, Var))
    eqns = join(brk("; "), [_pp_eqn(e, name, width, used) for e in jaxpr.eqns])
    outs = ", ".join(_pp_atom(v, name) for v in jaxpr.outvars)
    outs = f"({outs},)" if len(jaxpr.outvars) == 1 else f"({outs})"
    head = "{ lambda " + (constvars + "; " if constvars else "; ") + invars + ". let"
    return cat(group(nest(2, cat(text(head), nest(2, cat(brk(), eqns)), brk(),
                                 text("in " + outs)))), text(" }"))


def pp_jaxpr(jaxpr, width: int = 80) -> str:
    """The jaxpr as the seeds print it."""
    return render(_pp_jaxpr_doc(jaxpr, var_namer(), width), width)
