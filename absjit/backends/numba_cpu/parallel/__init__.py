"""The cpu backend's threads: a native task pool whose idle threads sleep
(:mod:`.pool`, LLVM IR compiled once per process), parallel loops as its tasks
(:mod:`.loop_kernels`), the threading layer and the load-adaptive thread counts
(:mod:`.threads`), and which BLAS computes a blocked product's blocks
(:mod:`.block_blas`, opt-in). The pool is optional for loops: with
``ABSJIT_POOL_LOOPS=0`` parallel nests run as Numba ``prange`` loops."""
