"""Run JAX's documentation notebooks on JAX and on absjit and compare what each cell prints.

Usage::

    git clone --depth 1 --branch jax-v0.10.2 https://github.com/jax-ml/jax /tmp/jaxsrc
    python scripts/jax_notebooks.py /tmp/jaxsrc/docs            # the default set under docs/
    python scripts/jax_notebooks.py NB.ipynb NB.md ...           # chosen notebooks
    python scripts/jax_examples.py /tmp/jaxsrc/examples          # JAX's examples/

Use the documentation of the jax release that is installed (0.10.2 here): the notebooks
at another commit use API that release may lack.

Each notebook runs twice, in a fresh process each time: once with the real ``jax``, once
with ``absjit.compat_jax.install()`` so that ``import jax`` gives absjit. The code cells
(``.ipynb``, or ``{code-cell}`` blocks of a MyST ``.md``) run in order in one namespace,
as a notebook kernel runs them; IPython syntax goes through IPython's own transformer.
What a cell shows is its standard output plus, as IPython would, the pretty-printed value
of a final expression statement (unless the cell ends with ``;``), plus the exception
type if the cell raises. Standard error (warnings, logs) is not compared. JAX's results
are cached under ``~/.cache/absjit-notebooks`` (keyed by the cells and jax's version).

Comparison (``normalise``/``same_output``):

* The text is cut into numbers and the rest; the rest must agree once whitespace is
  removed (array reprs pad columns to the widest number, so a digit more moves columns
  and line breaks), and numbers must agree to ``rtol=1e-4, atol=1e-5`` (float32 results
  from XLA and from Numba kernels may differ in the last bits; a repr prints 8 digits).
* Memory addresses (``at 0x7f...``) are masked and terminal colour codes removed.
* Deliberate differences (docs/jax-compatibility.md) are folded: jaxpr literals print bare in absjit
  (``2.0``, JAX ``2.0:f32[]``), a short jaxpr is not printed on one line (JAX 0.10
  separates its equations by ``;``), ``Var(id=...)`` numbers are masked, and tracers print as ``Traced<ShapedArray(...)>with<...>``
  (JAX ``JitTracer(~float32[])``, ``JVPTracer(...)`` ...): every tracer repr becomes
  ``<tracer>``.
* A cell that raises matches when absjit raises the same exception type as JAX, or a
  subclass of it (messages differ in wording and are not compared).
* A cell whose JAX output comes from a stale trace (``CELL_RULES``: JAX's
  ``checkpoint`` reuses a trace of ``loss`` made before the notebook redefines a
  function it calls) runs but is not compared.
* In a notebook that calls ``jax.debug.print`` without ``ordered=True``, lines of
  standard output are compared as a multiset from that cell on: such prints have no
  defined order (JAX's own order is XLA's schedule).
* NumPy's and Python's global random generators are seeded (0) in both runs, after
  ``import jax`` (importing jax draws from NumPy's generator).

Cells that are not compared (reported by reason): plots (run; only their standard
output is compared, counted as compared), interactive debugger (``breakpoint``),
timing (``%timeit`` runs its statement once; printed times are not compared), network
(downloads, ``pip``: not run), several devices / GPU / TPU (not run), XLA internals
(``jax.extend.mlir``, ``xla_client``, HLO text: not run), and cells that already fail
under JAX for lack of a package or of a skipped cell's names (``NameError``,
``ModuleNotFoundError`` of a non-jax module).
Whole notebooks about several devices, GPUs, TPUs or building XLA FFI libraries are
skipped (``NOTEBOOK_SKIPS``).
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("ABSJIT_NOTEBOOK_CACHE",
                            Path.home() / ".cache" / "absjit-notebooks"))

# Whole notebooks left out, with the reason.
NOTEBOOK_SKIPS = {
    "shard_map": "several devices",
    "parallel": "several devices",
    "distributed_data_loading": "several devices",
    "colocated-python": "several devices",
    "host-offloading": "GPU/TPU memory kinds",
    "layout": "device layouts (TPU/GPU)",
    "cute_dsl_jax": "GPU",
    "ffi": "builds an XLA FFI library",
    "jax-primitives": "defines primitives through JAX's private modules and MLIR lowerings",
}

# Per-cell reasons, checked in order against the cell's source. "run" reasons still
# execute the cell (later cells need its names); the others do not run it.
CELL_RULES = [
    ("network", False, re.compile(
        r"tfds\.|tensorflow_datasets|urllib|requests\.get|wget |!pip|%pip|torchvision|"
        r"torch\.utils|download=True|datasets\.mnist|datasets\.load|datasets\.face|pooch")),
    ("interactive debugger", False, re.compile(r"breakpoint\(|pdb\.")),
    ("several devices", False, re.compile(
        r"xla_force_host_platform_device_count|jax\.pmap|\bpmap\(|shard_map|Mesh\(|"
        r"NamedSharding|PartitionSpec|jax\.device_put_sharded|local_device_count\(\)|"
        r"make_mesh|with_sharding_constraint|jax\.distributed")),
    ("GPU/TPU", False, re.compile(r"devices\(['\"](gpu|tpu|cuda)|pallas|jax\.devices\(\)\[1")),
    ("XLA internals", False, re.compile(
        r"jax\.extend\.mlir|xla_client|jax\._src\.lib|mlir\.|as_hlo_text|\.as_text\(\)|"
        r"compiler_ir|hlo|stablehlo|jax\._src\.interpreters|xla_computation|"
        r"jax\._src\.xla|\.cost_analysis|memory_analysis")),
    # gradient-checkpointing.md redefines ``predict`` (adding checkpoint_name) after
    # ``jax.checkpoint(loss, ...)`` has traced ``loss``; JAX's checkpoint reuses that
    # trace (its cache keys on the function, not on the globals it reads), so the names
    # policy that follows prints the residuals of the old ``predict``. absjit retraces and
    # lists the saved ``layer0_output``, as JAX itself does in a fresh process.
    ("stale trace under jax", True, re.compile(
        r"save_any_names_but_these\('layer1_output'\)")),
    ("plot: stdout only", True, re.compile(r"matplotlib|plt\.|\.plot\(|imshow|seaborn")),
    ("timing", True, re.compile(r"%%?timeit|%%?time\b|time\.time\(|perf_counter")),
]


# ---------------------------------------------------------------------------- reading

def read_cells(path: Path) -> list[dict]:
    """The code cells of an ``.ipynb`` or MyST ``.md`` notebook: ``{"source", "tags"}``."""
    text = path.read_text()
    if path.suffix == ".ipynb":
        nb = json.loads(text)
        cells = []
        for c in nb["cells"]:
            if c.get("cell_type") != "code":
                continue
            src = c["source"]
            src = "".join(src) if isinstance(src, list) else src
            tags = c.get("metadata", {}).get("tags", [])
            cells.append({"source": src, "tags": list(tags)})
        return cells
    cells = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```{code-cell}"):
            i += 1
            tags = []
            body = []
            # Options: ":key: value" lines, or a "---" YAML block.
            if i < len(lines) and lines[i].strip() == "---":
                i += 1
                while i < len(lines) and lines[i].strip() != "---":
                    m = re.match(r"\s*tags:\s*\[(.*)\]", lines[i])
                    if m:
                        tags += [t.strip() for t in m.group(1).split(",")]
                    i += 1
                i += 1
            while i < len(lines) and lines[i].startswith(":"):
                m = re.match(r":tags:\s*\[(.*)\]", lines[i])
                if m:
                    tags += [t.strip() for t in m.group(1).split(",")]
                i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            cells.append({"source": "\n".join(body), "tags": tags})
        i += 1
    return cells


def classify(source: str):
    """``(reason, runs)`` for a cell left out of the comparison, else ``(None, True)``."""
    for reason, runs, pattern in CELL_RULES:
        if pattern.search(source):
            return reason, runs
    return None, True


def is_notebook(path: Path) -> bool:
    if path.suffix == ".ipynb":
        return True
    if path.suffix == ".md":
        head = path.read_text()[:600]
        return "jupytext" in head and "```{code-cell}" in path.read_text()
    return False


def default_set(docs: Path) -> list[Path]:
    """Every notebook under ``docs/`` and ``docs/notebooks`` and ``docs/jep``; an
    ``.ipynb`` is preferred to its paired ``.md``."""
    found = {}
    for folder in (docs, docs / "notebooks", docs / "jep"):
        for p in sorted(folder.glob("*.md")) + sorted(folder.glob("*.ipynb")):
            if is_notebook(p):
                found[p.with_suffix("")] = p  # the .ipynb comes second and wins
    return sorted(found.values())


# ---------------------------------------------------------------------------- the child

CHILD = r'''
import ast, io, json, os, signal, sys, traceback, contextlib, warnings
mode, cells_file, out_file, cell_timeout = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
os.environ.setdefault("MPLBACKEND", "Agg")
if mode == "absjit":
    import absjit.compat_jax
    absjit.compat_jax.install()
from IPython.core.inputtransformer2 import TransformerManager
from IPython.lib.pretty import pretty
import random, numpy
import jax  # (importing jax draws from NumPy's global generator: import it before seeding)
random.seed(0)
numpy.random.seed(0)  # cells drawing from NumPy's global generator see the same numbers
cells = json.load(open(cells_file))
tm = TransformerManager()
ns = {"__name__": "__main__"}

class Shell:
    """Just enough of get_ipython(): %timeit runs its statement once, other magics
    do nothing."""
    def run_line_magic(self, name, line, _stack_depth=1):
        if name in ("timeit", "time"):
            stmt = " ".join(w for w in line.split() if not w.startswith("-"))
            exec(compile(stmt, "<magic>", "exec"), ns)
        return None
    def run_cell_magic(self, name, line, cell):
        if name in ("timeit", "time"):
            exec(compile(cell, "<magic>", "exec"), ns)
        return None
    def system(self, *a, **k):
        return None
    getoutput = system
shell = Shell()
ns["get_ipython"] = lambda: shell

class CellTimeout(Exception):
    pass
def on_alarm(*_):
    raise CellTimeout(f"cell ran past {cell_timeout} s")
signal.signal(signal.SIGALRM, on_alarm)

def barrier():
    jax = sys.modules.get("jax")
    fn = getattr(jax, "effects_barrier", None)
    if fn is not None:
        try:
            fn()
        except Exception:
            pass

results = []
for cell in cells:
    if not cell["run"]:
        results.append(None)
        continue
    src = tm.transform_cell(cell["source"])
    buf = io.StringIO()
    shown, error, etype, mro = "", None, None, []
    signal.alarm(cell_timeout)
    try:
        with contextlib.redirect_stdout(buf):
            tree = ast.parse(src)
            last = None
            stripped = cell["source"].rstrip()
            if tree.body and isinstance(tree.body[-1], ast.Expr) and not stripped.endswith(";"):
                last = ast.Expression(tree.body.pop().value)
            exec(compile(tree, "<cell>", "exec"), ns)
            if last is not None:
                value = eval(compile(last, "<cell>", "eval"), ns)
                if value is not None:
                    shown = pretty(value)
            barrier()
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        etype = type(e).__name__
        mro = [c.__name__ for c in type(e).__mro__]
        msg = str(e).strip().splitlines()
        error = f"{etype}: {msg[0] if msg else ''}"
        if isinstance(e, ModuleNotFoundError):
            error += f" [module {e.name}]"
        traceback.print_exc()
        try:
            barrier()
        except BaseException:
            pass
    finally:
        signal.alarm(0)
    results.append({"stdout": buf.getvalue(), "shown": shown, "error": error,
                    "etype": etype, "mro": mro})
    with open(out_file, "w") as f:
        json.dump(results, f)
with open(out_file, "w") as f:
    json.dump(results, f)
'''


def run_notebook(cells, mode, timeout, cell_timeout=300):
    """Run ``cells`` in a fresh process under ``mode`` (``jax``/``absjit``)."""
    with tempfile.TemporaryDirectory() as tmp:
        cells_file = Path(tmp, "cells.json")
        out_file = Path(tmp, "out.json")
        cells_file.write_text(json.dumps(cells))
        env = dict(os.environ)
        env.setdefault("ABSJIT_TIERING", "1")
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        start = time.time()
        timed_out = False
        with tempfile.TemporaryDirectory() as cwd:  # notebooks may write files
            try:
                proc = subprocess.run(
                    [sys.executable, "-c", CHILD, mode, str(cells_file), str(out_file),
                     str(cell_timeout)],
                    cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
                stderr = proc.stderr
            except subprocess.TimeoutExpired as e:
                timed_out = True
                stderr = (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        results = json.loads(out_file.read_text()) if out_file.exists() else []
        # A cell the process never reached (timeout, crash) is an error.
        why = "notebook timed out" if timed_out else "process died"
        while len(results) < len(cells):
            i = len(results)
            results.append(None if not cells[i]["run"] else
                           {"stdout": "", "shown": "", "error": why, "etype": why})
        return results, time.time() - start, stderr


# ---------------------------------------------------------------------------- comparing

_NUM = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b")
_ADDR = re.compile(r"0x[0-9a-fA-F]+")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LITERAL = re.compile(r"((?:[-+]?[\d.]+(?:e[-+]?\d+)?|True|False|inf|nan|-inf)):"
                      r"(?:bf|f|i|u|c|bool)\d*\[\]")
_VAR_ID = re.compile(r"Var\(id=\d+\)?")
# JAX 0.10 prints a short jaxpr on one line, equations separated by "; ".
_ONE_LINE_EQN = re.compile(r";\s+(?=[a-z_]+:[a-z]+\d*\[)")
_TRACER_START = re.compile(r"Traced<|\b[A-Z]\w*Tracer(?:\(|<)")


def _fold_tracers(text: str) -> str:
    """Every tracer repr, JAX's and absjit's, becomes ``<tracer>``."""
    out, i = [], 0
    while True:
        m = _TRACER_START.search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:m.start()])
        j = m.end() - 1  # at the opening bracket
        depth, k = 0, j
        pairs = {"(": ")", "<": ">", "[": "]", "{": "}"}
        closing = {v: k for k, v in pairs.items()}
        stack = []
        while k < len(text):
            ch = text[k]
            if ch in pairs:
                stack.append(pairs[ch])
            elif ch in closing and stack and ch == stack[-1]:
                stack.pop()
                if not stack:
                    break
            k += 1
        k += 1
        # absjit's form is Traced<...>with<...>
        if text.startswith("with<", k):
            stack, k2 = [], k + 4
            while k2 < len(text):
                ch = text[k2]
                if ch == "<":
                    stack.append(">")
                elif ch == ">" and stack:
                    stack.pop()
                    if not stack:
                        break
                k2 += 1
            k = k2 + 1
        out.append("<tracer>")
        i = k


def normalise(text: str) -> str:
    text = _ANSI.sub("", text)
    text = _ADDR.sub("0x?", text)
    text = _LITERAL.sub(r"\1", text)
    text = _VAR_ID.sub("Var(id=?", text)
    text = _ONE_LINE_EQN.sub("\n", text)
    text = _fold_tracers(text)
    return text


def _tokens(text: str):
    toks, i = [], 0
    for m in _NUM.finditer(text):
        rest = re.sub(r"\s+", "", text[i:m.start()])
        if rest:
            toks.append(rest)
        toks.append(float(m.group()))
        i = m.end()
    rest = re.sub(r"\s+", "", text[i:])
    if rest:
        toks.append(rest)
    return toks


def first_difference(a: str, b: str, rtol=1e-4, atol=1e-5):
    """None when ``a`` and ``b`` agree after normalisation, else a short description."""
    ta, tb = _tokens(normalise(a)), _tokens(normalise(b))
    for x, y in zip(ta, tb):
        if isinstance(x, float) and isinstance(y, float):
            if math.isnan(x) and math.isnan(y):
                continue
            if x == y or abs(x - y) <= atol + rtol * abs(y):
                continue
        elif x == y:
            continue
        return f"{str(x)[:60]!r} vs jax {str(y)[:60]!r}"
    if len(ta) != len(tb):
        extra = (ta[len(tb):] or tb[len(ta):])[:1]
        who = "absjit" if len(ta) > len(tb) else "jax"
        return f"{who} prints more: {str(extra[0])[:60]!r}"
    return None


def compare_cell(ours, theirs, keys=("stdout", "shown"), unordered=False):
    """None when the cell matches, else the first line of the difference.

    An exception matches JAX's when it has the same type or a subclass of it (absjit's
    ``TracerIntegerConversionError`` where JAX raises ``TypeError``). With
    ``unordered``, lines of standard output are compared as a multiset.
    """
    if theirs["etype"] or ours["etype"]:
        if theirs["etype"] not in [ours["etype"]] + ours.get("mro", []):
            return f"raises {ours['error'] or 'nothing'}; jax {theirs['error'] or 'nothing'}"
    for key in keys:
        a, b = ours[key], theirs[key]
        if unordered and key == "stdout":
            a = "\n".join(sorted(a.splitlines()))
            b = "\n".join(sorted(b.splitlines()))
        diff = first_difference(a, b)
        if diff:
            return f"{key}: {diff}"
    return None


def jax_excuse(theirs):
    """A reason a cell cannot be compared because it fails under JAX itself."""
    if theirs is None or not theirs["etype"]:
        return None
    err = theirs["error"]
    if theirs["etype"] == "NameError":
        return "fails under jax (names from a skipped cell)"
    if theirs["etype"] in ("ModuleNotFoundError", "ImportError"):
        m = re.search(r"\[module ([\w.]+)\]", err)
        if m and not m.group(1).startswith("jax"):
            return f"needs a missing package ({m.group(1).split('.')[0]})"
    return None


# ---------------------------------------------------------------------------- driver

def jax_results(path, cells, timeout):
    import jax
    key = hashlib.sha256(json.dumps([jax.__version__, CHILD, cells]).encode()).hexdigest()[:20]
    cached = CACHE / f"{path.stem}-{key}.json"
    if cached.exists():
        return json.loads(cached.read_text()), 0.0
    results, secs, _ = run_notebook(cells, "jax", timeout)
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(results))
    return results, secs


def compare_notebook(path: Path, timeout: int, verbose: bool):
    name = path.stem
    if name in NOTEBOOK_SKIPS:
        return {"notebook": name, "skipped": NOTEBOOK_SKIPS[name]}
    cells = []
    for c in read_cells(path):
        reason, runs = classify(c["source"])
        cells.append({"source": c["source"], "run": runs, "reason": reason})
    theirs, t_jax = jax_results(path, cells, timeout)
    ours, t_ours, stderr = run_notebook(cells, "absjit", timeout)
    report = {"notebook": name, "cells": len(cells), "compared": 0, "matching": 0,
              "skipped": {}, "failing": [], "seconds": round(t_ours, 1)}
    unordered = False
    for i, (cell, o, t) in enumerate(zip(cells, ours, theirs)):
        # debug.print without ordered=True promises no order between its prints.
        unordered = unordered or ("debug.print" in cell["source"]
                                  and "ordered=True" not in cell["source"])
        reason = cell["reason"] or jax_excuse(t)
        if reason and not reason.startswith("plot"):
            report["skipped"][reason] = report["skipped"].get(reason, 0) + 1
            continue
        report["compared"] += 1
        keys = ("stdout",) if reason else ("stdout", "shown")
        diff = compare_cell(o, t, keys, unordered)
        if diff is None:
            report["matching"] += 1
        else:
            first = cell["source"].strip().splitlines()[0][:70] if cell["source"].strip() else ""
            report["failing"].append({"cell": i, "first_line": first, "diff": diff})
    if verbose and stderr:
        report["stderr_tail"] = stderr[-3000:]
    return report


def print_report(reports, total=True):
    total_c = total_m = 0
    for r in reports:
        if isinstance(r.get("skipped"), str):
            print(f"{r['notebook']}: skipped ({r['skipped']})")
            continue
        c, m = r["compared"], r["matching"]
        total_c += c
        total_m += m
        pct = 100.0 * m / c if c else 100.0
        skipped = ", ".join(f"{n} {k}" for k, n in sorted(r["skipped"].items()))
        print(f"{r['notebook']}: {m}/{c} match ({pct:.0f}%), {r['cells']} cells"
              + (f"; not compared: {skipped}" if skipped else "") + f"  [{r['seconds']} s]")
        for f in r["failing"]:
            print(f"    cell {f['cell']:3d} {f['first_line']!r}\n              {f['diff']}")
    pct = 100.0 * total_m / total_c if total_c else 100.0
    if total:
        print(f"\nall notebooks: {total_m}/{total_c} cells match ({pct:.1f}%)")
    return pct


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", type=Path,
                    help="notebooks, or a docs/ folder for the default set")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per notebook run")
    ap.add_argument("--json", type=Path, help="write the reports here")
    ap.add_argument("--verbose", action="store_true", help="keep absjit's stderr tail")
    args = ap.parse_args(argv)
    paths = []
    for p in args.paths:
        paths += default_set(p) if p.is_dir() else [p]
    reports = []
    for p in paths:
        r = compare_notebook(p, args.timeout, args.verbose)
        reports.append(r)
        print_report([r], total=False)
        sys.stdout.flush()
    print("\n==== summary")
    print_report(reports)
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1))


if __name__ == "__main__":
    main()
