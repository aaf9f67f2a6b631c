"""A fast part of the Array API conformance suite (its signature and special-case
modules, ~20 s) against absjit.numpy, through scripts/array_api_suite.py. The whole
suite (``python scripts/array_api_suite.py``) takes minutes and compares with jax."""
from __future__ import annotations

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location(
    "array_api_suite", os.path.join(ROOT, "scripts", "array_api_suite.py"))
suite = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suite)


def test_signatures_and_special_cases(tmp_path):
    try:
        suite.find_suite()
    except SystemExit:
        pytest.skip("array-api-tests is not available here")
    if suite.missing_requirements():
        pytest.skip("the suite needs " + ", ".join(suite.missing_requirements()))
    out = tmp_path / "results.json"
    rc = suite.main(["--only", "absjit", "--json", str(out),
                     "array_api_tests/test_signatures.py",
                     "array_api_tests/test_special_cases.py"])
    import json
    results = json.loads(out.read_text())["absjit.numpy"]
    failed = sorted(n for n, o in results.items() if o not in ("passed", "skipped"))
    assert rc == 0 and len(results) > 600 and not failed, failed
