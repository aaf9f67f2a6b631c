"""Hand-written Numba functions the generated kernels call (through :mod:`..runtime`):
branch-free math that LLVM vectorises, reduction folds, allocation, Threefry, sorting
comparisons, and LAPACK/BLAS/FFT calls from compiled code. Each is compiled once per
machine and argument types (:mod:`..helper_jit`) and inlined by LLVM into its callers."""
