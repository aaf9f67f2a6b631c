"""tests/slow_variants.txt, the list of variants the slow tier holds: every entry names a
collected test, and every test function with a listed variant keeps a variant in the
default run (one in each mode, for tests that take the ``mode`` fixture); only the
whole-example group may move whole tests.

The check reads what this session collected (tests/conftest.py records it, whatever
``-m`` or ``-k`` then deselect; under xdist every worker collects every test). Modules
this session did not collect (a run of this file alone, and ``test_cuda.py``, which is
collected only where the cuda backend runs) are collected in a subprocess with Numba's
CUDA simulator on."""
from __future__ import annotations

import collections
import json
import os
import subprocess
import sys

from tests import conftest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _function(nodeid):
    return nodeid.split("[", 1)[0]


def _container(nodeid):
    return _function(nodeid).rsplit("::", 1)[0]


def _collect_elsewhere(paths, tmp_path):
    dump = tmp_path / "collected.json"
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", ABSJIT_SLOW_TIER_DUMP=str(dump),
               PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         *paths], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 5) and dump.exists(), (proc.stdout + proc.stderr)[-4000:]
    data = json.loads(dump.read_text())
    return ({k: tuple(v) for k, v in data["collected"].items()}, set(data["containers"]))


def test_the_file_is_groups_of_unique_ids_under_reasons():
    groups = conftest.read_slow_variants()
    assert groups
    seen = set()
    for header, ids in groups:
        assert header, f"ids without a reason above them: {ids[:3]}"
        for nodeid in ids:
            assert "::" in nodeid and nodeid.startswith("tests/"), nodeid
            assert nodeid not in seen, f"listed twice: {nodeid}"
            seen.add(nodeid)
    assert [h for h, _ in groups if h.startswith(conftest.WHOLE_TESTS_GROUP)], \
        "the whole-example group is named by its header"


def test_listed_variants_are_collected_tests_and_each_function_keeps_a_default_one(
        tmp_path):
    groups = conftest.read_slow_variants()
    listed = {i for _, ids in groups for i in ids}
    whole = {_function(i) for header, ids in groups
             if header.startswith(conftest.WHOLE_TESTS_GROUP) for i in ids}
    collected = dict(conftest.COLLECTED)
    containers = set(conftest.COLLECTED_CONTAINERS)
    elsewhere = sorted({_container(i).split("::")[0] for i in listed
                        if _container(i) not in containers
                        and os.path.exists(os.path.join(ROOT, i.split("::")[0]))})
    if elsewhere:
        more, more_containers = _collect_elsewhere(elsewhere, tmp_path)
        collected.update(more)
        containers |= more_containers
    problems = []
    for nodeid in sorted(listed):
        path = nodeid.split("::")[0]
        if _container(nodeid) not in containers:
            if not os.path.exists(os.path.join(ROOT, path)):
                problems.append(f"no such file: {nodeid}")
            # else: a module not collected here (test_cuda.py without numba-cuda)
        elif nodeid not in collected:
            problems.append(f"names no collected test: {nodeid}")
        elif collected[nodeid][0]:
            problems.append(f"already marked slow in its test file: {nodeid}")
    variants = collections.defaultdict(list)
    for nodeid, (slow, mode) in collected.items():
        variants[_function(nodeid)].append((nodeid, slow or nodeid in listed, mode))
    for function in sorted({_function(i) for i in listed} - whole):
        if function not in variants:
            continue  # reported above
        default_modes = {mode for _, slow, mode in variants[function] if not slow}
        if not default_modes:
            problems.append(f"no variant left in the default run: {function}")
        for mode in {mode for _, _, mode in variants[function]} - default_modes - {None}:
            problems.append(f"no {mode} variant left in the default run: {function}")
    assert not problems, "tests/slow_variants.txt:\n" + "\n".join(problems)
