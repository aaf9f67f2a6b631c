"""The entry cache of one jitted function.

Like Numba's dispatcher, it is a dict from the call signature (the *key*) to a compiled
entry that only ever grows: a miss traces and compiles, then adds an entry; nothing is
evicted. Two dicts point at the same entries:

* ``entries``: the canonical key — ``(context, pytree structure, avals of dynamic
  leaves, static values)`` — built by the general argument path;
* ``fast``: a key cheap to build for calls whose arguments are all arrays or Python
  scalars passed positionally; its value is a runner specialised for those argument
  types. It is only a shortcut to an entry of ``entries``.

Reads on the hit path take no lock (``dict.get`` and ``dict.__setitem__`` are atomic);
misses are serialised per function so that concurrent first calls trace and compile
once. ``fast`` is only ever updated in place, since jitted closures hold it.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
import warnings
import weakref

from ..config import config
from ..core.shapes import is_static

__all__ = ["CacheEntry", "EntryCache", "CacheInfo", "EntryInfo", "all_caches"]

logger = logging.getLogger("absjit")


class CacheEntry:
    """One compiled specialisation of a jitted function."""

    __slots__ = ("key", "described", "executable", "consts", "out_tree", "out_avals",
                 "in_avals", "closed_jaxpr", "trace_seconds", "compile_seconds", "backend",
                 "passthrough", "run", "result_avals", "fast_kinds")

    def __init__(self, key, described, closed_jaxpr, executable, consts, in_avals,
                 out_avals, out_tree, backend, trace_seconds, compile_seconds):
        self.key = key
        self.described = described  # ((leaf name, readable), ...) for messages
        self.closed_jaxpr = closed_jaxpr
        self.executable = executable
        self.consts = consts
        self.in_avals = in_avals
        self.out_avals = out_avals
        # The aval each result Array gets: None where the size is symbolic (``ranked``
        # level), so the Array derives it from its buffer.
        self.result_avals = tuple(a if is_static(getattr(a, "shape", ())) else None
                                  for a in out_avals)
        self.out_tree = out_tree
        self.backend = backend
        self.trace_seconds = trace_seconds
        self.compile_seconds = compile_seconds
        # Outputs that are an input or constant returned unchanged: the buffer may be a
        # caller's writable NumPy array, which must not be frozen or aliased.
        jaxpr = closed_jaxpr.jaxpr
        ins = set(jaxpr.invars) | set(jaxpr.constvars)
        self.passthrough = tuple(i for i, v in enumerate(jaxpr.outvars) if v in ins)
        self.run = None
        # fast key -> argument kinds, kept while the entry runs on tier 0, so its fast
        # runners can be made again for the compiled tier (absjit.jit.tiering)
        self.fast_kinds: dict = {}

    @property
    def tier(self) -> str:
        """``"interpret"`` while tier 0 serves this entry, else ``"compiled"``."""
        return "interpret" if getattr(self.executable, "tier0", None) is not None \
            and self.executable.compiled is None else "compiled"


@dataclasses.dataclass(frozen=True)
class EntryInfo:
    """What ``cache_info()`` reports about one entry: its key, trace and compile
    seconds (a compile in the background counts once it has finished), its backend,
    and which tier serves it: ``"interpret"`` (tier 0, while the compile runs in the
    background) or ``"compiled"``."""

    key: str
    trace_seconds: float
    compile_seconds: float
    backend: str
    tier: str = "compiled"


@dataclasses.dataclass(frozen=True)
class CacheInfo:
    """Statistics of a jitted function's entry cache (see ``f.cache_info()``)."""

    function: str
    hits: int
    misses: int
    entries: tuple

    @property
    def size(self) -> int:
        return len(self.entries)

    def __str__(self):
        lines = [f"{self.function}: {self.size} entries, {self.hits} hits, "
                 f"{self.misses} misses"]
        for e in self.entries:
            tier = "" if e.tier == "compiled" else ", running on tier 0 (interpret)"
            lines.append(f"  {e.key}  [{e.backend}: trace {e.trace_seconds * 1e3:.2f} ms, "
                         f"compile {e.compile_seconds * 1e3:.2f} ms{tier}]")
        return "\n".join(lines)


_ALL_CACHES: "weakref.WeakSet[EntryCache]" = weakref.WeakSet()
_ALL_LOCK = threading.Lock()


def all_caches() -> list:
    with _ALL_LOCK:
        return list(_ALL_CACHES)


def _describe(described) -> str:
    return ", ".join(f"{name}: {desc}" for name, desc in described) or "(no arguments)"


class EntryCache:
    """Entries of one jitted function (shared by every ``jit(f)`` of the same ``f`` and
    options)."""

    def __init__(self, fn_name: str):
        self.fn_name = fn_name
        self.entries: dict = {}
        self.fast: dict = {}
        # jaxprs traced for calls under another transformation, by argument avals:
        # key -> (closed jaxpr without constants, constants, output structure)
        self.nested: dict = {}
        self.hits = 0
        self.misses = 0
        self.warned = False
        self.lock = threading.RLock()
        with _ALL_LOCK:
            _ALL_CACHES.add(self)

    def __len__(self):
        return len(self.entries)

    def clear(self) -> None:
        with self.lock:
            self.entries = {}
            self.fast.clear()  # in place: jitted closures hold this dict
            self.nested = {}
            self.hits = 0
            self.misses = 0
            self.warned = False

    def info(self) -> CacheInfo:
        entries = tuple(EntryInfo(_describe(e.described), e.trace_seconds,
                                  e.compile_seconds, e.backend.name, e.tier)
                        for e in list(self.entries.values()))
        return CacheInfo(self.fn_name, self.hits, self.misses, entries)

    def add(self, entry: CacheEntry) -> None:
        """Record a new entry (caller holds ``self.lock``), then warn if this function
        has now compiled more often than ``config.recompile_warning_threshold``."""
        entries = dict(self.entries)
        entries[entry.key] = entry
        self.entries = entries  # swap, so lock-free readers never see a half update
        threshold = config.recompile_warning_threshold
        if not self.warned and threshold is not None and len(entries) > threshold:
            self.warned = True
            warnings.warn(
                f"jitted function {self.fn_name!r} has been traced and compiled "
                f"{len(entries)} times (more than recompile_warning_threshold="
                f"{threshold}); the latest for {_describe(entry.described)}. "
                f"{_shape_advice()}If static arguments take many values, make fewer of "
                "them static.", RuntimeWarning, stacklevel=4)

    # -- explaining misses ---------------------------------------------------------
    def explain_miss(self, context, described) -> None:
        """Log why a call missed: which argument changed, compared with the closest
        existing entry."""
        if not self.entries:
            logger.warning("%s: first call, tracing for %s", self.fn_name,
                           _describe(described))
            return
        best = None
        for entry in list(self.entries.values()):
            diffs = _diff(entry, context, described)
            if best is None or len(diffs) < len(best):
                best = diffs
        logger.warning("%s: %s", self.fn_name, "; ".join(best) if best else
                       "no difference in the arguments (the entry is being added)")


def _diff(entry, context, described) -> list:
    out = []
    old_ctx = entry.key[0]
    if old_ctx != context:
        for name, a, b in zip(config._trace_flags + ("default_backend",), old_ctx, context):
            if a != b:
                out.append(f"config {name}: {a} -> {b}")
    old = dict(entry.described)
    new = dict(described)
    for name, desc in described:
        if name not in old:
            out.append(f"{name}: new argument {desc}")
        elif old[name] != desc:
            prev = old[name]
            if prev.endswith(" (static)") and desc.endswith(" (static)"):
                prev = prev[:-len(" (static)")]
            out.append(f"{name}: {prev} -> {desc}")
    for name, desc in entry.described:
        if name not in new:
            out.append(f"{name}: argument {desc} not passed")
    return out


def _shape_advice() -> str:
    """Advice for varying shapes that names only levels registered in this process."""
    from ..core.levels import registered_levels
    if "ranked" in registered_levels():
        return ("If its argument shapes vary, trace it once for every size with "
                "jit(..., abstraction='ranked'). ")
    return ("If its argument shapes vary, pad them to a few sizes (each size compiles "
            "once). ")
