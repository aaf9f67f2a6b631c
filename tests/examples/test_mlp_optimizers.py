"""``examples/mlp_optimizers.py --quick``: the loss falls and, with JAX, both runs agree."""
import importlib.util
import os

import pytest

from tests.checks import jax

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "examples",
                    "mlp_optimizers.py")


@pytest.mark.filterwarnings("ignore:absjit cpu backend:RuntimeWarning")
def test_mlp_optimizers_quick(capsys):
    spec = importlib.util.spec_from_file_location("mlp_optimizers", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # The interpret backend runs the same jitted program without Numba's cold compile
    # (~10 s here); the cpu backend is what a plain run uses and other tests cover it.
    result = module.main(["--quick", "--backend", "interpret"])
    losses = result["losses"]
    assert len(losses) == 30
    assert losses[-1] < 0.2 * losses[0]
    out = capsys.readouterr().out
    assert "training accuracy" in out
    if jax is not None:
        assert result["jax_max_diff"] is not None and result["jax_max_diff"] < 1e-4
