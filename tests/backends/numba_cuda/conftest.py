"""``test_cuda.py`` is collected only where the cuda backend runs (a GPU, or Numba's
CUDA simulator switched on for the whole process); elsewhere ``test_cuda_simulator.py``
runs it in a subprocess under the simulator."""
import absjit

collect_ignore = [] if "cuda" in absjit.backends() else ["test_cuda.py"]
