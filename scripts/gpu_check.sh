#!/usr/bin/env bash
# One-command validation of the cuda backend on a machine with an NVIDIA GPU.
#
#   bash scripts/gpu_check.sh [output folder]      (default: gpu_check_out/)
#
# 1. checks the NumPy pin (numba-cuda 0.30.4 fails at the first kernel compile with
#    NumPy >= 2.5: install with pip install -e '.[cuda,test]', which pins numpy<2.5);
# 2. compiles every kernel family to PTX (scripts/cuda_ptx_check.py);
# 3. runs the CUDA test module on the device (no simulator), then the op tests with
#    the jit-cuda mode switched on (ABSJIT_TEST_CUDA=1);
# 4. times the benchmark workloads against jax.jit (when jax has CUDA), a hand-written
#    numba-cuda kernel and CuPy (when installed): scripts/gpu_bench.py, figures in
#    <output folder>/gpu_bench.json.
# Every step's output goes to <output folder>/<step>.log; the exit status is non-zero
# when any step failed.
set -u
cd "$(dirname "$0")/.."
OUT="${1:-gpu_check_out}"
mkdir -p "$OUT"
unset NUMBA_ENABLE_CUDASIM OPENBLAS_CORETYPE
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export ABSJIT_CACHE_DIR="${ABSJIT_CACHE_DIR:-$(mktemp -d)}"
status=0

step() {  # step NAME COMMAND...
    local name="$1"; shift
    echo "== $name: $*"
    if "$@" > "$OUT/$name.log" 2>&1; then
        echo "   ok"
    else
        echo "   FAILED (see $OUT/$name.log)"; tail -n 20 "$OUT/$name.log"; status=1
    fi
}

nvidia-smi > "$OUT/nvidia-smi.log" 2>&1 || echo "nvidia-smi not found"
step environment python3 -c "
import numpy, absjit
from absjit.backends.numba_cuda import compat
from absjit.backends.numba_cuda import runtime
print('numpy', numpy.__version__, 'numba-cuda', compat.numba_cuda_version())
problem = compat.numba_cuda_problem()
assert problem is None, problem
assert runtime.unavailable_reason() is None, runtime.unavailable_reason()
assert not runtime.simulator()
print(runtime.device_info())
"
step ptx python3 scripts/cuda_ptx_check.py
step test_cuda python3 -m pytest -q -p no:cacheprovider tests/backends/numba_cuda/test_cuda.py
step test_ops_jit_cuda env ABSJIT_TEST_CUDA=1 python3 -m pytest -q -p no:cacheprovider \
    -k "jit-cuda" tests/ops tests/numpy
step bench python3 scripts/gpu_bench.py --json "$OUT/gpu_bench.json"
cat "$OUT/bench.log"
exit $status
