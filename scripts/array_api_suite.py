"""Run the Array API conformance suite against absjit.numpy (and jax.numpy when jax is
installed) and print the counts side by side.

Usage::

    python scripts/array_api_suite.py                      # the whole suite, both libraries
    python scripts/array_api_suite.py --only absjit        # absjit.numpy alone
    python scripts/array_api_suite.py array_api_tests/test_signatures.py  # some modules
    python scripts/array_api_suite.py --max-examples 5 --json out.json

The suite (data-apis/array-api-tests, with the 2023.12 specification it reads) is kept in
``shared/external/array-api-tests`` next to the repository, or wherever
``ARRAY_API_TESTS_DIR`` points. It is copied to a temporary directory first (it writes a
hypothesis database), then run once per library with 64-bit types on, hypothesis
derandomised and its shrinking phase off (a failing example is reported as found: the
counts are the same and a failure costs seconds instead of minutes). absjit is imported
from this checkout. The suite needs ``pytest``, ``hypothesis>=6.151``, ``ndindex`` and
``pytest-json-report``.

The last lines list the tests jax.numpy passes and absjit.numpy does not (the goal is
none).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# A pytest plugin loaded after the suite's conftest: its hypothesis profile without the
# shrink phase.
_PLUGIN = '''
import pytest
from hypothesis import Phase, settings


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    settings.register_profile(
        "array-api-no-shrink", parent=settings.get_profile("array-api-tests"),
        phases=[Phase.explicit, Phase.reuse, Phase.generate])
    settings.load_profile("array-api-no-shrink")
'''


def find_suite() -> str:
    """The suite's directory (the one holding ``array_api_tests``)."""
    candidates = [os.environ.get("ARRAY_API_TESTS_DIR", "")]
    for up in (ROOT, os.path.dirname(ROOT)):
        candidates.append(os.path.join(up, "shared", "external", "array-api-tests"))
    for c in candidates:
        if c and os.path.isdir(os.path.join(c, "array_api_tests")):
            return c
    raise SystemExit("array-api-tests not found: set ARRAY_API_TESTS_DIR to its checkout")


def missing_requirements() -> list:
    return [m for m in ("pytest", "hypothesis", "ndindex", "pytest_jsonreport")
            if importlib.util.find_spec(m) is None]


def run(module: str, workdir: str, paths, max_examples: int, timeout: float) -> dict:
    """Run the suite for ``module``; ``{nodeid: outcome}``."""
    report = os.path.join(workdir, f"report-{module}.json")
    env = dict(os.environ, ARRAY_API_TESTS_MODULE=module, ARRAY_API_TESTS_VERSION="2023.12",
               ABSJIT_ENABLE_X64="true", JAX_ENABLE_X64="true", JAX_PLATFORMS="cpu",
               PYTHONPATH=os.pathsep.join([ROOT, workdir, os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "pytest", *(paths or ["array_api_tests"]), "-q",
           f"--max-examples={max_examples}", "--derandomize", "--disable-deadline",
           "-p", "no:cacheprovider", "-p", "_array_api_no_shrink", "--json-report",
           f"--json-report-file={report}", "-W", "ignore"]
    try:
        subprocess.run(cmd, cwd=os.path.join(workdir, "array-api-tests"), env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"{module}: timed out after {timeout:.0f} s; counting what finished",
              file=sys.stderr)
    if not os.path.exists(report):
        raise SystemExit(f"{module}: the suite wrote no report (collection failed?); run "
                         f"it by hand in {workdir} to see why")
    with open(report) as f:
        data = json.load(f)
    out = {}
    for t in data.get("tests", []):
        outcome = t["outcome"]
        if outcome == "failed" and t.get("setup", {}).get("outcome") == "failed":
            outcome = "error"
        out[t["nodeid"]] = outcome
    for c in data.get("collectors", []):
        if c.get("outcome") == "failed":
            out[c["nodeid"] + "::<collection>"] = "error"
    return out


def counts(results: dict) -> dict:
    c = {"passed": 0, "failed": 0, "skipped": 0, "error": 0}
    for outcome in results.values():
        c[outcome if outcome in c else "failed"] += 1
    return c


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="suite modules or node ids (default: all)")
    ap.add_argument("--only", choices=["absjit", "jax"], help="run one library")
    ap.add_argument("--max-examples", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds per library")
    ap.add_argument("--json", help="write {library: {nodeid: outcome}} here")
    args = ap.parse_args(argv)
    missing = missing_requirements()
    if missing:
        raise SystemExit("the suite needs: pip install " + " ".join(
            {"pytest_jsonreport": "pytest-json-report"}.get(m, m) for m in missing))
    libraries = ["absjit.numpy"]
    if args.only != "absjit" and importlib.util.find_spec("jax") is not None:
        libraries.append("jax.numpy")
    if args.only == "jax":
        libraries = libraries[1:]
        if not libraries:
            raise SystemExit("jax is not installed")
    work = tempfile.mkdtemp(prefix="array-api-")
    try:
        shutil.copytree(find_suite(), os.path.join(work, "array-api-tests"))
        with open(os.path.join(work, "_array_api_no_shrink.py"), "w") as f:
            f.write(_PLUGIN)
        results = {lib: run(lib, work, args.paths, args.max_examples, args.timeout)
                   for lib in libraries}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'library':<14}{'passed':>8}{'failed':>8}{'skipped':>9}{'error':>7}")
    for lib, res in results.items():
        c = counts(res)
        print(f"{lib:<14}{c['passed']:>8}{c['failed']:>8}{c['skipped']:>9}{c['error']:>7}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    if "jax.numpy" in results:
        ours, theirs = results["absjit.numpy"], results["jax.numpy"]
        behind = sorted(n for n, o in theirs.items() if o == "passed" and ours.get(n) != "passed")
        ahead = sorted(n for n, o in ours.items() if o == "passed" and theirs.get(n) != "passed")
        print(f"\npassed by absjit.numpy only: {len(ahead)}; by jax.numpy only: {len(behind)}")
        for n in behind:
            print(f"  jax only: {n} (absjit: {ours.get(n, 'not run')})")
        return 1 if behind else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
