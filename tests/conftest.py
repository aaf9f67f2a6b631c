"""Shared test fixtures.

``mode`` parametrizes a test over every way absjit can run a function: ``eager`` (op by
op, the NumPy reference interpreter) and ``jit-<backend>`` for each available backend.
Write ``mode(f)(*args)`` instead of ``f(*args)`` to get all of them.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import absjit

settings.register_profile(
    "default", max_examples=int(os.environ.get("ABSJIT_HYPOTHESIS_EXAMPLES", "25")),
    deadline=None,
    # ``mode`` and ``rng`` are stateless per example (a transform, a seeded generator
    # only used for setup), so sharing them across generated inputs is intended.
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile("default")


def _modes():
    modes = ["eager"]
    backends = getattr(absjit, "backends", None)
    if backends is not None:
        modes += [f"jit-{name}" for name in backends()]
    return modes


@pytest.fixture(params=_modes())
def mode(request):
    """A function transform: identity for eager, ``jit(..., backend=b)`` otherwise."""
    name = request.param
    if name == "eager":
        return lambda f: f
    backend = name[len("jit-"):]
    return lambda f: absjit.jit(f, backend=backend)


@pytest.fixture(autouse=True)
def _reset_x64():
    before = absjit.config.enable_x64
    yield
    absjit.config.update("enable_x64", before)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
