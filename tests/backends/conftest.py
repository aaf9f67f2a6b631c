"""``test_cuda.py`` is collected only where the cuda backend runs (a GPU, or Numba's
CUDA simulator switched on for the whole process); elsewhere ``test_cuda_simulator.py``
runs it in a subprocess under the simulator."""
import pytest

import absjit

collect_ignore = [] if "cuda" in absjit.backends() else ["test_cuda.py"]


@pytest.fixture(scope="module")
def module_cache_dir(tmp_path_factory):
    """A fresh ``ABSJIT_CACHE_DIR`` for one test module (its compiles neither read nor
    fill the user's disk cache); modules opt in with
    ``pytestmark = pytest.mark.usefixtures("module_cache_dir")``."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ABSJIT_CACHE_DIR", str(tmp_path_factory.mktemp("absjit-cache")))
    yield
    mp.undo()
