"""Fixtures shared by the backends' tests (one folder per backend)."""
import pytest


@pytest.fixture(scope="module")
def module_cache_dir(tmp_path_factory):
    """A fresh ``ABSJIT_CACHE_DIR`` for one test module (its compiles neither read nor
    fill the user's disk cache); modules opt in with
    ``pytestmark = pytest.mark.usefixtures("module_cache_dir")``."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ABSJIT_CACHE_DIR", str(tmp_path_factory.mktemp("absjit-cache")))
    yield
    mp.undo()
