"""The cpu backend's renderer: the shared loop-IR renderer
(:mod:`absjit.backends.numba.render`) with this backend's whole-array rules
(:mod:`.lowering.lower_arrays`), its vectorising float folds
(:mod:`.kernels.fold_kernels`), and parallel nests run as tasks of absjit's thread
pool (:mod:`.parallel.loop_kernels`)."""
from __future__ import annotations

from ..numba.render import FunctionRenderer, size_text
from .lowering.lower_arrays import array_rule

__all__ = ["CpuRenderer"]

#: Float folds LLVM vectorises itself (:mod:`.kernels.fold_kernels`): no lanes needed.
FLOAT_FOLDS = {"add": "_fold_add", "max": "_fold_max", "min": "_fold_min"}


class CpuRenderer(FunctionRenderer):
    """Writes one function for ``numba.njit`` on the host (see
    :class:`~absjit.backends.numba.render.FunctionRenderer` for the arguments)."""

    float_folds = FLOAT_FOLDS

    def array_rule(self, prim):
        return array_rule(prim)

    def _pool_ok(self, s) -> bool:
        """Whether the nest or reduction ``s`` (marked parallel) runs on the pool."""
        return bool(self.pool_loops and s.parallel and not self.serial_only)

    def pool_loop(self, vars_, shape, depth, inner, count=None) -> bool:
        """Loops over ``vars_`` (sizes ``shape``) as a chunk function over a range of
        the outermost index, called through :func:`.loop_kernels._pool_for` (which
        see); ``inner(d)`` writes what the innermost loop runs. False, with nothing
        written, when that code needs the GIL (an ``objmode`` block): the caller
        writes a ``prange`` loop instead. ``count``: the outermost loop's trip count
        as source (default: ``shape[0]``'s)."""
        name = self._new("_loop")
        outer, outer_hoisted, self.lines = self.lines, dict(self.hoisted), []
        self.serial_only += 1
        try:
            self.emit("if t_lo < 0:", 1)
            self.emit("return", 2)
            self.emit("for t_k in range(t_hi - t_lo):", 1)
            self.emit(f"{self.loop_var(vars_[0])} = t_lo + t_k", 2)
            inner(self.loops(vars_[1:], shape[1:], 2, False))
        finally:
            self.serial_only -= 1
            body, self.lines, self.hoisted = self.lines, outer, outer_hoisted
        if any("objmode(" in line for line in body):
            return False
        captured = _free_names(body, ("t_lo", "t_hi", "t_k"), self.callees)
        # An alias is bound in the chunk from the array it names, passed once: LLVM
        # then sees one array (two arguments would be two pointers it must check for
        # overlap, and an in-place update ``b3[i] = f(b1[i])`` would fail that check
        # and run unvectorised).
        passed = list(dict.fromkeys(self.alias_of.get(c, c) for c in captured))
        rebind = [f"    {c} = {self.alias_of[c]}" for c in captured if c in self.alias_of]
        self.chunks.append("\n".join([f"def {name}({', '.join(('t_lo', 't_hi', *passed))}):"]
                                     + rebind + body) + "\n")
        values = "".join(c + ", " for c in passed)
        count = size_text(shape[0]) if count is None else count
        self.emit(f"_pool_for({name}, {count}, ({values}))", depth)
        self.uses_pool_loops = True
        return True


def _module_names() -> frozenset:
    """Names a generated module defines at its top (its header's imports)."""
    import builtins

    from . import runtime
    return frozenset(runtime.__all__) | frozenset(dir(builtins)) | {"np", "math", "prange"}


def _free_names(lines, params, callees) -> list:
    """The names a chunk's body ``lines`` reads but neither binds nor finds at module
    level: the kernel's values it must be passed, in order of first use."""
    import ast

    tree = ast.parse("def f():\n" + "\n".join(lines))
    bound, used = set(params), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif node.id not in used:
                used.append(node.id)
    known = _module_names() | set(callees)
    # ast.walk is breadth-first: order the reads by position for a canonical source
    order = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            pos = (node.lineno, node.col_offset)
            order[node.id] = min(order.get(node.id, pos), pos)
    return sorted((u for u in used if u not in bound and u not in known), key=order.get)
